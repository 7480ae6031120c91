import AuthCrypto
import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// The authenticator app (TOTP) on the hosted pages, in process: the account page's enrolment
/// (QR code, key and URI once, `no-store`, CSRF, the enrolment's blockers, a wrong code, the
/// session again with the factor) and the second-factor page's code form (no SMS, the session
/// with `sign_in_second_factor` `totp`, the localized errors), then `verify?require=mfa`.
@Suite("Authenticator app pages")
struct TOTPPagesTests {
    typealias M = MFAPageTests

    static func client(totp: Bool = true, failureBudget: Int? = nil) throws -> WebClient {
        var p = WebClient.productionProject()
        p.mfa = .enabled
        p.testPhoneNumbers[M.testNumber] = "123456"
        p.totp.enabled = totp
        p.totp.sealingKey = [UInt8](repeating: 0x5A, count: SealedBox.keyLength)
        if let failureBudget { p.phone.failureBudgetPerDay = failureBudget }
        return try WebClient(projects: [p])
    }

    static func base32Decode(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for c in text where c != " " && c != "=" {
            guard let v = alphabet.firstIndex(of: c) else { continue }
            buffer = buffer << 5 | v
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> bits) & 0xFF))
            }
        }
        return out
    }

    /// The text of the element that starts with `open` (up to its closing tag `close`).
    static func element(_ r: Response, _ open: String, close: String) -> String? {
        guard let start = r.text.range(of: open) else { return nil }
        let rest = r.text[start.upperBound...]
        guard let gt = rest.firstIndex(of: ">"), let end = rest.range(of: close) else { return nil }
        return String(rest[rest.index(after: gt)..<end.lowerBound])
    }

    static func code(_ c: WebClient, _ secret: [UInt8], stepsAhead: Int64 = 0) -> String {
        TOTP.code(secret: secret, step: TOTP.step(at: c.clock.now()) + stepsAhead)
    }

    struct Enrolled {
        let secret: [UInt8]
        let enrollmentID: String
        let session: String
    }

    /// Enrols an app named `name` from the account page, as a browser does.
    static func enrol(_ c: WebClient, session: String, name: String = "Pixel") throws -> Enrolled {
        let page = M.get(c, "/__/auth/account", query: "enrol=totp", cookies: ["__Host-gatehouse": session])
        #expect(page.status == 200, "\(page.text)")
        let shown = try #require(element(page, "<code id=\"totp-secret\"", close: "</code>"))
        let sessionInfo = try #require(M.hidden(page, "sessionInfo"))
        let secret = base32Decode(shown)
        let csrf = try M.token(c, AccountPage.totpVerifyPurpose)
        let done = M.post(c, "/__/auth/account/totp/verify",
                          "csrf=\(csrf)&sessionInfo=\(sessionInfo)&displayName=\(name)&code=\(code(c, secret))",
                          cookies: ["__Host-gatehouse": session])
        #expect(done.status == 303, "\(done.text)")
        let fresh = try #require(M.cookieValue(M.setCookie(done, "__Host-gatehouse")))
        let id = try #require(try M.firebaseClaims(fresh)["second_factor_identifier"]?.stringValue)
        return Enrolled(secret: secret, enrollmentID: id, session: fresh)
    }

    @Test("the account page offers an app only when the project has TOTP on")
    func offered() throws {
        for on in [true, false] {
            let c = try Self.client(totp: on)
            let session = try M.session(c, try M.account(c, factors: []))
            let page = M.get(c, "/__/auth/account", cookies: ["__Host-gatehouse": session])
            #expect(page.text.contains("id=\"mfa-add\""))
            #expect(page.text.contains("id=\"mfa-add-totp\" href=\"/__/auth/account?enrol=totp\"") == on)
            #expect(page.text.contains("Add a phone or an authenticator app") == on)
            let enrol = M.get(c, "/__/auth/account", query: "enrol=totp", cookies: ["__Host-gatehouse": session])
            #expect(enrol.text.contains("id=\"totp-secret\"") == on)
            // The phone's enrolment points to the app's when there is one.
            let phone = M.get(c, "/__/auth/account", query: "enrol=1", cookies: ["__Host-gatehouse": session])
            #expect(phone.text.contains("id=\"enrol-totp-instead\"") == on)
        }
    }

    @Test("enrolment: QR code, key and URI once, no-store; CSRF; a wrong code; the session again with the app")
    func enrolment() throws {
        let c = try Self.client()
        let account = try M.account(c, factors: [])
        let session = try M.session(c, account)
        let signedIn = ["__Host-gatehouse": session]

        let page = M.get(c, "/__/auth/account", query: "enrol=totp", cookies: signedIn)
        #expect(page.status == 200)
        #expect(page.header("Cache-Control") == "no-store")
        #expect(page.headers.filter { $0.0 == "Cache-Control" }.count == 1)
        #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
        let shown = try #require(Self.element(page, "<code id=\"totp-secret\"", close: "</code>"))
        #expect(shown.count == 39 && shown.split(separator: " ").allSatisfy { $0.count == 4 }, "grouped by four: \(shown)")
        let key = shown.replacing(" ", with: "")
        let uri = try #require(Self.element(page, "<textarea id=\"totp-uri\"", close: "</textarea>"))
        #expect(uri == "otpauth://totp/auth.example.com:ada%40example.com?secret=\(key)&amp;issuer=auth.example.com&amp;algorithm=SHA1&amp;digits=6&amp;period=30")
        // The QR code is the URI's, drawn inline: the same markup QRCode makes of it.
        let svg = try #require(Self.element(page, "<div id=\"qr\"", close: "</div>"))
        let expected = try #require(QRCode.svg(uri.replacing("&amp;", with: "&"), label: "QR code that adds your account to an authenticator app"))
        #expect(svg == expected)
        #expect(!page.text.contains("<script>") && !page.text.contains("style="))
        #expect(page.text.contains("autocomplete=\"one-time-code\"") && page.text.contains("inputmode=\"numeric\""))
        let sessionInfo = try #require(M.hidden(page, "sessionInfo"))
        #expect(sessionInfo.hasPrefix(TOTPMFA.sessionPrefix) && !sessionInfo.contains(key))
        let secret = Self.base32Decode(key)

        // CSRF: no token, and a token of another form.
        FormCSRFTests.expectRefused(c.request("POST", "/__/auth/account/totp/verify",
                                              body: Array("sessionInfo=\(sessionInfo)&code=\(Self.code(c, secret))".utf8),
                                              headers: ["content-type": M.form, "cookie": "__Host-gatehouse=" + session]))
        FormCSRFTests.expectRefused(M.post(c, "/__/auth/account/totp/verify",
                                           "csrf=\(try M.token(c, AccountPage.enrolVerifyPurpose))&sessionInfo=\(sessionInfo)&code=\(Self.code(c, secret))",
                                           cookies: signedIn))

        let csrf = try M.token(c, AccountPage.totpVerifyPurpose)
        let wrongCode = Self.code(c, secret, stepsAhead: 5)
        let wrong = M.post(c, "/__/auth/account/totp/verify", "csrf=\(csrf)&sessionInfo=\(sessionInfo)&displayName=Pixel&code=\(wrongCode)",
                           cookies: signedIn)
        #expect(wrong.status == 400)
        #expect(wrong.text.contains("That code is not right."))
        #expect(!wrong.text.contains("INVALID_CODE"))
        #expect(!wrong.text.contains(key) && !wrong.text.contains(shown) && !wrong.text.contains("<svg"), "the secret is not shown again")
        #expect(M.hidden(wrong, "sessionInfo") == sessionInfo)
        #expect(wrong.text.contains("name=\"displayName\" type=\"text\" autocomplete=\"off\" maxlength=\"64\" value=\"Pixel\""), "the name is kept")
        #expect(wrong.text.contains("href=\"/__/auth/account?enrol=totp\" id=\"totp-restart\""), "a new QR code starts over")
        #expect(wrong.header("Cache-Control") == "no-store")

        let done = M.post(c, "/__/auth/account/totp/verify",
                          "csrf=\(csrf)&sessionInfo=\(sessionInfo)&displayName=Pixel&code=\(Self.code(c, secret))", cookies: signedIn)
        #expect(done.status == 303, "\(done.text)")
        #expect(done.header("Location") == "/__/auth/account?enrolled=totp&hl=en")
        let fresh = try #require(M.cookieValue(M.setCookie(done, "__Host-gatehouse")))
        let firebase = try M.firebaseClaims(fresh)
        #expect(firebase["sign_in_second_factor"]?.stringValue == "totp")
        #expect(firebase["sign_in_provider"]?.stringValue == "password")
        let stored = try #require(try c.store.account(project: "prod", localID: account.localID)?.mfaEnrollments.first)
        #expect(stored.totp != nil && stored.displayName == "Pixel")
        #expect(firebase["second_factor_identifier"]?.stringValue == stored.enrollmentID)

        // The same enrolment again does not enrol twice.
        let again = M.post(c, "/__/auth/account/totp/verify",
                           "csrf=\(csrf)&sessionInfo=\(sessionInfo)&code=\(Self.code(c, secret))", cookies: ["__Host-gatehouse": fresh])
        #expect(again.status == 400)
        #expect(try c.store.account(project: "prod", localID: account.localID)?.mfaEnrollments.count == 1)

        // The list: the app by name and kind, its remove button, never its secret.
        let listed = M.get(c, "/__/auth/account", query: "enrolled=totp", cookies: ["__Host-gatehouse": fresh])
        #expect(listed.text.contains("Authenticator app added."))
        #expect(listed.text.contains("<strong>Pixel</strong> <span class=\"gh-account-factor-app\">Authenticator app</span>"))
        #expect(listed.text.contains("name=\"enrollmentId\" value=\"\(stored.enrollmentID)\""))
        #expect(listed.text.contains("<span dir=\"ltr\">Authenticator app (Pixel)</span>"), "the session's second step")
        #expect(!listed.text.contains(key) && !listed.text.contains(shown) && !listed.text.contains("otpauth"))

        // Removed like a phone.
        let removed = M.post(c, "/__/auth/account/mfa/remove", "csrf=\(try M.token(c, AccountPage.removePurpose))&enrollmentId=\(stored.enrollmentID)",
                             cookies: ["__Host-gatehouse": fresh])
        #expect(removed.header("Location") == "/__/auth/account?removed=1&hl=en")
        #expect(try c.store.account(project: "prod", localID: account.localID)?.mfaEnrollments.isEmpty == true)
    }

    @Test("the enrolment's blockers: a recent sign-in, then a verified email; signing in again comes back to the app's enrolment")
    func blockers() throws {
        let c = try Self.client()
        let session = try M.session(c, try M.account(c, factors: []))
        let page = M.get(c, "/__/auth/account", query: "enrol=totp", cookies: ["__Host-gatehouse": session])
        let sessionInfo = try #require(M.hidden(page, "sessionInfo"))
        let secret = Self.base32Decode(try #require(Self.element(page, "<code id=\"totp-secret\"", close: "</code>")))
        c.clock.advance(seconds: 301)
        let stale = M.get(c, "/__/auth/account", query: "enrol=totp&continueUrl=https%3A%2F%2Fapp.example.com%2Fpay",
                          cookies: ["__Host-gatehouse": session])
        #expect(stale.text.contains("please sign in again before adding an authenticator app"))
        #expect(!stale.text.contains("id=\"totp-secret\"") && !stale.text.contains("<svg") && !stale.text.contains("name=\"code\""))
        #expect(stale.text.contains("/__/auth/signin?continueUrl=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Faccount%3Fenrol%3Dtotp%26continueUrl%3Dhttps%253A%252F%252Fapp.example.com%252Fpay"))
        let late = M.post(c, "/__/auth/account/totp/verify",
                          "csrf=\(try M.token(c, AccountPage.totpVerifyPurpose))&sessionInfo=\(sessionInfo)&code=\(Self.code(c, secret))",
                          cookies: ["__Host-gatehouse": session])
        #expect(late.status == 403)
        #expect(late.text.contains("please sign in again before adding an authenticator app"))

        // An address nobody confirmed cannot get a second step, in French too.
        let admin = ["authorization": "Bearer admin-secret"]
        let created = c.post("/identitytoolkit.googleapis.com/v1/projects/prod/accounts", json: #"{"email":"eve@example.com"}"#, key: nil, headers: admin)
        let uid = try #require(created.json?["localId"]?.stringValue)
        let unverified = try M.session(c, try #require(try c.store.account(project: "prod", localID: uid)))
        let refused = M.get(c, "/__/auth/account", query: "enrol=totp&hl=fr", cookies: ["__Host-gatehouse": unverified])
        #expect(refused.text.contains("Pour ajouter une application d’authentification, votre compte doit avoir une adresse e-mail vérifiée."))
        #expect(!refused.text.contains("id=\"totp-secret\""))

        // Not signed in: sign in first, then back to this enrolment.
        let anonymous = M.get(c, "/__/auth/account", query: "enrol=totp")
        #expect(anonymous.text.contains("/__/auth/signin?continueUrl=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Faccount%3Fenrol%3Dtotp"))
    }

    @Test("the second-factor page asks a lone app for its code at once, nothing sent; a wrong code; the session with totp; step-up passes")
    func secondFactor() throws {
        let c = try Self.client()
        let account = try M.account(c, factors: [])
        let app = try Self.enrol(c, session: try M.session(c, account))
        c.clock.advance(seconds: 30)

        let mfa = try #require(M.cookieValue(M.setCookie(try M.confirmedLink(c, email: "ada@example.com"), MFAPage.cookieName)))
        let cookies = [MFAPage.cookieName: mfa]
        let page = M.get(c, "/__/auth/mfa", cookies: cookies)
        #expect(page.status == 200)
        #expect(page.text.contains("action=\"/__/auth/mfa/totp?hl=en\""))
        #expect(page.text.contains("Enter the code from your authenticator app"))
        #expect(page.text.contains("the 6-digit code it shows for Pixel."))
        #expect(M.hidden(page, "enrollmentId") == app.enrollmentID)
        #expect(!page.text.contains("id=\"send\"") && !page.text.contains("id=\"other-factor\""))

        FormCSRFTests.expectRefused(M.post(c, "/__/auth/mfa/totp", "csrf=\(try M.token(c, MFAPage.verifyPurpose))&enrollmentId=\(app.enrollmentID)&code=1",
                                           cookies: cookies))
        let csrf = try M.token(c, MFAPage.totpPurpose)
        let wrong = M.post(c, "/__/auth/mfa/totp", "csrf=\(csrf)&enrollmentId=\(app.enrollmentID)&code=\(Self.code(c, app.secret, stepsAhead: 9))",
                           cookies: cookies)
        #expect(wrong.status == 400)
        #expect(wrong.text.contains("That code is not right."))
        #expect(wrong.text.contains("aria-invalid=\"true\""))
        #expect(!wrong.text.contains("INVALID_CODE"))

        let done = M.post(c, "/__/auth/mfa/totp", "csrf=\(csrf)&enrollmentId=\(app.enrollmentID)&code=\(Self.code(c, app.secret))", cookies: cookies)
        #expect(done.status == 303, "\(done.text)")
        #expect(done.header("Location") == M.back)
        let session = try #require(M.cookieValue(M.setCookie(done, "__Host-gatehouse")))
        let firebase = try M.firebaseClaims(session)
        #expect(firebase["sign_in_provider"]?.stringValue == "password")
        #expect(firebase["sign_in_second_factor"]?.stringValue == "totp")
        #expect(firebase["second_factor_identifier"]?.stringValue == app.enrollmentID)
        #expect(M.setCookie(done, MFAPage.cookieName)?.contains("Max-Age=0") == true, "the pending cookie is cleared")

        // The same code again, with the same (now used) pending sign-in: expired, in words.
        let again = M.post(c, "/__/auth/mfa/totp", "csrf=\(csrf)&enrollmentId=\(app.enrollmentID)&code=\(Self.code(c, app.secret))", cookies: cookies)
        #expect(again.status == 410)
        #expect(again.text.contains("This sign-in has expired"))

        // nginx's step-up takes the app's session.
        let verify = c.request("GET", "/__/auth/verify", query: "require=mfa",
                               headers: ["cookie": "__Host-gatehouse=" + session, "x-original-url": "https://app.example.com/pay"])
        #expect(verify.status == 200)
        #expect(c.request("GET", "/__/auth/verify", query: "require=mfa",
                          headers: ["cookie": "__Host-gatehouse=" + (try M.session(c, account)), "x-original-url": "https://app.example.com/pay"]).status == 401)
    }

    @Test("a phone and an app: both offered, no send for the app; its code form leads back to the list")
    func mixed() throws {
        let c = try Self.client()
        let account = try M.account(c, factors: [M.testNumber])
        // Adding a second factor needs a session that passed the first one.
        let phone = try #require(account.mfaEnrollments.first)
        let app = try Self.enrol(c, session: try M.session(c, account, secondFactor: SecondFactor(identifier: phone.enrollmentID)))
        c.clock.advance(seconds: 30)

        let mfa = try #require(M.cookieValue(M.setCookie(try M.confirmedLink(c, email: "ada@example.com"), MFAPage.cookieName)))
        let cookies = [MFAPage.cookieName: mfa]
        let page = M.get(c, "/__/auth/mfa", cookies: cookies)
        #expect(page.status == 200)
        #expect(page.text.contains("confirm it is you with one of your second steps"))
        #expect(page.text.contains("+*******5670"))
        #expect(page.text.contains("<span class=\"factor-name\">Pixel</span> <span class=\"factor-kind\">Authenticator app</span>"))
        #expect(page.text.contains(">Continue</button>"))

        let chosen = M.post(c, "/__/auth/mfa", "csrf=\(try M.token(c, MFAPage.sendPurpose))&enrollmentId=\(app.enrollmentID)", cookies: cookies)
        #expect(chosen.status == 200)
        #expect(chosen.text.contains("action=\"/__/auth/mfa/totp?hl=en\""))
        #expect(chosen.text.contains("id=\"other-factor\""))
        #expect(M.hidden(chosen, "sessionInfo") == nil, "no code was sent")

        let done = M.post(c, "/__/auth/mfa/totp", "csrf=\(try M.token(c, MFAPage.totpPurpose))&enrollmentId=\(app.enrollmentID)&code=\(Self.code(c, app.secret))",
                          cookies: cookies)
        #expect(done.status == 303)
        #expect(try M.firebaseClaims(try #require(M.cookieValue(M.setCookie(done, "__Host-gatehouse"))))["sign_in_second_factor"]?.stringValue == "totp")
    }

    @Test("wrong app codes: the client's budget says \"too many attempts\"; the credential's attempts end the sign-in")
    func budgets() throws {
        let c = try Self.client(failureBudget: 2)
        let account = try M.account(c, factors: [])
        let app = try Self.enrol(c, session: try M.session(c, account))
        let mfa = try #require(M.cookieValue(M.setCookie(try M.confirmedLink(c, email: "ada@example.com"), MFAPage.cookieName)))
        let csrf = try M.token(c, MFAPage.totpPurpose)
        var texts: [String] = []
        for _ in 0..<3 {
            let r = c.request("POST", "/__/auth/mfa/totp", query: "hl=fr", body: Array("csrf=\(csrf)&enrollmentId=\(app.enrollmentID)&code=000000".utf8),
                              headers: ["content-type": M.form, "cookie": "\(CSRF.cookieName)=\(M.csrfCookie); \(MFAPage.cookieName)=\(mfa)"])
            #expect(r.status == 400)
            texts.append(r.text)
        }
        #expect(texts[0].contains("Ce code n’est pas le bon."))
        #expect(texts[2].contains("Trop de tentatives."), "\(texts[2])")

        // Another client, its own budget: five wrong codes spend the pending credential.
        let d = try Self.client()
        let other = try M.account(d, factors: [])
        let otherApp = try Self.enrol(d, session: try M.session(d, other))
        let pending = try #require(M.cookieValue(M.setCookie(try M.confirmedLink(d, email: "ada@example.com"), MFAPage.cookieName)))
        let token = try M.token(d, MFAPage.totpPurpose)
        var last = Response()
        for _ in 0..<6 {
            last = M.post(d, "/__/auth/mfa/totp", "csrf=\(token)&enrollmentId=\(otherApp.enrollmentID)&code=000000",
                          cookies: [MFAPage.cookieName: pending])
        }
        #expect(last.status == 410)
        #expect(last.text.contains("This sign-in has expired"))
    }
}
