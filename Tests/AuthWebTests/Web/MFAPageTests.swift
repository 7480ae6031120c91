import AuthCrypto
import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// The hosted second factor in process: the email action handler's hand-over to `/__/auth/mfa`,
/// the page's steps and cookie, the account page's enrolment and removal, and `verify?require=mfa`.
@Suite("Second-factor pages")
struct MFAPageTests {
    static let form = "application/x-www-form-urlencoded"
    /// A test number (fixed code 123456, no SMS) that the number parser also takes as valid.
    static let testNumber = "+33612345670"
    static let back = "https://app.example.com/after"

    static func client() throws -> WebClient {
        var p = WebClient.productionProject()
        p.mfa = .enabled
        p.testPhoneNumbers[testNumber] = "123456"
        return try WebClient(projects: [p])
    }

    /// A verified email account, with `factors` phone numbers enrolled.
    static func account(_ c: WebClient, email: String = "ada@example.com", factors: [String] = [testNumber]) throws -> Account {
        let admin = ["authorization": "Bearer admin-secret"]
        let created = c.post("/identitytoolkit.googleapis.com/v1/projects/prod/accounts",
                             json: #"{"email":"\#(email)","emailVerified":true}"#, key: nil, headers: admin)
        let uid = try #require(created.json?["localId"]?.stringValue, "\(created.text)")
        if !factors.isEmpty {
            let list = factors.map { #"{"phoneInfo":"\#($0)","displayName":"Work"}"# }.joined(separator: ",")
            let r = c.post("/identitytoolkit.googleapis.com/v1/projects/prod/accounts:update",
                           json: #"{"localId":"\#(uid)","mfa":{"enrollments":[\#(list)]}}"#, key: nil, headers: admin)
            #expect(r.status == 200, "\(r.text)")
        }
        return try #require(try c.store.account(project: "prod", localID: uid))
    }

    /// A hosted session for `account`, as a sign-in page starts one.
    static func session(_ c: WebClient, _ account: Account, secondFactor: SecondFactor? = nil) throws -> String {
        try Sessions(store: c.store, tokens: c.app.tokens, random: c.app.random)
            .startHostedSession(account: account, provider: "password", lifetime: 3600, idleTimeout: 0, secondFactor: secondFactor)
    }

    static let csrfCookie = "csrfcookie-0123456789abcdef"

    static func token(_ c: WebClient, _ purpose: String) throws -> String {
        try FormCSRFTests.token(c, cookie: csrfCookie, purpose: purpose)
    }

    static func post(_ c: WebClient, _ path: String, _ fields: String, cookies: [String: String] = [:]) -> Response {
        var all = cookies
        all[CSRF.cookieName] = csrfCookie
        let header = all.map { $0.key + "=" + $0.value }.sorted().joined(separator: "; ")
        return c.request("POST", path, body: Array(fields.utf8), headers: ["content-type": form, "cookie": header])
    }

    static func get(_ c: WebClient, _ path: String, query: String = "", cookies: [String: String] = [:]) -> Response {
        let header = cookies.map { $0.key + "=" + $0.value }.sorted().joined(separator: "; ")
        return c.request("GET", path, query: query, headers: cookies.isEmpty ? [:] : ["cookie": header])
    }

    /// The `Set-Cookie` header for `name`, whole.
    static func setCookie(_ r: Response, _ name: String) -> String? {
        r.headers.first { $0.0 == "Set-Cookie" && $0.1.hasPrefix(name + "=") }?.1
    }

    static func cookieValue(_ header: String?) -> String? {
        header.flatMap { $0.split(separator: ";").first }.map { String($0.split(separator: "=", maxSplits: 1).last ?? "") }
    }

    static func hidden(_ r: Response, _ name: String) -> String? {
        let marker = "name=\"\(name)\" value=\""
        guard let start = r.text.range(of: marker)?.upperBound else { return nil }
        return String(r.text[start...].prefix { $0 != "\"" })
    }

    /// The `firebase` claims of a session cookie (its payload, decoded; the signature is the
    /// engine's tests' business).
    static func firebaseClaims(_ jwt: String) throws -> JSON {
        let payload = try #require(jwt.split(separator: ".").dropFirst().first)
        let bytes = try #require(Base64URL.decode(String(payload)))
        return try #require(try JSONParser().parse(bytes)["firebase"])
    }

    /// An email link confirmed on the action page for a user with a factor.
    static func confirmedLink(_ c: WebClient, email: String) throws -> Response {
        let sent = c.post("/identitytoolkit.googleapis.com/v1/projects/prod/accounts:sendOobCode",
                          json: #"{"requestType":"EMAIL_SIGNIN","email":"\#(email)","returnOobLink":true,"continueUrl":"\#(back)"}"#,
                          key: nil, headers: ["authorization": "Bearer admin-secret"])
        let code = try #require(sent.json?["oobCode"]?.stringValue, "\(sent.text)")
        return post(c, "/__/auth/action", "csrf=\(try token(c, EmailPages.actionPurpose))&apiKey=key-prod&mode=signIn&oobCode=\(code)&email=\(email)")
    }

    @Test("an email link of a user with a factor goes on to the second-factor page, the credential in a cookie only")
    func handOver() throws {
        let c = try Self.client()
        _ = try Self.account(c)
        let r = try Self.confirmedLink(c, email: "ada@example.com")
        #expect(r.status == 303)
        #expect(r.header("Location") == "/__/auth/mfa?hl=en")
        #expect(Self.setCookie(r, "__Host-gatehouse") == nil, "no session before the second factor")
        let cookie = try #require(Self.setCookie(r, MFAPage.cookieName))
        for attribute in ["Max-Age=600", "Path=/", "Secure", "HttpOnly", "SameSite=Strict"] {
            #expect(cookie.contains(attribute), "\(cookie)")
        }
        let value = try #require(Self.cookieValue(cookie))
        #expect(value.hasPrefix(PhoneMFA.pendingPrefix))
        #expect(value.hasSuffix("|https%3A%2F%2Fapp.example.com%2Fafter"))
    }

    @Test("the second-factor page: hints only, a code, a wrong code, then the session with the factor")
    func secondFactor() throws {
        let c = try Self.client()
        let account = try Self.account(c, factors: [Self.testNumber, "+33612345678"])
        let mfa = try #require(Self.cookieValue(Self.setCookie(try Self.confirmedLink(c, email: "ada@example.com"), MFAPage.cookieName)))
        let cookies = [MFAPage.cookieName: mfa]

        let page = Self.get(c, "/__/auth/mfa", cookies: cookies)
        #expect(page.status == 200)
        #expect(page.text.contains("+*******5670") && page.text.contains("+*******5678"))
        #expect(!page.text.contains("612345670") && !page.text.contains("612345678"), "numbers are obfuscated")
        #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)

        // CSRF on both posts.
        FormCSRFTests.expectRefused(c.request("POST", "/__/auth/mfa", body: Array("enrollmentId=x".utf8), headers: ["content-type": Self.form]))
        FormCSRFTests.expectRefused(Self.post(c, "/__/auth/mfa/verify", "csrf=\(try Self.token(c, MFAPage.sendPurpose))&code=1", cookies: cookies))

        let factor = try #require(account.mfaEnrollments.first { $0.phoneNumber == Self.testNumber })
        let sent = Self.post(c, "/__/auth/mfa", "csrf=\(try Self.token(c, MFAPage.sendPurpose))&enrollmentId=\(factor.enrollmentID)",
                             cookies: cookies)
        #expect(sent.status == 200, "\(sent.text)")
        #expect(sent.text.contains(#"autocomplete="one-time-code""#) && sent.text.contains(#"inputmode="numeric""#))
        #expect(sent.text.contains("+*******5670"))
        let sessionInfo = try #require(Self.hidden(sent, "sessionInfo"))
        let verify = try Self.token(c, MFAPage.verifyPurpose)

        let wrong = Self.post(c, "/__/auth/mfa/verify", "csrf=\(verify)&sessionInfo=\(sessionInfo)&code=000000", cookies: cookies)
        #expect(wrong.status == 400)
        #expect(wrong.text.contains("That code is not right. You have 4 attempts left."))
        #expect(!wrong.text.contains("INVALID_CODE"))

        let done = Self.post(c, "/__/auth/mfa/verify", "csrf=\(verify)&sessionInfo=\(sessionInfo)&code=123456", cookies: cookies)
        #expect(done.status == 303)
        #expect(done.header("Location") == Self.back)
        let session = try #require(Self.cookieValue(Self.setCookie(done, "__Host-gatehouse")))
        let firebase = try Self.firebaseClaims(session)
        #expect(firebase["sign_in_provider"]?.stringValue == "password")
        #expect(firebase["sign_in_second_factor"]?.stringValue == "phone")
        #expect(firebase["second_factor_identifier"]?.stringValue == factor.enrollmentID)
        #expect(Self.setCookie(done, MFAPage.cookieName)?.contains("Max-Age=0") == true, "the pending cookie is cleared")

        // Single use: the same cookie again is an expired sign-in, in words.
        let again = Self.post(c, "/__/auth/mfa/verify", "csrf=\(verify)&sessionInfo=\(sessionInfo)&code=123456", cookies: cookies)
        #expect(again.status == 410)
        #expect(again.text.contains("This sign-in has expired"))
    }

    @Test("a forged or missing pending cookie gets the expired page")
    func expired() throws {
        let c = try Self.client()
        let forged = Self.get(c, "/__/auth/mfa", cookies: [MFAPage.cookieName: "ghmfa1.forged|"])
        #expect(forged.status == 410)
        #expect(forged.text.contains("id=\"sign-in-again\""))
        #expect(Self.get(c, "/__/auth/mfa").status == 410)
    }

    @Test("verify?require=mfa: a session without a second factor is sent to the page or to enrolment; plain verify is unchanged")
    func stepUp() throws {
        let c = try Self.client()
        let enrolled = try Self.account(c)
        let bare = try Self.account(c, email: "bob@example.com", factors: [])
        func verify(_ cookie: String, mfa: Bool) -> Response {
            c.request("GET", "/__/auth/verify", query: mfa ? "require=mfa" : "",
                      headers: ["cookie": "__Host-gatehouse=" + cookie, "x-original-url": "https://app.example.com/pay?x=1"])
        }
        let plain = try Self.session(c, enrolled)
        #expect(verify(plain, mfa: false).status == 200)
        let r = verify(plain, mfa: true)
        #expect(r.status == 401)
        #expect(r.header("Location") == "https://auth.example.com/__/auth/mfa?continueUrl=https%3A%2F%2Fapp.example.com%2Fpay%3Fx%3D1")
        let none = verify(try Self.session(c, bare), mfa: true)
        #expect(none.status == 401)
        #expect(none.header("Location") == "https://auth.example.com/__/auth/account?enrol=1&continueUrl=https%3A%2F%2Fapp.example.com%2Fpay%3Fx%3D1")
        let factor = SecondFactor(identifier: try #require(enrolled.mfaEnrollments.first).enrollmentID)
        #expect(verify(try Self.session(c, enrolled, secondFactor: factor), mfa: true).status == 200)

        // The page the 401 names starts the second factor from the session.
        let page = Self.get(c, "/__/auth/mfa", query: "continueUrl=https%3A%2F%2Fapp.example.com%2Fpay", cookies: ["__Host-gatehouse": plain])
        #expect(page.status == 200)
        let value = try #require(Self.cookieValue(Self.setCookie(page, MFAPage.cookieName)))
        #expect(value.hasSuffix("|https%3A%2F%2Fapp.example.com%2Fpay"))
    }

    @Test("step-up: the browser's own pending credential is answered again; new ones past the client's budget get the localized \"too many attempts\"")
    func stepUpBounded() throws {
        let c = try Self.client()
        let session = try Self.session(c, try Self.account(c))
        let query = "continueUrl=https%3A%2F%2Fapp.example.com%2Fpay"
        let first = Self.get(c, "/__/auth/mfa", query: query, cookies: ["__Host-gatehouse": session])
        #expect(first.status == 200)
        let held = try #require(Self.cookieValue(Self.setCookie(first, MFAPage.cookieName)))
        // A reload with the cookie: the same credential, its cookie no longer than what is left of it.
        c.clock.advance(seconds: 100)
        let reload = Self.get(c, "/__/auth/mfa", query: query, cookies: ["__Host-gatehouse": session, MFAPage.cookieName: held])
        #expect(reload.status == 200)
        let again = try #require(Self.setCookie(reload, MFAPage.cookieName))
        #expect(Self.cookieValue(again) == held)
        #expect(again.contains("Max-Age=500"), "\(again)")
        // The reload was not counted: 29 more new step-ups fit in the client's 30 …
        for i in 0..<29 {
            let r = Self.get(c, "/__/auth/mfa", query: query, cookies: ["__Host-gatehouse": session])
            #expect(r.status == 200, "step-up \(i)")
        }
        // … and the next one is refused, in the page's language, with no credential.
        let refused = Self.get(c, "/__/auth/mfa", query: query + "&hl=fr", cookies: ["__Host-gatehouse": session])
        #expect(refused.status == 429)
        #expect(refused.text.contains("Trop de tentatives."), "\(refused.text)")
        #expect(Self.setCookie(refused, MFAPage.cookieName) == nil)
        // The browser that holds its credential still goes on.
        #expect(Self.get(c, "/__/auth/mfa", query: query, cookies: ["__Host-gatehouse": session, MFAPage.cookieName: held]).status == 200)
    }

    @Test("the account page enrols a phone (recent sign-in only) and removes it, keeping the browser signed in")
    func enrolAndRemove() throws {
        let c = try Self.client()
        let account = try Self.account(c, factors: [])
        let session = try Self.session(c, account)
        let signedIn = ["__Host-gatehouse": session]

        let listed = Self.get(c, "/__/auth/account", cookies: signedIn)
        #expect(listed.text.contains("id=\"mfa-none\"") && listed.text.contains("id=\"mfa-add\""))
        let form = Self.get(c, "/__/auth/account", query: "enrol=1", cookies: signedIn)
        #expect(form.text.contains("action=\"/__/auth/account/mfa?hl=en\""))

        FormCSRFTests.expectRefused(c.request("POST", "/__/auth/account/mfa", body: Array("phoneNumber=1".utf8),
                                              headers: ["content-type": Self.form, "cookie": "__Host-gatehouse=" + session]))
        let sent = Self.post(c, "/__/auth/account/mfa", "csrf=\(try Self.token(c, AccountPage.enrolPurpose))&phoneNumber=%2B33612345670&displayName=Desk",
                             cookies: signedIn)
        #expect(sent.status == 200, "\(sent.text)")
        let sessionInfo = try #require(Self.hidden(sent, "sessionInfo"))
        let added = Self.post(c, "/__/auth/account/mfa/verify",
                              "csrf=\(try Self.token(c, AccountPage.enrolVerifyPurpose))&sessionInfo=\(sessionInfo)&code=123456&displayName=Desk",
                              cookies: signedIn)
        #expect(added.status == 303)
        #expect(added.header("Location") == "/__/auth/account?enrolled=1&hl=en")
        let withFactor = try #require(Self.cookieValue(Self.setCookie(added, "__Host-gatehouse")))
        #expect(try Self.firebaseClaims(withFactor)["sign_in_second_factor"]?.stringValue == "phone")
        let stored = try #require(try c.store.account(project: "prod", localID: account.localID))
        let factor = try #require(stored.mfaEnrollments.first)
        #expect(factor.displayName == "Desk")

        let page = Self.get(c, "/__/auth/account", cookies: ["__Host-gatehouse": withFactor])
        #expect(page.text.contains("+*******5670") && !page.text.contains("612345670"))

        let removed = Self.post(c, "/__/auth/account/mfa/remove", "csrf=\(try Self.token(c, AccountPage.removePurpose))&enrollmentId=\(factor.enrollmentID)",
                                cookies: ["__Host-gatehouse": withFactor])
        #expect(removed.status == 303)
        #expect(removed.header("Location") == "/__/auth/account?removed=1&hl=en")
        let fresh = try #require(Self.cookieValue(Self.setCookie(removed, "__Host-gatehouse")))
        #expect(try Self.firebaseClaims(fresh)["sign_in_second_factor"] == nil)
        let check = { (cookie: String) in
            c.request("GET", "/__/auth/verify", headers: ["cookie": "__Host-gatehouse=" + cookie]).status
        }
        #expect(check(withFactor) == 401, "earlier sessions are revoked")
        #expect(check(fresh) == 200)
        #expect(try c.store.account(project: "prod", localID: account.localID)?.mfaEnrollments.isEmpty == true)
    }

    @Test("enrolling needs a sign-in within the last five minutes")
    func recentSignIn() throws {
        let c = try Self.client()
        let session = try Self.session(c, try Self.account(c, factors: []))
        c.clock.advance(seconds: 301)
        let page = Self.get(c, "/__/auth/account", query: "enrol=1&continueUrl=https%3A%2F%2Fapp.example.com%2Fpay",
                            cookies: ["__Host-gatehouse": session])
        #expect(page.text.contains("please sign in again before adding a phone"))
        #expect(!page.text.contains("name=\"phoneNumber\""))
        // The way back: sign in, then this enrolment, then the protected page.
        #expect(page.text.contains("/__/auth/signin?continueUrl=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Faccount%3Fenrol%3D1%26continueUrl%3Dhttps%253A%252F%252Fapp.example.com%252Fpay"))
        let r = Self.post(c, "/__/auth/account/mfa", "csrf=\(try Self.token(c, AccountPage.enrolPurpose))&phoneNumber=%2B33612345670",
                          cookies: ["__Host-gatehouse": session])
        #expect(r.status == 403)
    }
}
