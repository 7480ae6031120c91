import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// CORS on the client API (docs/clients.md "CORS"): preflights answered from the settings alone,
/// allowed origins reflected on every answer, refused ones given no CORS header; never on admin
/// paths, pages or form posts; never credentials.
@Suite("CORS on the client API")
struct CORSTests {
    static let itk = WebClient.itk
    static let sdkHeaders = "content-type,x-client-version,x-firebase-gmpid,x-firebase-client"

    static func preflight(_ c: WebClient, _ path: String, origin: String?, key: String? = "key-prod", method: String = "POST",
                          headers: String? = sdkHeaders) -> Response {
        var h: [String: String] = ["access-control-request-method": method]
        if let origin { h["origin"] = origin }
        if let headers { h["access-control-request-headers"] = headers }
        return c.request("OPTIONS", path, query: key.map { "key=" + $0 } ?? "", headers: h)
    }

    static func header(_ r: Response, _ name: String) -> String? {
        r.headers.last { $0.0.lowercased() == name.lowercased() }?.1
    }

    @Test("production: an authorized domain's https origin is reflected on the preflight and on the answer, with the SDK's headers")
    func authorizedOrigin() throws {
        let c = try WebClient()
        let p = Self.preflight(c, Self.itk + "/accounts:sendVerificationCode", origin: "https://app.example.com")
        #expect(p.status == 204 && p.body.isEmpty)
        #expect(Self.header(p, "Access-Control-Allow-Origin") == "https://app.example.com")
        #expect(Self.header(p, "Access-Control-Allow-Methods") == "POST, OPTIONS")
        #expect(Self.header(p, "Access-Control-Allow-Headers") == "content-type, x-client-version, x-firebase-gmpid, x-firebase-client")
        #expect(Self.header(p, "Access-Control-Max-Age") == "7200")
        #expect(Self.header(p, "Vary")?.contains("Origin") == true)
        #expect(Self.header(p, "Access-Control-Allow-Credentials") == nil)
        // The answer itself, an error included, carries the origin so the SDK can read it.
        let r = c.post(Self.itk + "/accounts:sendVerificationCode", json: "{}", headers: ["origin": "https://app.example.com"])
        #expect(r.status == 400 && r.errorMessage == "INVALID_PHONE_NUMBER : Invalid format.")
        #expect(Self.header(r, "Access-Control-Allow-Origin") == "https://app.example.com")
        #expect(Self.header(r, "Access-Control-Allow-Credentials") == nil)
        // Secure Token, the legacy names, the reCAPTCHA config and the challenge are client API too.
        for (path, method) in [("/securetoken.googleapis.com/v1/token", "POST"), ("/www.googleapis.com/identitytoolkit/v3/relyingparty/getAccountInfo", "POST"),
                               ("/identitytoolkit.googleapis.com/v2/recaptchaConfig", "GET"), ("/__/auth/challenge", "POST"),
                               ("/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize", "POST")] {
            let pre = Self.preflight(c, path, origin: "https://app.example.com", method: method)
            #expect(pre.status == 204, "\(path)")
            #expect(Self.header(pre, "Access-Control-Allow-Origin") == "https://app.example.com", "\(path)")
        }
    }

