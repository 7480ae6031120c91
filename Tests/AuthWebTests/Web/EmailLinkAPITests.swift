import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// Input validation of the email-link endpoints: `accounts:sendOobCode`, `signInWithEmailLink`,
/// `createAuthUri`, `resetPassword` (firebase-wire.md §2.3–§2.5, §2.16), on the dev project as
/// the integration tests use it.
@Suite("Email link API input")
struct EmailLinkAPITests {
    static let itk = WebClient.itk

    static func client() throws -> WebClient { try WebClient(projects: [ProjectSettings.devDefault()], devMode: true) }

    /// A JSON object from `fields` (raw JSON texts) with `changes` applied: a value replaces or
    /// adds its field, nil removes it.
    static func body(_ fields: [(String, String)], _ changes: [String: String?]) -> String {
        var out = fields.filter { changes[$0.0] == nil }
        for (k, v) in changes.sorted(by: { $0.key < $1.key }) { if let v { out.append((k, v)) } }
        return "{" + out.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
    }

    static let sendFields = [("requestType", "\"EMAIL_SIGNIN\""), ("email", "\"ana@example.com\""), ("continueUrl", "\"http://localhost/x\"")]

    @Test("sendOobCode: each malformed field gets its wire error", arguments: [
        (["requestType": "null"], "MISSING_REQ_TYPE"),
        (["requestType": nil], "MISSING_REQ_TYPE"),
        (["requestType": "\"OOB_REQ_TYPE_UNSPECIFIED\""], "MISSING_REQ_TYPE"),
        (["requestType": "0"], "MISSING_REQ_TYPE"),
        (["requestType": "\"PASSWORD_RESET\""], "PASSWORD_LOGIN_DISABLED"),
        (["requestType": "\"VERIFY_EMAIL\""], "INVALID_ID_TOKEN"),
        (["email": nil], "MISSING_EMAIL"),
        (["email": "null"], "MISSING_EMAIL"),
        (["email": "[]"], "MISSING_EMAIL"),
        (["email": "{}"], "MISSING_EMAIL"),
        (["email": "\"\""], "MISSING_EMAIL"),
        (["email": "\"not-an-email\""], "INVALID_EMAIL"),
        (["email": "1e300"], "INVALID_EMAIL"),
        (["email": "-1e19"], "INVALID_EMAIL"),
        (["email": "true"], "INVALID_EMAIL"),
        (["continueUrl": "\"not a url\""], "INVALID_CONTINUE_URI : The continue URL must be an absolute URL with a scheme and a host."),
        (["continueUrl": "1e300"], "INVALID_CONTINUE_URI : The continue URL must be an absolute URL with a scheme and a host."),
        (["continueUrl": "\"https://evil.example.net/x\""], "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project"),
        (["continueUrl": "null", "canHandleCodeInApp": "true"], "MISSING_CONTINUE_URI"),
        (["linkDomain": "\"evil.example.net\""], "INVALID_HOSTING_LINK_DOMAIN"),
        (["dynamicLinkDomain": "\"x.page.link\""], "INVALID_DYNAMIC_LINK_DOMAIN"),
        (["iOSAppStoreId": "\"123\""], "MISSING_IOS_BUNDLE_ID"),
        (["androidInstallApp": "true"], "MISSING_ANDROID_PACKAGE_NAME"),
        (["returnOobLink": "true"], "INSUFFICIENT_PERMISSION"),
        (["targetProjectId": "\"demo-gatehouse\""], "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id."),
        (["tenantId": "\"t1\""], "UNSUPPORTED_TENANT_OPERATION"),
    ] as [([String: String?], String)])
    func sendErrors(changes: [String: String?], message: String) throws {
        expectBusinessError(try Self.client().post(Self.itk + "/accounts:sendOobCode", json: Self.body(Self.sendFields, changes), key: "any"), message)
    }

