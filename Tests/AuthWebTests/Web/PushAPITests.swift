import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// Input of `verifyIosClient` (and its legacy name), the dev push list, and the pair on the
/// sends (firebase-wire.md §2.15, §2.1, §2.17): every refusal in the §1.5 envelope, nothing
/// committed for a refused call.
@Suite("Push API input")
struct PushAPITests {
    static let itk = WebClient.itk
    static let legacy = "/www.googleapis.com/identitytoolkit/v3/relyingparty"
    static let bundle = "com.example.app"
    static let device = String(repeating: "0F", count: 32)

    /// The production project with its iOS app able to push.
    static func client(devMode: Bool = false) throws -> WebClient {
        var p = WebClient.productionProject()
        p.devMode = devMode
        p.iosApps[0].apns = APNsSettings(teamID: "TEAM123456", keyID: "KEYID12345", keyFile: "/keys/AuthKey.p8")
        return try WebClient(projects: [p], devMode: devMode)
    }

    static func verify(_ c: WebClient, _ json: String, bundle: String? = PushAPITests.bundle, path: String = itk + "/accounts:verifyIosClient") -> Response {
        c.post(path, json: json, headers: bundle.map { ["x-ios-bundle-identifier": $0] } ?? [:])
    }

    @Test("both names answer {receipt, suggestedTimeout: \"5\"} and commit one push each")
    func answers() throws {
        let c = try Self.client()
        for path in [Self.itk + "/accounts:verifyIosClient", Self.legacy + "/verifyClient"] {
            let r = Self.verify(c, "{\"appToken\": \"\(Self.device)\", \"isSandbox\": true}", path: path)
            #expect(r.status == 200, "\(path): \(r.text)")
            #expect(r.json?["receipt"]?.stringValue?.hasPrefix("ghir1.") == true)
            #expect(r.json?["suggestedTimeout"] == .string("5"))
        }
        #expect(try c.store.messages(project: "prod", channel: .push, limit: 10).count == 2)
    }

    @Test("refusals, each in the envelope, nothing committed", arguments: [
        ("{}", bundle, "MISSING_IOS_APP_TOKEN"),
        ("{\"appToken\": \"\"}", bundle, "MISSING_IOS_APP_TOKEN"),
        ("{\"appToken\": null}", bundle, "MISSING_IOS_APP_TOKEN"),
        ("{\"appToken\": []}", bundle, "MISSING_IOS_APP_TOKEN"),
        ("{\"appToken\": 1e300}", bundle, "INVALID_APP_CREDENTIAL : appToken is not an APNs device token (hex, 32 to 100 bytes)."),
        ("{\"appToken\": \"XYZ\"}", bundle, "INVALID_APP_CREDENTIAL : appToken is not an APNs device token (hex, 32 to 100 bytes)."),
        ("{\"appToken\": \"\(device)\"}", nil, "INVALID_APP_CREDENTIAL : The request names no registered iOS app of this project (X-Ios-Bundle-Identifier)."),
        ("{\"appToken\": \"\(device)\"}", "com.example.other", "INVALID_APP_CREDENTIAL : The request names no registered iOS app of this project (X-Ios-Bundle-Identifier)."),
        ("{\"appToken\": \"\(device)\", \"tenantId\": \"t1\"}", bundle, "UNSUPPORTED_TENANT_OPERATION : Phone sign-in is not available for tenant t1."),
    ] as [(String, String?, String)])
    func refusals(body: String, bundle: String?, message: String) throws {
        let c = try Self.client()
        expectBusinessError(Self.verify(c, body, bundle: bundle), message)
        #expect(try c.store.messages(project: "prod", channel: .push, limit: 10).isEmpty)
    }

    @Test("an app without an APNs key cannot push outside dev mode")
    func noKey() throws {
        let c = try WebClient()
        expectBusinessError(Self.verify(c, "{\"appToken\": \"\(Self.device)\"}"),
                            "INVALID_APP_CREDENTIAL : Silent pushes are not configured for this app (no APNs auth key).")
    }

    @Test("the pair from the push signs a send; a wrong or half pair is INVALID_APP_CREDENTIAL")
    func pairOnSends() throws {
        let c = try Self.client()
        #expect(Self.verify(c, "{\"appToken\": \"\(Self.device)\"}").status == 200)
        let push = try #require(try c.store.messages(project: "prod", channel: .push, limit: 10).first)
        let auth = try JSONParser().parse(push.body)["com.google.firebase.auth"]
        let receipt = try #require(auth?["receipt"]?.stringValue), secret = try #require(auth?["secret"]?.stringValue)
        let h = ["x-ios-bundle-identifier": Self.bundle]
        expectBusinessError(c.post(Self.itk + "/accounts:sendVerificationCode",
                                   json: "{\"phoneNumber\": \"+33612345678\", \"iosReceipt\": \"\(receipt)\", \"iosSecret\": \"nope\"}", headers: h),
                            "INVALID_APP_CREDENTIAL : The iOS app credential is invalid, expired or used up.")
        expectBusinessError(c.post(Self.itk + "/accounts:sendVerificationCode",
                                   json: "{\"phoneNumber\": \"+33612345678\", \"iosReceipt\": 1e300, \"iosSecret\": []}", headers: h),
                            "INVALID_APP_CREDENTIAL : Both iosReceipt and iosSecret are required.")
        let ok = c.post(Self.itk + "/accounts:sendVerificationCode",
                        json: "{\"phoneNumber\": \"+33612345678\", \"iosReceipt\": \"\(receipt)\", \"iosSecret\": \"\(secret)\", \"clientType\": \"CLIENT_TYPE_IOS\"}",
                        headers: h)
        #expect(ok.status == 200, "\(ok.text)")
        #expect(ok.json?["sessionInfo"]?.stringValue != nil)
    }

    @Test("the dev push list is dev-only and lists what the app would receive")
    func devList() throws {
        let prod = try Self.client()
        #expect(prod.request("GET", "/emulator/v1/projects/prod/pushNotifications").status == 404)
        let dev = try Self.client(devMode: true)
        #expect(Self.verify(dev, "{\"appToken\": \"\(Self.device.lowercased())\", \"isSandbox\": true}").status == 200)
        let list = dev.request("GET", "/emulator/v1/projects/prod/pushNotifications")
        #expect(list.status == 200)
        let first = try #require(list.json?["pushNotifications"]?.arrayValue?.first)
        #expect(first["deviceToken"] == .string(Self.device))
        #expect(first["bundleId"] == .string(Self.bundle))
        #expect(first["sandbox"] == .bool(true))
        #expect(first["payload"]?["aps"] == .obj(("content-available", 1)))
    }
}
