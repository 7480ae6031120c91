import AuthEngine
import AuthStore
@testable import AuthWeb
import HTTP

/// Drives `WebApp.handle` in process: the real route table, guards and handlers over a real
/// SQLite store in memory, with a clock and randomness the test controls. No FastCGI, no nginx.
final class WebClient {
    let app: WebApp
    let store: SQLiteStore
    let clock: TestClock

    /// A production project `prod` (API key `key-prod`, test number +15555550100 → 123456) unless
    /// `projects` are given.
    init(projects: [ProjectSettings]? = nil, devMode: Bool = false, publicOrigin: String? = "https://auth.example.com",
         adminToken: String? = "admin-secret") throws {
        clock = TestClock()
        store = try SQLiteStore(path: ":memory:")
        let settings = WebSettings(projects: projects ?? [WebClient.productionProject()], devMode: devMode,
                                   publicOrigin: publicOrigin, adminToken: adminToken, version: "test")
        app = WebApp(settings: settings, clock: clock, random: TestRandom(), templates: try Templates(directory: Templates.bundledDirectory ?? ""))
        try app.keyRing.ensureKey(store: store, random: app.random)
    }

    static func productionProject() -> ProjectSettings {
        var p = ProjectSettings(id: "prod", apiKeys: ["key-prod"], authorizedDomains: ["app.example.com"],
                                iosApps: [IOSApp(bundleID: "com.example.app", teamID: "TEAM123456")],
                                testPhoneNumbers: ["+15555550100": "123456"], smsOriginDomain: "auth.example.com")
        p.phone.allowedRegions = ["US", "FR", "DE"]
        return p
    }

    func request(_ method: String, _ path: String, query: String = "", body: [UInt8] = [], headers: [String: String] = [:],
                 remoteAddress: String = "203.0.113.7") -> Response {
        app.handle(Request(method: method, path: path, rawQuery: query, headers: headers, body: body, remoteAddress: remoteAddress,
                           isHTTPS: true, host: "auth.example.com", requestID: "test"), store: store)
    }

    /// POST of a JSON body given as text (so tests can send what no encoder would write).
    func post(_ path: String, json: String, key: String? = "key-prod", headers: [String: String] = [:],
              remoteAddress: String = "203.0.113.7") -> Response {
        var h = headers
        h["content-type"] = "application/json"
        return request("POST", path, query: key.map { "key=" + $0 } ?? "", body: Array(json.utf8), headers: h, remoteAddress: remoteAddress)
    }

    static let itk = "/identitytoolkit.googleapis.com/v1"
}

extension Response {
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSON? { try? JSONParser().parse(body) }
    /// `error.message` of a §1.5 envelope.
    var errorMessage: String? { json?["error"]?["message"]?.stringValue }
}

/// A clock the test moves by hand.
final class TestClock: Clock, @unchecked Sendable {
    private var current: Millis = 1_767_225_600_000
    func now() -> Millis { current }
    func advance(seconds: Int64) { current += seconds * 1000 }
}

/// Deterministic randomness (xorshift64*), so a failing test replays exactly.
final class TestRandom: RandomSource, @unchecked Sendable {
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            let v = state &* 0x2545_F491_4F6C_DD1D
            withUnsafeBytes(of: v) { out.append(contentsOf: $0.prefix(count - out.count)) }
        }
        return out
    }
}