    @Test("sendOobCode: a requestType outside the enum, by name or index, is INVALID_ARGUMENT", arguments: [
        ("\"NOT_A_TYPE\"", "\"NOT_A_TYPE\""), ("99", "99"), ("-1", "-1"), ("1.5", "1.5"), ("1e300", "1e+300"), ("-1e19", "-1e+19"),
        ("[]", "[]"), ("{}", "{}"), ("true", "true"),
    ])
    func sendBadRequestType(raw: String, shown: String) throws {
        let body = Self.body(Self.sendFields, ["requestType": raw])
        expectInvalidArgument(try Self.client().post(Self.itk + "/accounts:sendOobCode", json: body, key: "any"),
                              "INVALID_ARGUMENT : Invalid value at 'request_type', \(shown)")
    }

    @Test("sendOobCode: a requestType index and snake_case keys are accepted (§1.3 rules 1, 3)")
    func sendAccepted() throws {
        let c = try Self.client()
        let r = c.post(Self.itk + "/accounts:sendOobCode", json: "{\"request_type\": 6, \"email\": \"Ana@Example.com\", \"continue_url\": \"http://localhost/x\"}",
                       key: "any")
        #expect(r.status == 200, "\(r.text)")
        #expect(r.json?["email"]?.stringValue == "ana@example.com")
    }

    @Test("sendOobCode: the admin variant takes its project from the path")
    func sendAdmin() throws {
        let c = try Self.client()
        let path = Self.itk + "/projects/demo-gatehouse/accounts:sendOobCode"
        let r = c.request("POST", path, body: Array(Self.body(Self.sendFields, ["returnOobLink": "true"]).utf8),
                          headers: ["content-type": "application/json", "authorization": "Bearer owner"])
        #expect(r.status == 200, "\(r.text)")
        #expect(r.json?["oobLink"]?.stringValue?.isEmpty == false)
        let unknown = c.request("POST", Self.itk + "/projects/demo-gatehouse/accounts:sendOobCode",
                                body: Array(Self.body(Self.sendFields, ["targetProjectId": "\"nope\""]).utf8),
                                headers: ["content-type": "application/json", "authorization": "Bearer owner"])
        expectBusinessError(unknown, "CONFIGURATION_NOT_FOUND")
    }

    @Test("signInWithEmailLink: missing or malformed email and code", arguments: [
        ("{}", "MISSING_EMAIL"),
        ("{\"oobCode\": \"c\"}", "MISSING_EMAIL"),
        ("{\"email\": [], \"oobCode\": \"c\"}", "MISSING_EMAIL"),
        ("{\"email\": \"ana@example.com\"}", "MISSING_OOB_CODE"),
        ("{\"email\": \"ana@example.com\", \"oobCode\": null}", "MISSING_OOB_CODE"),
        ("{\"email\": \"ana@example.com\", \"oobCode\": {}}", "MISSING_OOB_CODE"),
        ("{\"email\": \"ana@example.com\", \"oobCode\": \"unknown\"}", "INVALID_OOB_CODE"),
        ("{\"email\": \"ana@example.com\", \"oobCode\": 1e300}", "INVALID_OOB_CODE"),
        ("{\"email\": \"ana@example.com\", \"oobCode\": -1e19}", "INVALID_OOB_CODE"),
        ("{\"email\": \"ana@example.com\", \"oobCode\": \"c\", \"tenantId\": \"t\"}", "UNSUPPORTED_TENANT_OPERATION"),
    ])
    func signInErrors(body: String, message: String) throws {
        expectBusinessError(try Self.client().post(Self.itk + "/accounts:signInWithEmailLink", json: body, key: "any"), message)
    }

    @Test("signInWithEmailLink: a real code for another address is INVALID_EMAIL with the reason")
    func signInOtherAddress() throws {
        let c = try Self.client()
        let sent = c.request("POST", Self.itk + "/projects/demo-gatehouse/accounts:sendOobCode",
                             body: Array(Self.body(Self.sendFields, ["returnOobLink": "true"]).utf8),
                             headers: ["content-type": "application/json", "authorization": "Bearer owner"])
        let code = try #require(sent.json?["oobCode"]?.stringValue)
        expectBusinessError(c.post(Self.itk + "/accounts:signInWithEmailLink", json: "{\"email\": \"bo@example.com\", \"oobCode\": \"\(code)\"}", key: "any"),
                            "INVALID_EMAIL : The email provided does not match the sign-in email address.")
        let ok = c.post(Self.itk + "/accounts:signInWithEmailLink", json: "{\"email\": \"ana@example.com\", \"oobCode\": \"\(code)\"}", key: "any")
        #expect(ok.status == 200, "\(ok.text)")
        expectBusinessError(c.post(Self.itk + "/accounts:signInWithEmailLink", json: "{\"email\": \"ana@example.com\", \"oobCode\": \"\(code)\"}", key: "any"),
                            "INVALID_OOB_CODE")
    }

