import AuthEngine
import AuthStore
@testable import AuthWeb
import HTTP
import JSONValue
import TestSupport

/// Drives `WebApp.handle` in process: the real route table, guards and handlers over a real
/// SQLite store in memory, with a clock and randomness the test controls. No FastCGI, no nginx.
final class WebClient {
    let app: WebApp
    let store: SQLStore
    let clock: FixedClock

    /// A production project `prod` (API key `key-prod`, test number +15555550100 → 123456) unless
    /// `projects` are given.
    init(projects: [ProjectSettings]? = nil, devMode: Bool = false, publicOrigin: String? = "https://auth.example.com",
         adminToken: String? = "admin-secret", configure: (inout WebSettings) -> Void = { _ in },
         metricsExposition: (@Sendable () -> [UInt8])? = nil) throws {
        clock = FixedClock()
        store = try SQLStore(path: ":memory:")
        var settings = WebSettings(projects: projects ?? [WebClient.productionProject()], devMode: devMode,
                                   publicOrigin: publicOrigin, adminToken: adminToken, version: "test")
        configure(&settings)
        app = WebApp(settings: settings, services: AuthServices(clock: clock, random: SeededRandom()),
                     templates: try Templates(directory: Templates.bundledDirectory ?? ""), metricsExposition: metricsExposition)
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
