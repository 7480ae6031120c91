import AuthEngine
@testable import AuthWeb
import HTTP
import Testing

@Suite("Web layer")
struct WebTests {
    @Test("continue URLs are accepted only as absolute http(s) URLs on authorized hosts", arguments: [
        ("https://app.example.com/after?x=1", true),
        ("http://localhost:3000/done", true),
        ("https://evil.example.net/", false),
        ("https://app.example.com@evil.example.net/", false),
        ("javascript:alert(1)", false),
        ("//app.example.com/x", false),
        ("https://app.example.com\\@evil.example.net", false),
        ("myapp://callback", false),
        ("https://sub.trusted.org/x", true),
        ("https://trusted.org.evil.net/", false),
    ])
    func continueURL(url: String, accepted: Bool) {
        let p = ProjectSettings(id: "p", authorizedDomains: ["app.example.com", "localhost", "*.trusted.org"])
        #expect((ContinueURL.safe(url, project: p) != nil) == accepted)
    }

    @Test("the locale comes from X-Firebase-Locale, then hl, then Accept-Language by quality, then the project default")
    func locale() throws {
        let dir = try #require(Templates.bundledDirectory)
        let t = try Templates(directory: dir)
        let l = t.locales
        #expect(Set(["en", "fr", "de", "pt", "id"]).isSubset(of: Set(l.supported)))
        #expect(l.resolve(header: "pt-BR", parameter: "fr", acceptLanguage: "de", projectDefault: "en") == "pt")
        #expect(l.resolve(header: nil, parameter: "fr", acceptLanguage: "de", projectDefault: "en") == "fr")
        #expect(l.resolve(header: "xx", parameter: nil, acceptLanguage: "ja;q=0.9, de;q=0.8, fr;q=0.1", projectDefault: "en") == "de")
        #expect(l.resolve(header: nil, parameter: nil, acceptLanguage: "ja", projectDefault: "id") == "id")
        #expect(l.resolve(header: nil, parameter: nil, acceptLanguage: nil, projectDefault: "xx") == "en")
    }

