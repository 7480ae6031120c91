import AuthEngine
@testable import AuthWeb
import HTTP
import Testing

/// Input validation of the Secure Token refresh (firebase-wire.md §2.10), session cookies (§2.11)
/// and the nginx `auth_request` target `/__/auth/verify`.
@Suite("Token API input")
struct TokenAPITests {
    static let refresh = "/securetoken.googleapis.com/v1/token"

    @Test("refresh: grant type first, then the token", arguments: [
        ("{}", "MISSING_GRANT_TYPE"),
        ("{\"grantType\": null}", "MISSING_GRANT_TYPE"),
        ("{\"grantType\": []}", "MISSING_GRANT_TYPE"),
        ("{\"grantType\": \"password\"}", "INVALID_GRANT_TYPE"),
        ("{\"grantType\": 1e300}", "INVALID_GRANT_TYPE"),
        ("{\"grantType\": \"refresh_token\"}", "MISSING_REFRESH_TOKEN"),
        ("{\"grant_type\": \"refresh_token\", \"refresh_token\": {}}", "MISSING_REFRESH_TOKEN"),
        ("{\"grantType\": \"refresh_token\", \"refreshToken\": \"ghrt1.not-a-token\"}", "INVALID_REFRESH_TOKEN"),
        ("{\"grantType\": \"refresh_token\", \"refreshToken\": -1e19}", "INVALID_REFRESH_TOKEN"),
    ])
    func refreshErrors(body: String, message: String) throws {
        expectBusinessError(try WebClient().post(Self.refresh, json: body), message)
    }

    @Test("refresh takes a form body too, and answers in snake_case")
    func refreshForm() throws {
        let c = try WebClient()
        let token = try #require(c.post(WebClient.itk + "/accounts:signUp", json: "{}").json?["refreshToken"]?.stringValue)
        let form = "grant_type=refresh_token&refresh_token=" + token
        let r = c.request("POST", Self.refresh, query: "key=key-prod", body: Array(form.utf8),
                          headers: ["content-type": "application/x-www-form-urlencoded"])
        #expect(r.status == 200, "\(r.text)")
        #expect(r.json?["token_type"]?.stringValue == "Bearer")
        #expect(r.json?["refresh_token"]?.stringValue?.isEmpty == false)
        expectBusinessError(c.request("POST", Self.refresh, query: "key=key-prod", body: Array("grant_type=refresh_token".utf8),
                                      headers: ["content-type": "application/x-www-form-urlencoded"]), "MISSING_REFRESH_TOKEN")
    }

    @Test("createSessionCookie: the ID token is required; the duration must be 300 s to 14 days")
    func sessionCookie() throws {
        let c = try WebClient()
        func post(_ json: String) -> Response {
            c.request("POST", WebClient.itk + "/projects/prod:createSessionCookie", body: Array(json.utf8),
                      headers: ["content-type": "application/json", "authorization": "Bearer admin-secret"])
        }
        expectBusinessError(post("{}"), "MISSING_ID_TOKEN")
        expectBusinessError(post("{\"idToken\": []}"), "MISSING_ID_TOKEN")
        for duration in ["1e300", "-1e19", "299", "1209601", "\"a week\"", "1.5", "true"] {
            expectBusinessError(post("{\"idToken\": \"x\", \"validDuration\": \(duration)}"), "INVALID_SESSION_COOKIE_DURATION")
        }
        expectBusinessError(post("{\"idToken\": \"x\", \"validDuration\": 300}"), "INVALID_ID_TOKEN")
        expectBusinessError(post("{\"idToken\": 1e300}"), "INVALID_ID_TOKEN")
        let idToken = try #require(c.post(WebClient.itk + "/accounts:signUp", json: "{}").json?["idToken"]?.stringValue)
        let ok = post("{\"idToken\": \"\(idToken)\", \"validDuration\": \"3600\"}")
        #expect(ok.status == 200, "\(ok.text)")
        #expect(ok.json?["sessionCookie"]?.stringValue?.isEmpty == false)
    }

    @Test("verify: no cookie is 401 to the sign-in page; an unknown project header is CONFIGURATION_NOT_FOUND")
    func verify() throws {
        let c = try WebClient()
        let r = c.request("GET", "/__/auth/verify", headers: ["x-original-url": "https://app.example.com/private?a=1"])
        #expect(r.status == 401)
        #expect(r.headers.contains { $0 == ("Location", "https://auth.example.com/__/auth/signin?continueUrl=https%3A%2F%2Fapp.example.com%2Fprivate%3Fa%3D1") })
        // A continue URL on a host the project does not trust is dropped.
        let evil = c.request("GET", "/__/auth/verify", headers: ["x-original-url": "https://evil.example.net/"])
        #expect(evil.headers.contains { $0 == ("Location", "https://auth.example.com/__/auth/signin") })
        let garbage = c.request("GET", "/__/auth/verify", headers: ["cookie": "__session=not-a-cookie"])
        #expect(garbage.status == 401)
        expectBusinessError(c.request("GET", "/__/auth/verify", headers: ["x-gatehouse-project": "nope"]), "CONFIGURATION_NOT_FOUND")
    }
}
