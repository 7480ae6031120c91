import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// The route guards (`Guards.check`) and the router's own answers, through `WebApp.handle`:
/// what a client without the right credential, method or body gets (firebase-wire.md §1.2, §1.3).
@Suite("Web guards")
struct GuardTests {
    static let itk = WebClient.itk
    static let adminBase = WebClient.itk + "/projects/prod"
    static let missingKey = "The request is missing a valid API key."
    static let badKey = "API key not valid. Please pass a valid API key."
    static let badCredentials = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."

    /// A POST with a JSON body and any headers, without the `key` parameter.
    static func post(_ c: WebClient, _ path: String, _ json: String = "{}", query: String = "", headers: [String: String] = [:]) -> Response {
        var h = headers
        h["content-type"] = "application/json"
        return c.request("POST", path, query: query, body: Array(json.utf8), headers: h)
    }

    // MARK: API key

    @Test("no API key, or an empty one, is 403 PERMISSION_DENIED")
    func missingKey() throws {
        let c = try WebClient()
        expectEnvelope(c.post(Self.itk + "/accounts:lookup", json: "{}", key: nil), 403, Self.missingKey, reason: "forbidden", canonical: "PERMISSION_DENIED")
        expectEnvelope(c.post(Self.itk + "/accounts:lookup", json: "{}", key: ""), 403, Self.missingKey, reason: "forbidden", canonical: "PERMISSION_DENIED")
        expectEnvelope(c.request("GET", Self.itk + "/projects"), 403, Self.missingKey, reason: "forbidden", canonical: "PERMISSION_DENIED")
        expectEnvelope(c.request("GET", Self.itk + "/projects", headers: ["x-goog-api-key": ""]), 403, Self.missingKey, reason: "forbidden",
                       canonical: "PERMISSION_DENIED")
    }

    @Test("an API key no project has is 400 keyInvalid, as a query parameter or a header")
    func unknownKey() throws {
        let c = try WebClient()
        expectEnvelope(c.post(Self.itk + "/accounts:lookup", json: "{}", key: "key-other"), 400, Self.badKey, reason: "keyInvalid",
                       canonical: "INVALID_ARGUMENT")
        expectEnvelope(c.request("GET", Self.itk + "/projects", headers: ["x-goog-api-key": "key-prod "]), 400, Self.badKey, reason: "keyInvalid",
                       canonical: "INVALID_ARGUMENT")
        // A prefix of a real key is not the key.
        expectEnvelope(c.request("GET", Self.itk + "/projects", query: "key=key-pro"), 400, Self.badKey, reason: "keyInvalid",
                       canonical: "INVALID_ARGUMENT")
    }

    @Test("a valid key selects its project, as a query parameter or a header")
    func validKey() throws {
        var other = ProjectSettings(id: "other", apiKeys: ["key-other"], authorizedDomains: ["other.example.com"])
        other.phone.allowedRegions = ["US"]
        let c = try WebClient(projects: [WebClient.productionProject(), other])
        let byQuery = c.request("GET", Self.itk + "/projects", query: "key=key-other")
        #expect(byQuery.status == 200)
        #expect(byQuery.json?["authorizedDomains"] == .array([.string("other.example.com")]))
        let byHeader = c.request("GET", Self.itk + "/projects", headers: ["x-goog-api-key": "key-prod"])
        #expect(byHeader.status == 200)
        #expect(byHeader.json?["authorizedDomains"] == .array([.string("app.example.com")]))
    }