    @Test("createAuthUri: missing and malformed identifier and continue URI", arguments: [
        ("{}", "MISSING_IDENTIFIER"),
        ("{\"continueUri\": \"http://localhost/\"}", "MISSING_IDENTIFIER"),
        ("{\"identifier\": [], \"continueUri\": \"http://localhost/\"}", "MISSING_IDENTIFIER"),
        ("{\"identifier\": \"a@example.com\"}", "MISSING_CONTINUE_URI"),
        ("{\"identifier\": \"a@example.com\", \"continueUri\": null}", "MISSING_CONTINUE_URI"),
        ("{\"identifier\": \"+15555550100\", \"continueUri\": \"http://localhost/\"}", "INVALID_IDENTIFIER"),
        ("{\"identifier\": 1e300, \"continueUri\": \"http://localhost/\"}", "INVALID_IDENTIFIER"),
        ("{\"identifier\": -1e19, \"continueUri\": \"http://localhost/\"}", "INVALID_IDENTIFIER"),
        ("{\"identifier\": \"a@example.com\", \"continueUri\": \"nope\"}", "INVALID_CONTINUE_URI"),
        ("{\"identifier\": \"a@example.com\", \"continueUri\": 1e300}", "INVALID_CONTINUE_URI"),
    ])
    func createAuthUriErrors(body: String, message: String) throws {
        expectBusinessError(try Self.client().post(Self.itk + "/accounts:createAuthUri", json: body, key: "any"), message)
    }

    @Test("createAuthUri: an identity provider is 501 NOT_IMPLEMENTED")
    func createAuthUriProvider() throws {
        let r = try Self.client().post(Self.itk + "/accounts:createAuthUri", json: "{\"providerId\": \"google.com\"}", key: "any")
        expectEnvelope(r, 501, "NOT_IMPLEMENTED : Sign-in with identity providers is not supported.", reason: "unimplemented",
                       canonical: "UNIMPLEMENTED")
    }

    @Test("resetPassword: only inspects codes", arguments: [
        ("{}", "MISSING_OOB_CODE"),
        ("{\"oobCode\": \"\"}", "MISSING_OOB_CODE"),
        ("{\"oobCode\": []}", "MISSING_OOB_CODE"),
        ("{\"oobCode\": \"nope\"}", "INVALID_OOB_CODE"),
        ("{\"oobCode\": 1e300}", "INVALID_OOB_CODE"),
        ("{\"oobCode\": \"nope\", \"newPassword\": \"secret123\"}", "PASSWORD_LOGIN_DISABLED"),
    ])
    func resetPasswordErrors(body: String, message: String) throws {
        expectBusinessError(try Self.client().post(Self.itk + "/accounts:resetPassword", json: body, key: "any"), message)
    }

    @Test("the legacy v3 paths validate the same way")
    func legacyPaths() throws {
        let c = try Self.client()
        let legacy = "/www.googleapis.com/identitytoolkit/v3/relyingparty"
        expectBusinessError(c.post(legacy + "/getOobConfirmationCode", json: "{}", key: "any"), "MISSING_REQ_TYPE")
        expectBusinessError(c.post(legacy + "/emailLinkSignin", json: "{}", key: "any"), "MISSING_EMAIL")
        expectBusinessError(c.post(legacy + "/createAuthUri", json: "{}", key: "any"), "MISSING_IDENTIFIER")
        expectBusinessError(c.post(legacy + "/resetPassword", json: "{}", key: "any"), "MISSING_OOB_CODE")
    }
}
