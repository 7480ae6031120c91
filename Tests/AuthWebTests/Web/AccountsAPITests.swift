import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// Input validation of the account endpoints, user (API key + ID token) and admin (bearer)
/// (firebase-wire.md §2.6–§2.9, §2.12, §2.13).
@Suite("Accounts API input")
struct AccountsAPITests {
    static let itk = WebClient.itk
    static let admin = WebClient.itk + "/projects/prod"

    /// An admin POST with a JSON body.
    static func adminPost(_ c: WebClient, _ path: String, _ json: String) -> Response {
        c.request("POST", admin + path, body: Array(json.utf8), headers: ["content-type": "application/json", "authorization": "Bearer admin-secret"])
    }

    /// A new anonymous account's ID token.
    static func idToken(_ c: WebClient) throws -> String {
        try #require(c.post(itk + "/accounts:signUp", json: "{}").json?["idToken"]?.stringValue)
    }

    @Test("lookup by a user needs an ID token; a malformed one is INVALID_ID_TOKEN", arguments: [
        ("{}", "MISSING_ID_TOKEN"), ("{\"idToken\": null}", "MISSING_ID_TOKEN"), ("{\"idToken\": []}", "MISSING_ID_TOKEN"),
        ("{\"idToken\": \"\"}", "MISSING_ID_TOKEN"),
        ("{\"idToken\": \"nope\"}", "INVALID_ID_TOKEN"), ("{\"idToken\": 1e300}", "INVALID_ID_TOKEN"),
        ("{\"idToken\": -1e19}", "INVALID_ID_TOKEN"), ("{\"idToken\": \"a.b.c\"}", "INVALID_ID_TOKEN"),
    ])
    func lookupUser(body: String, message: String) throws {
        expectBusinessError(try WebClient().post(Self.itk + "/accounts:lookup", json: body), message)
    }

    @Test("lookup with a real ID token finds its account")
    func lookupOwn() throws {
        let c = try WebClient()
        let r = c.post(Self.itk + "/accounts:lookup", json: "{\"idToken\": \"\(try Self.idToken(c))\"}")
        #expect(r.status == 200)
        #expect(r.json?["users"]?.arrayValue?.count == 1)
    }

    @Test("admin lookup ignores values of the wrong type and finds nothing for them")
    func lookupAdmin() throws {
        let c = try WebClient()
        for body in ["{}", "{\"localId\": 1e300}", "{\"localId\": [1e300, null, {}]}", "{\"email\": -1e19}", "{\"phoneNumber\": [\"x\"]}",
                     "{\"federatedUserId\": [{\"providerId\": 1, \"rawId\": []}, 7]}", "{\"federatedUserId\": \"x\"}"] {
            let r = Self.adminPost(c, "/accounts:lookup", body)
            #expect(r.status == 200, "\(body): \(r.text)")
            #expect(r.json?["users"] == nil, "\(body)")
        }
    }

    @Test("update by a user: no ID token and no admin is INVALID_REQ_TYPE; a bad token INVALID_ID_TOKEN")
    func updateUser() throws {
        let c = try WebClient()
        expectBusinessError(c.post(Self.itk + "/accounts:update", json: "{\"displayName\": \"x\"}"), "INVALID_REQ_TYPE : Unsupported request parameters.")
        expectBusinessError(c.post(Self.itk + "/accounts:update", json: "{\"idToken\": null}"), "INVALID_REQ_TYPE : Unsupported request parameters.")
        expectBusinessError(c.post(Self.itk + "/accounts:update", json: "{\"idToken\": \"nope\", \"displayName\": \"x\"}"), "INVALID_ID_TOKEN")
        expectBusinessError(c.post(Self.itk + "/accounts:update", json: "{\"idToken\": 1e300}"), "INVALID_ID_TOKEN")
        // An oobCode takes the email-action path whatever else is sent.
        expectBusinessError(c.post(Self.itk + "/accounts:update", json: "{\"oobCode\": \"nope\", \"idToken\": []}"), "INVALID_OOB_CODE")
        expectBusinessError(c.post(Self.itk + "/accounts:update", json: "{\"oobCode\": 1e300}"), "INVALID_OOB_CODE")
    }

    @Test("admin update: the account must be named and exist; numbers and claims are checked")
    func updateAdmin() throws {
        let c = try WebClient()
        expectBusinessError(Self.adminPost(c, "/accounts:update", "{}"), "MISSING_LOCAL_ID")
        expectBusinessError(Self.adminPost(c, "/accounts:update", "{\"localId\": []}"), "MISSING_LOCAL_ID")
        expectBusinessError(Self.adminPost(c, "/accounts:update", "{\"localId\": \"nope\"}"), "USER_NOT_FOUND")
        expectBusinessError(Self.adminPost(c, "/accounts:update", "{\"localId\": 1e300}"), "USER_NOT_FOUND")
        for since in ["1e300", "-1e19", "\"soon\"", "[]", "{}", "true", "1.5"] {
            expectInvalidArgument(Self.adminPost(c, "/accounts:update", "{\"localId\": \"nope\", \"validSince\": \(since)}"),
                                  "INVALID_ARGUMENT : validSince must be a number of seconds")
        }
        for claims in ["[]", "{}"] {
            expectBusinessError(Self.adminPost(c, "/accounts:update", "{\"localId\": \"nope\", \"customAttributes\": \(claims)}"), "INVALID_CLAIMS")
        }
    }