    @Test("dev mode accepts any non-empty key for the keyless dev project, and still refuses a missing one")
    func devModeAnyKey() throws {
        let c = try WebClient(projects: [ProjectSettings.devDefault()], devMode: true)
        #expect(c.request("GET", Self.itk + "/projects", query: "key=anything-at-all").status == 200)
        #expect(c.request("GET", Self.itk + "/projects", headers: ["x-goog-api-key": "fake-api-key"]).status == 200)
        expectEnvelope(c.request("GET", Self.itk + "/projects"), 403, Self.missingKey, reason: "forbidden", canonical: "PERMISSION_DENIED")
        // A production project with keys never takes just any key, even in dev mode.
        let mixed = try WebClient(projects: [WebClient.productionProject()], devMode: true)
        expectEnvelope(mixed.request("GET", Self.itk + "/projects", query: "key=anything"), 400, Self.badKey, reason: "keyInvalid",
                       canonical: "INVALID_ARGUMENT")
    }

    // MARK: Admin bearer token

    @Test("admin routes refuse a missing, wrong or non-Bearer credential with 401 UNAUTHENTICATED")
    func adminRefused() throws {
        let c = try WebClient()
        for headers: [String: String] in [[:], ["authorization": "Bearer wrong"], ["authorization": "Bearer admin-secre"],
                                         ["authorization": "Bearer owner"], ["authorization": "Basic YWRtaW4tc2VjcmV0"],
                                         ["authorization": "Bearer"]] {
            expectEnvelope(Self.post(c, Self.adminBase + "/accounts:lookup", headers: headers), 401, Self.badCredentials, reason: "authError",
                           canonical: "UNAUTHENTICATED")
        }
        // An API key is no admin credential.
        expectEnvelope(Self.post(c, Self.adminBase + "/accounts:lookup", query: "key=key-prod"), 401, Self.badCredentials, reason: "authError",
                       canonical: "UNAUTHENTICATED")
    }

    @Test("the configured admin token opens admin routes (the scheme in any case)")
    func adminAccepted() throws {
        let c = try WebClient()
        for auth in ["Bearer admin-secret", "bearer admin-secret", "BEARER admin-secret "] {
            let r = Self.post(c, Self.adminBase + "/accounts:lookup", headers: ["authorization": auth])
            #expect(r.status == 200, "\(auth): \(r.text)")
            #expect(r.json?["kind"]?.stringValue == "identitytoolkit#GetAccountInfoResponse")
        }
    }

    @Test("without a configured token no bearer value is admin in production")
    func noAdminToken() throws {
        let c = try WebClient(adminToken: nil)
        for auth in ["Bearer ", "Bearer admin-secret", "Bearer owner"] {
            expectEnvelope(Self.post(c, Self.adminBase + "/accounts:lookup", headers: ["authorization": auth]), 401, Self.badCredentials,
                           reason: "authError", canonical: "UNAUTHENTICATED")
        }
    }

    @Test("dev mode takes Bearer owner, in any case, as the Admin SDK sends it")
    func devOwner() throws {
        let c = try WebClient(projects: [ProjectSettings.devDefault()], devMode: true, adminToken: nil)
        let path = Self.itk + "/projects/demo-gatehouse/accounts:lookup"
        #expect(Self.post(c, path, headers: ["authorization": "Bearer owner"]).status == 200)
        #expect(Self.post(c, path, headers: ["authorization": "bearer OWNER"]).status == 200)
        expectEnvelope(Self.post(c, path, headers: ["authorization": "Bearer someone"]), 401, Self.badCredentials, reason: "authError",
                       canonical: "UNAUTHENTICATED")
    }

