// swift-tools-version:6.1
import PackageDescription

/// Gatehouse: passwordless sign-in behind nginx (FastCGI responder, SQLite store, OpenSSL crypto).
/// Every target: Swift 6 language mode (data-race safety checked by the compiler), existentials
/// spelled `any`, and imports internal unless a public declaration needs them (`public import`).
let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("InternalImportsByDefault")]
/// Linux: lld with packed relative relocations (DT_RELR, glibc >= 2.36), so the table of ~77,000
/// relative relocations read at every start shrinks from 1.8 MB to 15 KB; and the functions that
/// start-up and the requests run (scripts/symbol-order.txt, written by `bench/profile order`)
/// placed together, so a process maps ~6 MB of code instead of ~10 MB. Names missing from the
/// build are ignored: a stale list only places less.
#if os(Linux)
/// Release builds link GCC's static libstdc++ (scripts/static-cxx/libstdc++.so is a linker script
/// naming libstdc++.a, found before the shared library): the static Swift runtime is the only C++
/// user at start, and a CGI process no longer maps, relocates and looks up the symbols of
/// libstdc++.so.6. libphonenumber, opened on first use, still brings the shared one for itself.
let staticCxx: LinkerSetting = .unsafeFlags(
    ["-L" + String(#filePath.dropLast("Package.swift".count)) + "scripts/static-cxx"], .when(configuration: .release))
let symbolOrder = String(#filePath.dropLast("Package.swift".count)) + "scripts/symbol-order.txt"
let startupLinkerFlags: [LinkerSetting] = [.unsafeFlags([
    "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--symbol-ordering-file=" + symbolOrder, "-Xlinker", "--no-warn-symbol-ordering",
]), staticCxx]
#else
let startupLinkerFlags: [LinkerSetting] = []
#endif

/// SQLite and libfcgi are linked from Debian's static archives (libsqlite3-dev, libfcgi-dev) on
/// Linux: a CGI process then neither maps, relocates nor looks up symbols in two more shared
/// libraries. OpenSSL stays shared so that its security updates reach the binary without a build.
func staticLibrary(_ name: String) -> [LinkerSetting] {
    [.linkedLibrary(":lib\(name).a", .when(platforms: [.linux])), .linkedLibrary(name, .when(platforms: [.macOS]))]
}

let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gatehouse", targets: ["gatehouse"]),
    ],
    targets: [
        // Thin wrappers over Debian's C libraries; each imported by exactly one Swift target.
        .systemLibrary(name: "CFastCGI", path: "Sources/CFastCGI"),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL"),
        // libcurl is loaded on first use (dlopen), not linked: only its header is needed to build.
        .target(name: "CCurl", path: "Sources/CCurl"),
        .target(name: "CPostgreSQL", path: "Sources/CPostgreSQL"),
        // libqrencode is loaded by the first QR code drawn (dlopen of libqrencode.so.4), not
        // linked: only the account page's authenticator enrolment draws one, so no other request
        // maps it, and a host without it still serves that page (as text). Its header is needed.
        .target(name: "CQRencode", path: "Sources/CQRencode"),
        // The C++ shim calls libphonenumber through pointers found with dlsym once it is first
        // needed (dlopen of libphonenumber.so.8), so it links only the C++ runtime.
        .target(
            name: "CPhoneNumber",
            path: "Sources/CPhoneNumber",
            cxxSettings: [.unsafeFlags(["-std=c++17"])],
            linkerSettings: [.linkedLibrary("stdc++")]
        ),

        // The one lock type (and its condition variable), for every target.
        .target(name: "Locking", swiftSettings: swift6),
        .target(name: "JSONValue", swiftSettings: swift6),
        // Percent-encoding (RFC 3986), the one encoder and decoder of URL text for every target.
        .target(name: "TextCoding", swiftSettings: swift6),
        .target(name: "HTTP", dependencies: ["JSONValue", "TextCoding"], swiftSettings: swift6),
        .target(name: "FastCGI", dependencies: ["HTTP", "TextCoding", "CFastCGI", "Locking"], swiftSettings: swift6, linkerSettings: staticLibrary("fcgi")),
        .target(name: "AuthCrypto", dependencies: ["COpenSSL", "Locking"], swiftSettings: swift6),
        .target(name: "AuthEngine", dependencies: ["AuthCrypto", "JSONValue", "TextCoding", "CPhoneNumber", "Locking"], swiftSettings: swift6),
        .target(name: "AuthStore", dependencies: ["AuthEngine", "JSONValue", "CSQLite", "CPostgreSQL", "Locking"], swiftSettings: swift6,
                linkerSettings: staticLibrary("sqlite3")),
        .target(name: "Delivery", dependencies: ["AuthEngine", "AuthCrypto", "JSONValue", "TextCoding", "CCurl", "Locking"], swiftSettings: swift6),
        // Resources/ (templates, locales, region data) is compiled into the binary by the
        // EmbedResources plugin rather than shipped as a SwiftPM resource bundle, whose generated
        // accessor would import Foundation (and with it CoreFoundation and ICU) into the build.
        .target(
            name: "AuthWeb",
            dependencies: ["HTTP", "JSONValue", "TextCoding", "AuthCrypto", "AuthEngine", "CQRencode", "Locking"],
            exclude: ["Resources"],
            swiftSettings: swift6,
            plugins: ["EmbedResources"]
        ),
        .executableTarget(name: "embed-resources", path: "Plugins/EmbedResourcesTool"),
        .plugin(name: "EmbedResources", capability: .buildTool(), dependencies: ["embed-resources"]),
        .executableTarget(
            name: "gatehouse",
            dependencies: [
                "HTTP", "JSONValue", "FastCGI", "AuthCrypto", "AuthEngine", "AuthStore", "Delivery", "AuthWeb", "Locking",
            ],
            swiftSettings: swift6,
            linkerSettings: startupLinkerFlags
        ),

        // Fuzzing (scripts/fuzz.sh, RELIABILITY.md): one program holding every libFuzzer target.
        // Built with -sanitize=fuzzer,address it fuzzes; built plainly (as `swift build` does) it
        // replays inputs, so the targets compile with the rest and a crash reproduces anywhere.
        .target(name: "CFuzzDriver", path: "Fuzz/Driver"),
        .executableTarget(
            name: "gatehouse-fuzz",
            dependencies: ["CFuzzDriver", "HTTP", "FastCGI", "JSONValue", "TextCoding", "AuthCrypto", "AuthEngine", "AuthStore", "AuthWeb", "Delivery",
                           "TestSupport"],
            path: "Fuzz/Targets",
            swiftSettings: swift6
        ),

        // Test doubles shared by the test targets and the fuzz program (a fixed clock, seeded randomness).
        .target(name: "TestSupport", dependencies: ["AuthEngine", "AuthCrypto", "Locking"], path: "Tests/TestSupport", swiftSettings: swift6),
        .testTarget(name: "JSONValueTests", dependencies: ["JSONValue"], swiftSettings: swift6),
        .testTarget(name: "FastCGITests", dependencies: ["Locking", "FastCGI", "HTTP", "TestSupport"], swiftSettings: swift6),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "JSONValue", "TextCoding"], swiftSettings: swift6),
        .testTarget(name: "AuthCryptoTests", dependencies: ["AuthCrypto", "TestSupport"], swiftSettings: swift6),
        .testTarget(name: "AuthEngineTests", dependencies: ["Locking", "AuthEngine", "AuthCrypto", "AuthStore", "JSONValue", "TestSupport"], swiftSettings: swift6),
        .testTarget(name: "AuthStoreTests", dependencies: ["Locking", "AuthStore", "AuthEngine", "AuthCrypto"], exclude: ["Fixtures"], swiftSettings: swift6),
        .testTarget(name: "DeliveryTests", dependencies: ["Locking", "Delivery", "AuthStore", "AuthEngine", "JSONValue", "TestSupport"], swiftSettings: swift6),
        .testTarget(name: "GatehouseTests", dependencies: ["gatehouse", "AuthEngine", "JSONValue"], swiftSettings: swift6),
        .testTarget(name: "AuthWebTests", dependencies: ["Locking", "AuthWeb", "HTTP", "JSONValue", "AuthEngine", "AuthStore", "TestSupport"], swiftSettings: swift6),
    ],
    cxxLanguageStandard: .cxx17
)