    @Test("production: other origins, http on a public host, malformed origins and no origin get no CORS header")
    func refusedOrigins() throws {
        let c = try WebClient()
        for origin in ["https://evil.example.net", "http://app.example.com", "https://app.example.com.evil.net", "null", "https://",
                       "https://app.example.com/path", "javascript:alert(1)", "https://user@app.example.com"] {
            let p = Self.preflight(c, Self.itk + "/accounts:lookup", origin: origin)
            #expect(p.status == 403, "\(origin)")
            #expect(Self.header(p, "Access-Control-Allow-Origin") == nil, "\(origin)")
            let r = c.post(Self.itk + "/accounts:lookup", json: #"{"idToken":"x"}"#, headers: ["origin": origin])
            #expect(Self.header(r, "Access-Control-Allow-Origin") == nil, "\(origin)")
            #expect(r.errorMessage == "INVALID_ID_TOKEN", "the call itself is answered as without CORS")
        }
        #expect(Self.preflight(c, Self.itk + "/accounts:lookup", origin: nil).status == 403)
        // A header list that is not one is not reflected.
        let odd = Self.preflight(c, Self.itk + "/accounts:lookup", origin: "https://app.example.com", headers: "content-type, bad header")
        #expect(odd.status == 204 && Self.header(odd, "Access-Control-Allow-Headers") == nil)
    }

    @Test("a loopback name the project authorizes may use http (a developer's own dev server)")
    func loopbackHTTP() throws {
        var p = WebClient.productionProject()
        p.authorizedDomains.append("localhost")
        let c = try WebClient(projects: [p])
        let ok = Self.preflight(c, Self.itk + "/accounts:lookup", origin: "http://localhost:5173")
        #expect(ok.status == 204 && Self.header(ok, "Access-Control-Allow-Origin") == "http://localhost:5173")
        #expect(Self.preflight(c, Self.itk + "/accounts:lookup", origin: "http://127.0.0.1:5173").status == 403)
    }

    @Test("an API key's own origin list replaces the authorized domains for that key")
    func perKeyOrigins() throws {
        var p = WebClient.productionProject()
        p.apiKeys.append("key-web")
        p.apiKeyOrigins = ["key-web": ["https://web.example.org"]]
        let c = try WebClient(projects: [p])
        #expect(Self.preflight(c, Self.itk + "/accounts:lookup", origin: "https://web.example.org", key: "key-web").status == 204)
        #expect(Self.preflight(c, Self.itk + "/accounts:lookup", origin: "https://app.example.com", key: "key-web").status == 403)
        #expect(Self.preflight(c, Self.itk + "/accounts:lookup", origin: "https://app.example.com", key: "key-prod").status == 204)
        #expect(Self.preflight(c, Self.itk + "/accounts:lookup", origin: "https://web.example.org", key: "key-prod").status == 403)
    }

    @Test("dev mode reflects any origin, and answers Chromium's private-network preflight")
    func devMode() throws {
        let c = try WebClient(projects: [ProjectSettings.devDefault()], devMode: true, publicOrigin: nil)
        var h = ["origin": "http://localhost:5173", "access-control-request-method": "POST",
                 "access-control-request-private-network": "true"]
        let p = c.request("OPTIONS", Self.itk + "/accounts:sendVerificationCode", query: "key=anything", headers: h)
        #expect(p.status == 204 && Self.header(p, "Access-Control-Allow-Origin") == "http://localhost:5173")
        #expect(Self.header(p, "Access-Control-Allow-Private-Network") == "true")
        h["origin"] = "https://somewhere.example"
        #expect(Self.header(c.request("OPTIONS", Self.itk + "/accounts:lookup", query: "key=anything", headers: h),
                            "Access-Control-Allow-Origin") == "https://somewhere.example")
    }

    @Test("never on admin paths, hosted pages, form posts, verify or the emulator helpers")
    func notElsewhere() throws {
        let c = try WebClient()
        for (path, method) in [(Self.itk + "/projects/prod/accounts:lookup", "POST"), (Self.itk + "/projects/prod/accounts:batchGet", "GET"),
                               ("/__/auth/phone", "POST"), ("/__/auth/account", "GET"), ("/__/auth/verify", "GET"),
                               ("/__/auth/signout", "POST")] {
            let p = Self.preflight(c, path, origin: "https://app.example.com", method: method)
            #expect(p.status == 405, "\(path)")
            #expect(Self.header(p, "Access-Control-Allow-Origin") == nil, "\(path)")
        }
        let admin = c.request("POST", Self.itk + "/projects/prod/accounts:lookup", body: Array(#"{"localId":["x"]}"#.utf8),
                              headers: ["origin": "https://app.example.com", "content-type": "application/json",
                                        "authorization": "Bearer admin-secret"])
        #expect(Self.header(admin, "Access-Control-Allow-Origin") == nil)
    }

    @Test("a preflight never reaches the store or a flow: it is answered even with the store closed")
    func noStore() throws {
        let c = try WebClient()
        try c.store.db.script("DROP TABLE accounts")
        let p = Self.preflight(c, Self.itk + "/accounts:lookup", origin: "https://app.example.com")
        #expect(p.status == 204)
    }
}