    @Test("every locale has every key English has")
    func localesComplete() throws {
        let t = try Templates(directory: try #require(Templates.bundledDirectory))
        let english = Set(t.locales.flat["en"]!.keys)
        for lang in t.locales.supported {
            let missing = english.subtracting(t.locales.flat[lang]!.keys)
            #expect(missing.isEmpty, "\(lang) lacks \(missing.sorted())")
        }
    }

    /// Every route, in table order: method, path pattern, guards, kind. Adding, dropping or
    /// re-guarding a route must change this list, so the change is seen in review.
    static let routeTable: [(String, String, Guards, Route.Kind)] = [
        ("GET", "/", [], .api),
        ("GET", "/__/auth/health", [], .api),
        ("GET", "/.well-known/jwks.json", [], .api),
        ("GET", "/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com", [], .api),
        ("GET", "/identitytoolkit.googleapis.com/v1/sessionCookiePublicKeys", [], .api),
        ("GET", "/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com", [], .api),
        ("GET", "/www.googleapis.com/identitytoolkit/v3/relyingparty/publicKeys", [], .api),
        ("GET", "/.well-known/openid-configuration", [], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/sendVerificationCode", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyPhoneNumber", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyCustomToken", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:finalize", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:withdraw", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/passkeyEnrollment:start", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/passkeyEnrollment:finalize", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/passkeySignIn:start", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v2/accounts/passkeySignIn:finalize", [.cors, .apiKey, .json], .api),
        ("GET", "/__/auth/challenge", [.cors], .api),
        ("POST", "/__/auth/challenge", [.cors, .json], .api),
        ("GET", "/identitytoolkit.googleapis.com/v1/recaptchaParams", [.cors, .apiKey], .api),
        ("GET", "/www.googleapis.com/identitytoolkit/v3/relyingparty/getRecaptchaParam", [.cors, .apiKey], .api),
        ("GET", "/v1/recaptchaParams", [.cors, .apiKey], .api),
        ("GET", "/identitytoolkit.googleapis.com/v2/recaptchaConfig", [.cors, .apiKey], .api),
        ("GET", "/v2/recaptchaConfig", [.cors, .apiKey], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:verifyIosClient", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyClient", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:sendOobCode", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/getOobConfirmationCode", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:sendOobCode", [.admin, .json, .pathProject], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithEmailLink", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/emailLinkSignin", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithEmailCode", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:createAuthUri", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/createAuthUri", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:resetPassword", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/resetPassword", [.cors, .apiKey, .json], .api),
        ("GET", "/.well-known/apple-app-site-association", [], .api),
        ("GET", "/apple-app-site-association", [], .api),
        ("GET", "/.well-known/assetlinks.json", [], .api),
        ("POST", "/securetoken.googleapis.com/v1/token", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}:createSessionCookie", [.admin, .json, .pathProject], .api),
        ("GET", "/__/auth/verify", [], .api),
        ("GET", "/__/auth/metrics", [], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:lookup", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/getAccountInfo", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:lookup", [.admin, .json, .pathProject], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:update", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/setAccountInfo", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:update", [.admin, .json, .pathProject], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:delete", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/deleteAccount", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:delete", [.admin, .json, .pathProject], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp", [.cors, .apiKey, .json], .api),
        ("POST", "/www.googleapis.com/identitytoolkit/v3/relyingparty/signupNewUser", [.cors, .apiKey, .json], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts", [.admin, .json, .pathProject], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:batchDelete", [.admin, .json, .pathProject], .api),
        ("GET", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:batchGet", [.admin, .pathProject], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:batchCreate", [.admin, .pathProject, .json, .importBody], .api),
        ("POST", "/identitytoolkit.googleapis.com/v1/projects/{project}/accounts:query", [.admin, .pathProject, .json], .api),
        ("GET", "/identitytoolkit.googleapis.com/v1/projects", [.cors, .apiKey], .api),
        ("GET", "/www.googleapis.com/identitytoolkit/v3/relyingparty/getProjectConfig", [.cors, .apiKey], .api),
        ("GET", "/emulator/v1/projects/{project}/verificationCodes", [.devOnly, .pathProject], .api),
        ("GET", "/emulator/v1/projects/{project}/oobCodes", [.devOnly, .pathProject], .api),
        ("GET", "/emulator/v1/projects/{project}/pushNotifications", [.devOnly, .pathProject], .api),
        ("DELETE", "/emulator/v1/projects/{project}/accounts", [.devOnly, .pathProject], .api),
        ("GET", "/__/auth/signin", [], .page),
        ("GET", "/__/auth/phone", [], .page),
        ("POST", "/__/auth/phone", [], .page),
        ("POST", "/__/auth/phone/verify", [], .page),
        ("POST", "/__/auth/phone/delivery", [], .page),
        ("POST", "/__/auth/delivery/twilio", [], .api),
        ("POST", "/__/auth/delivery/webhook", [], .api),
        ("GET", "/__/auth/handler", [], .page),
        ("GET", "/__/auth/callback", [], .page),
        ("GET", "/__/auth/email", [], .page),
        ("POST", "/__/auth/email", [], .page),
        ("GET", "/__/auth/email/code", [], .page),
        ("POST", "/__/auth/email/code", [], .page),
        ("GET", "/__/auth/action", [], .page),
        ("POST", "/__/auth/action", [], .page),
        ("GET", "/__/auth/links", [], .page),
        ("GET", "/__/auth/account", [], .page),
        ("POST", "/__/auth/signout", [], .page),
        ("GET", "/__/auth/mfa", [], .page),
        ("POST", "/__/auth/mfa", [], .page),
        ("POST", "/__/auth/mfa/verify", [], .page),
        ("POST", "/__/auth/mfa/delivery", [], .page),
        ("POST", "/__/auth/account/mfa", [], .page),
        ("POST", "/__/auth/account/mfa/verify", [], .page),
        ("POST", "/__/auth/account/mfa/remove", [], .page),
        ("POST", "/__/auth/mfa/totp", [], .page),
        ("POST", "/__/auth/account/totp/verify", [], .page),
        ("GET", "/__/auth/passkey", [], .page),
        ("POST", "/__/auth/passkey/options", [], .page),
        ("POST", "/__/auth/passkey", [], .page),
        ("POST", "/__/auth/account/passkey", [], .page),
        ("POST", "/__/auth/account/passkey/verify", [], .page),
        ("POST", "/__/auth/account/passkey/rename", [], .page),
        ("POST", "/__/auth/account/passkey/remove", [], .page),
        ("POST", "/__/auth/account/passkey/offer", [], .page),
        ("POST", "/__/auth/account/sessions/revoke", [], .page),
        ("POST", "/__/auth/account/sessions/revoke-others", [], .page),
        ("POST", "/__/auth/account/sessions/revoke-all", [], .page),
        ("GET", "/__/auth/signout-everywhere", [], .page),
        ("POST", "/__/auth/signout-everywhere", [], .page),
        ("GET", "/__/auth/console/users", [], .page),
        ("GET", "/__/auth/console/users/{uid}", [], .page),
        ("POST", "/__/auth/console/users/{uid}", [], .page),
        ("GET", "/__/auth/console/user", [], .page),
        ("POST", "/__/auth/console/user", [], .page),
        ("GET", "/__/auth/console", [], .page),
        ("GET", "/__/auth/console/", [], .page),
        ("GET", "/__/auth/console/delivery", [], .page),
        ("POST", "/__/auth/console/delivery", [], .page),
        ("GET", "/__/auth/console/audit", [], .page),
        ("GET", "/__/auth/console/keys", [], .page),
        ("POST", "/__/auth/console/keys", [], .page),
    ]

    @Test("the route table is exactly the documented one, each pattern once per method")
    func routes() {
        let r = RouteTable.build()
        var seen = Set<String>()
        for route in r.routes { #expect(seen.insert(route.method + " " + route.pattern.description).inserted, "\(route.pattern)") }
        let actual = r.routes.map { "\($0.method) \($0.pattern.description) \($0.handler.guards.rawValue) \($0.handler.kind)" }
        let expected = Self.routeTable.map { "\($0.0) \($0.1) \($0.2.rawValue) \($0.3)" }
        #expect(actual.count == expected.count)
        for (a, e) in zip(actual, expected) { #expect(a == e) }
        // What the zip cannot show when the counts differ.
        #expect(Set(actual).subtracting(expected).sorted() == [], "routes not in the list")
        #expect(Set(expected).subtracting(actual).sorted() == [], "listed routes missing")
    }

    @Test("one request (CGI) matches every route without the index exactly as a server does with it")
    func unindexedRoutes() {
        // The real table, each route named by its position.
        var walked = Router<Int>()
        for (i, r) in RouteTable.build().routes.enumerated() { walked.add(r.method, r.pattern.description, i) }
        var indexed = walked
        indexed.indexLiterals()
        // Each pattern's own text, and with its captures filled in.
        var paths = Set(walked.routes.map(\.pattern.description))
        for p in Array(paths) { paths.insert(p.replacing("{project}", with: "demo").replacing("{name}", with: "x").replacing("{id}", with: "1")) }
        paths.formUnion(["/", "/__/auth/nowhere", "/__/auth/", "/__/auth/verify/extra"])
        for path in paths.sorted() {
            for method in ["GET", "HEAD", "POST", "DELETE", "OPTIONS"] {
                #expect(indexed.match(method: method, path: path) == walked.match(method: method, path: path), "\(method) \(path)")
            }
        }
    }
}