    @Test("delete: users need an ID token, admins a local id")
    func delete() throws {
        let c = try WebClient()
        expectBusinessError(c.post(Self.itk + "/accounts:delete", json: "{}"), "MISSING_ID_TOKEN")
        expectBusinessError(c.post(Self.itk + "/accounts:delete", json: "{\"idToken\": 1e300}"), "INVALID_ID_TOKEN")
        expectBusinessError(c.post(Self.itk + "/accounts:delete", json: "{\"localId\": \"x\"}"), "MISSING_ID_TOKEN")
        expectBusinessError(Self.adminPost(c, "/accounts:delete", "{}"), "MISSING_LOCAL_ID")
        expectBusinessError(Self.adminPost(c, "/accounts:delete", "{\"localId\": []}"), "MISSING_LOCAL_ID")
        expectBusinessError(Self.adminPost(c, "/accounts:delete", "{\"localId\": \"\"}"), "MISSING_LOCAL_ID")
        expectBusinessError(Self.adminPost(c, "/accounts:delete", "{\"localId\": \"nope\"}"), "USER_NOT_FOUND")
    }

    @Test("signUp by a user makes an anonymous account and refuses account fields")
    func signUp() throws {
        let c = try WebClient()
        let ok = c.post(Self.itk + "/accounts:signUp", json: "{\"phoneNumber\": 1e300, \"displayName\": []}")
        #expect(ok.status == 200)
        #expect(ok.json?["idToken"] != nil)
        expectBusinessError(c.post(Self.itk + "/accounts:signUp", json: "{\"localId\": \"chosen\"}"), "UNEXPECTED_PARAMETER : User ID")
        for field in ["email", "password", "idToken"] {
            expectBusinessError(c.post(Self.itk + "/accounts:signUp", json: "{\"\(field)\": \"x\"}"),
                                "OPERATION_NOT_ALLOWED : Password sign-in is disabled for this project.")
        }
        // A null field is no field.
        #expect(c.post(Self.itk + "/accounts:signUp", json: "{\"email\": null, \"localId\": null}").status == 200)
    }

    @Test("admin create checks the fields it is given")
    func create() throws {
        let c = try WebClient()
        expectBusinessError(Self.adminPost(c, "/accounts", "{\"phoneNumber\": \"not a number\"}"), "INVALID_PHONE_NUMBER : Invalid format.")
        expectBusinessError(Self.adminPost(c, "/accounts", "{\"phoneNumber\": 1e300}"), "INVALID_PHONE_NUMBER : Invalid format.")
        expectBusinessError(Self.adminPost(c, "/accounts", "{\"email\": \"not-an-email\"}"), "INVALID_EMAIL")
        expectInvalidArgument(Self.adminPost(c, "/accounts", "{\"validSince\": -1e19}"), "INVALID_ARGUMENT : validSince must be a number of seconds")
        let made = Self.adminPost(c, "/accounts", "{\"localId\": \"fixed-id\"}")
        #expect(made.json?["localId"]?.stringValue == "fixed-id")
        expectBusinessError(Self.adminPost(c, "/accounts", "{\"localId\": \"fixed-id\"}"), "DUPLICATE_LOCAL_ID")
    }

    @Test("batchDelete needs 1 to 1000 ids")
    func batchDelete() throws {
        let c = try WebClient()
        for body in ["{}", "{\"localIds\": []}", "{\"localIds\": 1e300}", "{\"localIds\": null}"] {
            expectBusinessError(Self.adminPost(c, "/accounts:batchDelete", body), "LOCAL_ID_LIST_EXCEEDS_LIMIT")
        }
        let many = "[" + (0...1000).map { "\"id\($0)\"" }.joined(separator: ",") + "]"
        expectBusinessError(Self.adminPost(c, "/accounts:batchDelete", "{\"localIds\": \(many)}"), "LOCAL_ID_LIST_EXCEEDS_LIMIT")
        // A single string is a list of one; unknown ids are not errors.
        let one = Self.adminPost(c, "/accounts:batchDelete", "{\"localIds\": \"nope\", \"force\": true}")
        #expect(one.status == 200)
        #expect(one.text == "{}")
    }

    @Test("batchGet: maxResults must be an integer; the page token must be one we issued")
    func batchGet() throws {
        let c = try WebClient()
        let auth = ["authorization": "Bearer admin-secret"]
        for q in ["maxResults=many", "maxResults=1e300", "maxResults=99999999999999999999", "maxResults=1.5", "maxResults=%20"] {
            expectInvalidArgument(c.request("GET", Self.admin + "/accounts:batchGet", query: q, headers: auth), "INVALID_ARGUMENT : maxResults must be an integer")
        }
        for q in ["", "maxResults=", "maxResults=-5", "maxResults=0", "maxResults=9223372036854775807"] {
            #expect(c.request("GET", Self.admin + "/accounts:batchGet", query: q, headers: auth).status == 200, "\(q)")
        }
        expectInvalidArgument(c.request("GET", Self.admin + "/accounts:batchGet", query: "nextPageToken=%00", headers: auth),
                              "INVALID_ARGUMENT : INVALID_PAGE_SELECTION")
    }

    @Test("project config needs only the key")
    func projectConfig() throws {
        let r = try WebClient().request("GET", Self.itk + "/projects", query: "key=key-prod")
        #expect(r.status == 200)
        #expect(r.json?["authorizedDomains"] == .array([.string("app.example.com")]))
    }
}
