import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// CSRF on the hosted pages' form posts (`CSRF`): a post must carry the browser's cookie and the
/// form's token for that purpose, and come from our origin when it says where it comes from.
@Suite("Form CSRF")
struct FormCSRFTests {
    static let form = "application/x-www-form-urlencoded"

    /// The CSRF cookie the phone page sets and the token its number form carries.
    static func phoneForm(_ c: WebClient) throws -> (cookie: String, token: String) {
        let page = c.request("GET", "/__/auth/phone")
        let setCookie = try #require(page.headers.first { $0.0 == "Set-Cookie" && $0.1.hasPrefix(CSRF.cookieName + "=") }?.1)
        let cookie = String(try #require(setCookie.split(separator: ";").first).dropFirst(CSRF.cookieName.count + 1))
        let marker = "name=\"csrf\" value=\""
        let start = try #require(page.text.range(of: marker)).upperBound
        let token = String(page.text[start...].prefix { $0 != "\"" })
        return (cookie, token)
    }

    /// The token of `purpose` for `cookie`, as the server computes it.
    static func token(_ c: WebClient, cookie: String, purpose: String) throws -> String {
        let ctx = Context(app: c.app, request: Request(method: "GET", path: "/"), store: c.store, params: [:])
        return CSRF.tokenFor(cookie: cookie, purpose: purpose, key: try CSRF.key(ctx))
    }

    static func post(_ c: WebClient, _ path: String, _ fields: String, cookie: String?, headers: [String: String] = [:]) -> Response {
        var h = headers
        h["content-type"] = h["content-type"] ?? form
        if let cookie { h["cookie"] = CSRF.cookieName + "=" + cookie }
        return c.request("POST", path, body: Array(fields.utf8), headers: h)
    }

    /// A refused post: the 403 error page, and no session.
    static func expectRefused(_ r: Response, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == 403, sourceLocation: sourceLocation)
        #expect(r.headers.contains { $0 == ("Content-Type", "text/html; charset=utf-8") }, sourceLocation: sourceLocation)
        #expect(!r.headers.contains { $0.0 == "Set-Cookie" && !$0.1.hasPrefix(CSRF.cookieName) }, sourceLocation: sourceLocation)
        #expect(!r.headers.contains { $0.0 == "Location" }, sourceLocation: sourceLocation)
    }

    @Test("every form post without the cookie and token is refused", arguments: [
        "/__/auth/phone", "/__/auth/phone/verify", "/__/auth/email", "/__/auth/action", "/__/auth/signout",
        "/__/auth/mfa", "/__/auth/mfa/verify", "/__/auth/mfa/totp", "/__/auth/account/mfa", "/__/auth/account/mfa/verify",
        "/__/auth/account/mfa/remove", "/__/auth/account/totp/verify",
    ])
    func noCredentials(path: String) throws {
        let c = try WebClient()
        Self.expectRefused(Self.post(c, path, "phoneNumber=%2B15555550100&email=a%40example.com", cookie: nil))
        Self.expectRefused(Self.post(c, path, "csrf=anything", cookie: nil))
        Self.expectRefused(Self.post(c, path, "", cookie: "x"))
    }

    @Test("the page's own cookie and token pass")
    func accepted() throws {
        let c = try WebClient()
        let (cookie, token) = try Self.phoneForm(c)
        let r = Self.post(c, "/__/auth/phone", "csrf=\(token)&phoneNumber=%2B15555550100", cookie: cookie)
        #expect(r.status == 200, "\(r.text)")
        #expect(r.text.contains("name=\"sessionInfo\""))
    }

    @Test("a token is bound to its cookie and its form's purpose")
    func bound() throws {
        let c = try WebClient()
        let (cookie, token) = try Self.phoneForm(c)
        let other = try Self.phoneForm(c).cookie
        #expect(other != cookie)
        Self.expectRefused(Self.post(c, "/__/auth/phone", "csrf=\(token)&phoneNumber=%2B15555550100", cookie: other))
        Self.expectRefused(Self.post(c, "/__/auth/phone", "phoneNumber=%2B15555550100", cookie: cookie))
        Self.expectRefused(Self.post(c, "/__/auth/phone", "csrf=\(token.dropLast())A&phoneNumber=%2B15555550100", cookie: cookie))
        // The number form's token does not open the code form, the sign-out form or the email form.
        for path in ["/__/auth/phone/verify", "/__/auth/signout", "/__/auth/email"] {
            Self.expectRefused(Self.post(c, path, "csrf=\(token)&code=123456&sessionInfo=s&email=a%40example.com", cookie: cookie))
        }
        // The sign-out form's own token does.
        let signOut = Self.post(c, "/__/auth/signout", "csrf=" + (try Self.token(c, cookie: cookie, purpose: AccountPage.csrfPurpose)), cookie: cookie)
        #expect(signOut.status == 303)
    }

    @Test("a page with several forms sets one CSRF cookie on a first visit, and every form's token verifies against it")
    func oneCookiePerPage() throws {
        let c = try MFAPageTests.client()
        let account = try MFAPageTests.account(c)
        let session = try MFAPageTests.session(c, account)
        let sessionCookie = c.app.settings.defaultProject.session.cookieName + "=" + session
        // The account page of a user with a factor: a remove form, "sign out everywhere" and the sign-out form.
        let page = c.request("GET", "/__/auth/account", headers: ["cookie": sessionCookie])
        #expect(page.status == 200, "\(page.text)")
        let set = page.headers.filter { $0.0 == "Set-Cookie" && $0.1.hasPrefix(CSRF.cookieName + "=") }
        #expect(set.count == 1, "\(set)")
        let cookie = try #require(MFAPageTests.cookieValue(set.last?.1))
        let tokens = page.text.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(tokens.count == 3, "\(page.text)")
        let expected = [AccountPage.removePurpose, AccountPage.sessionsPurpose, AccountPage.csrfPurpose].map { try? Self.token(c, cookie: cookie, purpose: $0) }
        #expect(tokens == expected.compactMap { $0 })
        // What the browser kept is what the forms were bound to: signing out works at once.
        let signOut = Self.post(c, "/__/auth/signout", "csrf=" + (tokens.last ?? ""),
                                cookie: nil, headers: ["cookie": CSRF.cookieName + "=" + cookie + "; " + sessionCookie])
        #expect(signOut.status == 303, "\(signOut.text)")
    }

    @Test("a post that names another origin is refused even with a good token; our origin and \"null\" are not")
    func origin() throws {
        let c = try WebClient()
        let (cookie, token) = try Self.phoneForm(c)
        let fields = "csrf=\(token)&phoneNumber=%2B15555550100"
        Self.expectRefused(Self.post(c, "/__/auth/phone", fields, cookie: cookie, headers: ["origin": "https://evil.example.net"]))
        Self.expectRefused(Self.post(c, "/__/auth/phone", fields, cookie: cookie, headers: ["origin": "https://auth.example.com.evil.net"]))
        #expect(Self.post(c, "/__/auth/phone", fields, cookie: cookie, headers: ["origin": "https://auth.example.com"]).status == 200)
        #expect(Self.post(c, "/__/auth/phone", fields, cookie: cookie, headers: ["origin": "null"]).status == 200)
    }

    @Test("form fields sent as JSON are not read, so the token is missing")
    func jsonBody() throws {
        let c = try WebClient()
        let (cookie, token) = try Self.phoneForm(c)
        Self.expectRefused(Self.post(c, "/__/auth/phone", "{\"csrf\": \"\(token)\"}", cookie: cookie, headers: ["content-type": "application/json"]))
    }
}