    /// The v1 and legacy v3 names of the routes that used to take an admin bearer besides a key,
    /// each with a body an admin alone could have used.
    static let userPaths: [(String, String)] = [
        ("/accounts:sendOobCode", #"{"requestType":"EMAIL_SIGNIN","email":"ana@example.com","returnOobLink":true}"#),
        ("/accounts:lookup", #"{"localId":["u1"]}"#),
        ("/accounts:update", #"{"localId":"u1","disableUser":true}"#),
        ("/accounts:delete", #"{"localId":"u1"}"#),
        ("/accounts:signUp", #"{"localId":"u1"}"#),
    ]
    static let legacyNames = ["/accounts:sendOobCode": "/getOobConfirmationCode", "/accounts:lookup": "/getAccountInfo",
                              "/accounts:update": "/setAccountInfo", "/accounts:delete": "/deleteAccount", "/accounts:signUp": "/signupNewUser"]

    @Test("admin power is only on the Admin SDK paths, the ones the shipped nginx keeps internal")
    func adminOnlyUnderProjects() {
        for route in RouteTable.build().routes where route.handler.guards.contains(.admin) {
            #expect(route.pattern.description.hasPrefix(RouteTable.admin), "\(route.method) \(route.pattern)")
            #expect(route.handler.guards.contains(.pathProject), "\(route.method) \(route.pattern)")
        }
    }

    @Test("off the Admin SDK paths a bearer, right or wrong, is as if absent: a key is needed, the caller is a user")
    func bearerIgnoredOffAdminPaths() throws {
        let c = try WebClient()
        _ = Self.post(c, Self.adminBase + "/accounts", #"{"localId":"u1","email":"u1@example.com"}"#,
                      headers: ["authorization": "Bearer admin-secret"])
        let bearers = ["Bearer admin-secret", "Bearer wrong", "Bearer owner"]
        for (name, body) in Self.userPaths {
            for path in [Self.itk + name, RouteTable.legacy + Self.legacyNames[name]!] {
                for query in ["", "key=key-prod"] {
                    let without = Self.post(c, path, body, query: query)
                    #expect(without.status == (query.isEmpty ? 403 : 400), "\(path) \(query): \(without.text)")
                    for auth in bearers {
                        let with = Self.post(c, path, body, query: query, headers: ["authorization": auth])
                        #expect(with.status == without.status && with.text == without.text, "\(path) \(query) \(auth): \(with.text)")
                    }
                }
            }
        }
        // The account the admin bodies named is still there and enabled.
        let found = Self.post(c, Self.adminBase + "/accounts:lookup", #"{"localId":["u1"]}"#, headers: ["authorization": "Bearer admin-secret"])
        let user = try #require(found.json?["users"]?.arrayValue?.first, "\(found.text)")
        #expect(user["localId"]?.stringValue == "u1")
        #expect(user["disabled"] != .bool(true))
    }

    @Test("dev mode's Bearer owner is admin only on the Admin SDK paths too")
    func devOwnerOffAdminPaths() throws {
        let c = try WebClient(projects: [ProjectSettings.devDefault()], devMode: true, adminToken: nil)
        let body = #"{"requestType":"EMAIL_SIGNIN","email":"ana@example.com","returnOobLink":true}"#
        let owner = ["authorization": "Bearer owner"]
        expectEnvelope(Self.post(c, Self.itk + "/accounts:sendOobCode", body, headers: owner), 403, Self.missingKey, reason: "forbidden",
                       canonical: "PERMISSION_DENIED")
        expectBusinessError(Self.post(c, Self.itk + "/accounts:sendOobCode", body, query: "key=any", headers: owner), "INSUFFICIENT_PERMISSION")
        let admin = Self.post(c, Self.itk + "/projects/demo-gatehouse/accounts:sendOobCode", body, headers: owner)
        #expect(admin.status == 200, "\(admin.text)")
        #expect(admin.json?["oobLink"]?.stringValue?.isEmpty == false)
    }

    @Test("with the key the caller of a user route is a user, who must name their account by ID token")
    func keyRouteIsUser() throws {
        let c = try WebClient()
        expectBusinessError(c.post(Self.itk + "/accounts:lookup", json: "{}"), "MISSING_ID_TOKEN")
        // A non-Bearer Authorization header is ignored too.
        expectBusinessError(c.post(Self.itk + "/accounts:lookup", json: "{}", headers: ["authorization": "Basic x"]), "MISSING_ID_TOKEN")
    }

    @Test("a project in the path must be served: 400 CONFIGURATION_NOT_FOUND")
    func unknownPathProject() throws {
        let c = try WebClient()
        let auth = ["authorization": "Bearer admin-secret"]
        expectBusinessError(Self.post(c, Self.itk + "/projects/nope/accounts:lookup", headers: auth), "CONFIGURATION_NOT_FOUND")
        expectBusinessError(c.request("GET", Self.itk + "/projects/nope/accounts:batchGet", headers: auth), "CONFIGURATION_NOT_FOUND")
        expectBusinessError(Self.post(c, Self.itk + "/projects/nope:createSessionCookie", headers: auth), "CONFIGURATION_NOT_FOUND")
        let dev = try WebClient(projects: [ProjectSettings.devDefault()], devMode: true)
        expectBusinessError(dev.request("GET", "/emulator/v1/projects/nope/verificationCodes"), "CONFIGURATION_NOT_FOUND")
    }

    // MARK: Dev-only routes

    @Test("outside dev mode the emulator routes answer exactly as an unknown path does")
    func devOnlyHidden() throws {
        let c = try WebClient()
        let unknown = c.request("GET", "/emulator/v1/projects/prod/nothing")
        expectEnvelope(unknown, 404, "Not Found", reason: "notFound", canonical: "NOT_FOUND")
        for (method, path) in [("GET", "/emulator/v1/projects/prod/verificationCodes"), ("GET", "/emulator/v1/projects/prod/oobCodes"),
                               ("DELETE", "/emulator/v1/projects/prod/accounts")] {
            let r = c.request(method, path, headers: ["authorization": "Bearer admin-secret"])
            #expect(r.status == 404)
            #expect(r.text == unknown.text, "\(method) \(path)")
        }
    }

    @Test("in dev mode the emulator routes answer without credentials")
    func devOnlyOpen() throws {
        let c = try WebClient(projects: [ProjectSettings.devDefault()], devMode: true)
        let r = c.request("GET", "/emulator/v1/projects/demo-gatehouse/verificationCodes")
        #expect(r.status == 200)
        #expect(r.json?["verificationCodes"] == .array([]))
        #expect(c.request("DELETE", "/emulator/v1/projects/demo-gatehouse/accounts").text == "{}")
    }

    // MARK: Methods and paths

    @Test("an unknown path is 404 NOT_FOUND, for every method")
    func unknownPath() throws {
        let c = try WebClient()
        for method in ["GET", "POST", "DELETE", "PATCH"] {
            expectEnvelope(c.request(method, Self.itk + "/accounts:nothingHere"), 404, "Not Found", reason: "notFound", canonical: "NOT_FOUND")
        }
        expectEnvelope(c.request("GET", "/__/auth/phone/"), 404, "Not Found", reason: "notFound", canonical: "NOT_FOUND")
    }

    @Test("a known path with the wrong method is 405 with Allow listing the methods it takes")
    func methodNotAllowed() throws {
        let c = try WebClient()
        let cases: [(String, String, String)] = [
            ("POST", "/.well-known/jwks.json", "GET"),
            ("GET", Self.itk + "/accounts:lookup", "POST"),
            ("DELETE", "/__/auth/phone", "GET, POST"),
            ("PUT", "/__/auth/challenge", "GET, POST"),
            ("POST", Self.adminBase + "/accounts:batchGet", "GET"),
            ("GET", "/emulator/v1/projects/prod/accounts", "DELETE"),
        ]
        for (method, path, allow) in cases {
            let r = c.request(method, path)
            expectEnvelope(r, 405, "Method \(method) not allowed; use \(allow)", reason: "methodNotAllowed", canonical: "INVALID_ARGUMENT")
            #expect(r.headers.contains { $0 == ("Allow", allow) }, "\(method) \(path)")
        }
    }

    @Test("HEAD is answered as GET")
    func head() throws {
        let c = try WebClient()
        #expect(c.request("HEAD", "/.well-known/jwks.json").status == 200)
    }

    // MARK: Bodies

    @Test("a body that is not JSON, or not an object, is 400 parseError")
    func invalidJSON() throws {
        let c = try WebClient()
        let cases: [(String, String)] = [
            ("{\"phoneNumber\": ", "Unexpected end of input at byte 16"),
            ("{", "Expected a string key at byte 1"),
            ("[]", "Expected a JSON object at the top level."),
            ("\"+15555550100\"", "Expected a JSON object at the top level."),
            ("null", "Expected a JSON object at the top level."),
            ("{\"a\": 1,}", "Expected a string key at byte 8"),
            ("{\"a\": 01}", "Expected ',' or '}' at byte 7"),
        ]
        for (body, detail) in cases {
            let r = c.post(Self.itk + "/accounts:sendVerificationCode", json: body)
            #expect(r.errorMessage?.hasPrefix("Invalid JSON payload received. ") == true, "\(body): \(r.text)")
            expectInvalidArgument(r, "Invalid JSON payload received. \(detail)", reason: "parseError")
        }
    }

    @Test("JSON nested deeper than the limit is a parse error, not a crash")
    func tooDeep() throws {
        let c = try WebClient()
        let deep = "{\"a\":" + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "}"
        expectInvalidArgument(c.post(Self.itk + "/accounts:lookup", json: deep), "Invalid JSON payload received. JSON nested deeper than 32 levels",
                              reason: "parseError")
    }

    @Test("a body over the one body limit is 413, as the transport answers it")
    func oversize() throws {
        let c = try WebClient()
        let limit = c.app.settings.maxBodyBytes
        let padded = "{\"x\":\"" + String(repeating: "a", count: limit) + "\"}"
        let r = c.post(Self.itk + "/accounts:lookup", json: padded)
        #expect(r.status == 413)
        #expect(r.errorMessage == "PAYLOAD_TOO_LARGE : Request body larger than \(limit) bytes")
        // Just under the limit is read.
        let fits = "{\"x\":\"" + String(repeating: "a", count: limit - 20) + "\"}"
        expectBusinessError(c.post(Self.itk + "/accounts:lookup", json: fits), "MISSING_ID_TOKEN")
    }

    @Test("the declared type does not gate the body: JSON is read as JSON, a form as fields (§1.3 rule 4)")
    func contentTypes() throws {
        let c = try WebClient()
        func send(_ body: String, _ type: String?) -> Response {
            c.request("POST", Self.itk + "/accounts:signInWithPhoneNumber", query: "key=key-prod", body: Array(body.utf8),
                      headers: type.map { ["content-type": $0] } ?? [:])
        }
        // Each body names only a session, so the next field checked (the code) is what is missing:
        // the session was read.
        for type in ["application/json", "application/json; charset=utf-8", "text/plain", "APPLICATION/JSON", nil] {
            expectBusinessError(send("{\"sessionInfo\":\"s\"}", type), "MISSING_CODE")
        }
        expectBusinessError(send("session_info=s", "application/x-www-form-urlencoded"), "MISSING_CODE")
        expectBusinessError(send("session_info=s", "application/x-www-form-urlencoded; charset=UTF-8"), "MISSING_CODE")
        // A form body sent as JSON is not JSON.
        #expect(send("session_info=s", "application/json").errorMessage?.hasPrefix("Invalid JSON payload received.") == true)
        // An empty body is an empty object.
        expectBusinessError(send("", "application/json"), "MISSING_SESSION_INFO")
    }

    @Test("snake_case keys are read as camelCase, at any depth (§1.3 rule 1)")
    func snakeCase() throws {
        #expect(Guards.camel("session_info") == "sessionInfo")
        #expect(Guards.camel("_leading") == "leading")
        #expect(Guards.camel("a__b") == "aB")
        #expect(Guards.normalise(.object([("outer_key", .array([.object([("inner_key", .null)])]))]))
            == .object([("outerKey", .array([.object([("innerKey", .null)])]))]))
    }
}
