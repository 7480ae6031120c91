import AuthCrypto
import AuthEngine
import AuthStore
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// Every target, by the name `make fuzz`, the corpus folder and the command line use.
enum FuzzTargets {
    static let all: [FuzzTarget] = [
        ParserTargets.fastcgiParams, ParserTargets.fastcgiRecords, ParserTargets.form, ParserTargets.cookie,
        ParserTargets.json, ParserTargets.jsonMembers, ParserTargets.base64url, ParserTargets.phone,
        ParserTargets.continueURL, TokenTargets.jwt, TokenTargets.signedClaims, TemplateTargets.mustache,
        ConfigTargets.config, RequestTargets.request, PasskeyTargets.cbor, PasskeyTargets.webauthn, DeviceTargets.userAgent,
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// Splits fuzz bytes into text fields on `\n` (at most `count`; the last takes the rest).
func fields(_ data: UnsafeBufferPointer<UInt8>, _ count: Int) -> [String] {
    var out: [String] = []
    var rest = data[...]
    while out.count < count - 1, let nl = rest.firstIndex(of: UInt8(ascii: "\n")) {
        out.append(String(decoding: rest[..<nl], as: UTF8.self))
        rest = rest[(nl + 1)...]
    }
    out.append(String(decoding: rest, as: UTF8.self))
    while out.count < count { out.append("") }
    return out
}

/// A finding that is not a crash of the code under test (two parsers disagreeing, a round trip
/// that changes a value): stops the run as a crash would, with what differs.
func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        StandardError.write("fuzz expectation failed: \(message())\n")
        abort()
    }
}

/// A project with every kind of registered app, authorized domain and test number, so that the
/// parsers that consult a project reach their accepting paths.
let fuzzProject: ProjectSettings = {
    var p = ProjectSettings(
        id: "demo-fuzz", apiKeys: ["fuzz-key"], devMode: true, authorizedDomains: ["app.example.com", "localhost", "*.example.org"],
        iosApps: [IOSApp(bundleID: "com.example.ios", teamID: "TEAMID1234", appID: "1:42:ios:abc")],
        androidApps: [AndroidApp(packageName: "com.example.android", sha256Fingerprints: ["AA:BB"], extraSchemes: ["exampleapp"])],
        testPhoneNumbers: ["+15555550100": "123456", "+33600000001": "654321"])
    p.phone.allowedRegions = ["FR", "US", "DE", "ID"]
    p.mfa = .enabled
    return p
}()

/// `GATEHOUSE_FUZZ_VERBOSE=1`: targets say what an input did (for replaying seeds and crashes).
let verbose = getenv("GATEHOUSE_FUZZ_VERBOSE") != nil
