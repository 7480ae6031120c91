import AuthEngine
import HTTP
import TextCoding

/// The hosted second-factor page (gatehouse.md "Second factor"): `GET /__/auth/mfa` shows the
/// enrolled phones (obfuscated) to send a code to and the authenticator apps, `POST /__/auth/mfa`
/// sends the code (or, with `resend`, a new one), `POST /__/auth/mfa/verify` checks it, starts the
/// hosted session with the second factor and redirects to the continue URL. An authenticator app
/// is asked for its code instead, with nothing sent (`MFAPage+TOTP.swift`).
///
/// A pending sign-in reaches it two ways: the email action handler confirmed a link for a user
/// with a factor (`begin`), or nginx's step-up (`/__/auth/verify?require=mfa`) sent a signed-in
/// user here with `continueUrl` (the page makes the pending credential from the session). The
/// credential and the continue URL travel in `__Host-gh_mfa` (HttpOnly, Secure, SameSite=Strict,
/// the credential's ten minutes), never in a URL; the cookie is cleared when the sign-in is done.
enum MFAPage {
    static let cookieName = "__Host-gh_mfa"
    static let sendPurpose = "mfa-send"
    static let verifyPurpose = "mfa-verify"

    /// What the cookie carries.
    struct Pending {
        let credential: String
        let continueURL: String?
    }

    static func flow(_ ctx: Context) -> PhoneMFA { MFAAPI.flow(ctx) }

    // MARK: The cookie

    /// `<credential>|<continue URL, percent-encoded>`: both parts are cookie-octets.
    static func cookie(_ pending: Pending, maxAge: Int) -> Cookie {
        let value = pending.credential + "|" + PercentEncoding.encode(pending.continueURL ?? "")
        return Cookie(name: cookieName, value: value, path: "/", maxAge: maxAge, secure: true, httpOnly: true, sameSite: .strict)
    }

    static func clearedCookie() -> Cookie {
        Cookie(name: cookieName, value: "", path: "/", maxAge: 0, secure: true, httpOnly: true, sameSite: .strict)
    }

    /// The request's pending sign-in, when its cookie is well-formed; the continue URL only when
    /// it is still safe.
    static func pending(_ ctx: Context) -> Pending? {
        guard let raw = ctx.request.cookies[cookieName], raw.utf8.count <= 4096, let bar = raw.firstIndex(of: "|") else { return nil }
        let credential = String(raw[..<bar])
        guard credential.hasPrefix(PhoneMFA.pendingPrefix), credential.utf8.count <= 128 else { return nil }
        let back = PercentEncoding.decode(raw[raw.index(after: bar)...], plusAsSpace: false)
        return Pending(credential: credential, continueURL: ContinueURL.safe(back, project: ctx.project))
    }

    /// The credential's lifetime, in seconds: the cookie's.
    static var cookieLifetime: Int { Int(PhoneMFA.pendingLifetime / 1000) }

    /// The email action handler's answer for a user with a second factor: on to this page, the
    /// pending sign-in in the cookie (no session yet).
    static func begin(_ ctx: Context, challenge: MFAChallenge, continueURL: String?) -> Response {
        var response = Response.redirect(to: "/__/auth/mfa?hl=" + PercentEncoding.encode(ctx.locale))
        response.addCookie(cookie(Pending(credential: challenge.pendingCredential,
                                          continueURL: ContinueURL.safe(continueURL, project: ctx.project)), maxAge: cookieLifetime))
        return response
    }

    // MARK: Handlers

    /// `GET /__/auth/mfa[?continueUrl=…]`
    static func show(_ ctx: inout Context) throws -> Response {
        let asked = ctx.request.query("continueUrl").flatMap { $0.isEmpty ? nil : $0 }
        if asked == nil, let p = pending(ctx) { return try choosePage(ctx, p) }
        // Step-up: a signed-in user asked for a second factor by a protected location.
        let check = try ctx.sessions.authorize(cookie: ctx.sessionCookieValue, project: ctx.project.id, cache: ctx.app.sessionCache)
        guard let id = check.identity else {
            if let p = pending(ctx) { return try choosePage(ctx, p) }
            return try expiredPage(ctx, continueURL: ContinueURL.safe(asked, project: ctx.project))
        }
        let back = ContinueURL.safe(asked, project: ctx.project)
        if id.secondFactor != nil { return .redirect(to: back ?? "/__/auth/account") }
        if id.account.mfaEnrollments.isEmpty {
            return .redirect(to: "/__/auth/account?enrol=1" + (back.map { "&continueUrl=" + PercentEncoding.encode($0) } ?? ""))
        }
        do {
            // The browser's own pending step-up, if it still holds one, is used again (the engine
            // counts only new ones against the client's budget).
            let challenge = try flow(ctx).stepUp(id.account, firstFactor: id.provider, remoteAddress: ctx.request.remoteAddress,
                                                 held: pending(ctx)?.credential)
            let p = Pending(credential: challenge.pendingCredential, continueURL: back)
            var response = try choosePage(ctx, p, enrollments: challenge.enrollments)
            // The cookie lives as long as the credential it carries.
            response.addCookie(cookie(p, maxAge: Int(clamping: max(1, (challenge.expiresAt - ctx.now) / 1000))))
            return response
        } catch let e as AuthError where e.code == .operationNotAllowed {
            return try expiredPage(ctx, continueURL: back, status: 403)
        } catch let e as AuthError where e.code == .tooManyAttempts {
            return tooManyPage(ctx, e)
        }
    }

    /// `POST /__/auth/mfa`: sends a code to the chosen factor (`enrollmentId`), or a new one
    /// (`resend` = the earlier sessionInfo), and renders the code form.
    static func send(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: sendPurpose, token: f["csrf"])
        guard let p = pending(ctx) else { return try expiredPage(ctx, continueURL: nil) }
        let flow = flow(ctx)
        let enrollments: [MFAEnrollment]
        do { enrollments = try flow.pendingEnrollments(p.credential) } catch let e as AuthError where isExpiry(e) {
            return try expiredPage(ctx, continueURL: p.continueURL)
        }
        if let old = f["resend"] {
            // "Send a new code" (a text), "Send by WhatsApp" or "Call me", to the enrolled number.
            let channel = f["channel"].flatMap(PhoneChannel.init(rawValue:)) ?? .sms
            do {
                let r = try PhoneAPI.flow(ctx).resend(sessionInfo: old, appToken: f["appToken"], remoteAddress: ctx.request.remoteAddress,
                                                      channel: channel, language: ctx.locale, composeSMS: SMSText.composer(ctx))
                if r.smsQueued { ctx.app.outboxNotifier() }
                let info = ctx.strings[channel == .sms ? "phone.code.resent" : "phone.code.resentBy." + channel.rawValue]
                return try codePage(ctx, sessionInfo: r.sessionInfo, info: info)
            } catch let e as AuthError where PhonePage.handled(e) {
                return try codePage(ctx, sessionInfo: old, error: e, status: 400)
            }
        }
        let chosen = f["enrollmentId"] ?? (enrollments.count == 1 ? enrollments.first?.enrollmentID : nil)
        if let app = enrollments.first(where: { $0.enrollmentID == chosen && $0.totp != nil }) {
            return try totpCodePage(ctx, enrollment: app, several: enrollments.count > 1)
        }
        do {
            let r = try flow.startSignIn(pendingCredential: p.credential, enrollmentID: chosen, PhoneMFA.CodeRequest(
                appToken: f["appToken"], appID: PhonePage.appID, remoteAddress: ctx.request.remoteAddress, composeSMS: SMSText.composer(ctx)))
            if r.smsQueued { ctx.app.outboxNotifier() }
            return try codePage(ctx, sessionInfo: r.sessionInfo)
        } catch let e as AuthError where isExpiry(e) {
            return try expiredPage(ctx, continueURL: p.continueURL)
        } catch let e as AuthError where PhonePage.handled(e) {
            return try choosePage(ctx, p, enrollments: enrollments, error: message(e, ctx: ctx, status: nil), status: 400)
        }
    }

    /// `POST /__/auth/mfa/delivery`: what became of the code's message (`PhonePage.deliveryAnswer`).
    static func delivery(_ ctx: inout Context) throws -> Response { try PhonePage.deliveryAnswer(ctx, purpose: verifyPurpose) }

    /// `POST /__/auth/mfa/verify`: the code finishes the pending sign-in; the session starts with
    /// the second factor, the cookie is cleared, and the browser goes on to the continue URL.
    static func verify(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: verifyPurpose, token: f["csrf"])
        guard let p = pending(ctx) else { return try expiredPage(ctx, continueURL: nil) }
        let session = f["sessionInfo"]
        let code = f["code"].map { String($0.filter { !$0.isWhitespace && $0 != "-" }) }
        do {
            let done = try flow(ctx).finishSignIn(pendingCredential: p.credential, sessionInfo: session, code: code,
                                                  remoteAddress: ctx.request.remoteAddress, issueTokens: false)
            var response = Response.redirect(to: p.continueURL ?? "/__/auth/account")
            try SessionCookie.set(for: done.account, provider: done.firstFactor,
                                  secondFactor: SecondFactor(identifier: done.enrollment.enrollmentID), ctx: ctx, response: &response)
            ctx.app.sessionCache.evict(project: ctx.project.id, localID: done.account.localID)
            response.addCookie(clearedCookie())
            return response
        } catch let e as AuthError where isExpiry(e) {
            return try expiredPage(ctx, continueURL: p.continueURL)
        } catch let e as AuthError where PhonePage.handled(e) {
            return try codePage(ctx, sessionInfo: session ?? "", error: e, status: 400)
        }
    }

    // MARK: Rendering

    /// A pending sign-in that can no longer be finished (unknown, used or past its ten minutes).
    static func isExpiry(_ e: AuthError) -> Bool {
        [.invalidMFAPendingCredential, .missingCredential, .missingMFAPendingCredential, .userNotFound].contains(e.code)
    }

    /// Step 1: the factors to send a code to (hints only: obfuscated numbers and names).
    static func choosePage(_ ctx: Context, _ p: Pending, enrollments known: [MFAEnrollment]? = nil, error: String? = nil,
                           status: Int = 200) throws -> Response {
        let enrollments: [MFAEnrollment]
        if let known { enrollments = known } else {
            do { enrollments = try flow(ctx).pendingEnrollments(p.credential) } catch let e as AuthError where isExpiry(e) {
                return try expiredPage(ctx, continueURL: p.continueURL)
            } catch let e as AuthError where e.code == .userDisabled {
                return try expiredPage(ctx, continueURL: p.continueURL, message: message(e, ctx: ctx, status: nil), status: 403)
            }
        }
        // A lone authenticator app has nothing to choose nor send: its code is asked at once.
        if enrollments.count == 1, let only = enrollments.first, only.totp != nil {
            return try totpCodePage(ctx, enrollment: only, several: false, error: error, status: status)
        }
        var response = Response.html("", status: status)
        let s = ctx.strings
        let apps = enrollments.contains { $0.totp != nil }
        let phones = enrollments.contains { $0.totp == nil }
        let factors: [TemplateValue] = enrollments.enumerated().map { i, e in
            let kind = e.totp == nil ? "" : (s["account.totp.kind"] ?? "")
            var factor: [String: TemplateValue] = [
                "id": .string(e.enrollmentID), "phone": .string(e.obfuscatedPhone),
                "name": .string(e.displayName ?? (e.totp == nil ? (s["mfa.unnamed"] ?? "") : kind)), "checked": .bool(i == 0),
                "index": .string(String(i)),
            ]
            // A named app says what it is beside its name (an unnamed one is called by its kind).
            if e.totp != nil, e.displayName != nil { factor["app"] = .string(kind) }
            return .object(factor)
        }
        var values: [String: TemplateValue] = [
            "csrf": .string(try CSRF.token(ctx, purpose: sendPurpose, response: &response)),
            // An app's code needs no app token; a phone's send does.
            "needsAppToken": .bool(!ctx.project.devMode && phones),
            "several": .bool(enrollments.count > 1),
            "factors": .list(factors),
            "phones": .bool(phones),
        ]
        if apps {
            // An app among the factors: words that fit every kind, and "Continue" rather than "Send code".
            values["mixed"] = true
        }
        if enrollments.count == 1, let only = enrollments.first {
            values["single"] = TemplateValue(PhonePage.around(s["mfa.lead_one"], number: only.obfuscatedPhone))
            values["singleID"] = .string(only.enrollmentID)
        }
        if let error { values["error"] = .string(error) }
        if ctx.project.devMode {
            values["devNotice"] = .string((s["phone.devNotice"] ?? "").replacing("{url}", with: "/emulator/v1/projects/\(ctx.project.id)/verificationCodes"))
        }
        response.body = ctx.app.templates.renderBytes("pages/mfa", ctx: ctx, values: values)
        return response
    }

    /// Step 2: the code form for `sessionInfo` (the number shown obfuscated, as in the hints).
    static func codePage(_ ctx: Context, sessionInfo: String, error: AuthError? = nil, info: String? = nil,
                         status: Int = 200) throws -> Response {
        guard let st = try PhoneAPI.flow(ctx).status(sessionInfo: sessionInfo) else {
            guard let p = pending(ctx) else { return try expiredPage(ctx, continueURL: nil) }
            return try choosePage(ctx, p, error: message(error ?? AuthError(.invalidSessionInfo), ctx: ctx, status: nil), status: 400)
        }
        var response = Response.html("", status: status)
        let s = ctx.strings
        let now = ctx.now
        let wait = max(0, (st.resendAvailableAt - now + 999) / 1000)
        let minutes = max(1, (st.expiresAt - now + 59_999) / 60_000)
        var values: [String: TemplateValue] = [
            "csrfVerify": .string(try CSRF.token(ctx, purpose: verifyPurpose, response: &response)),
            "csrfSend": .string(try CSRF.token(ctx, purpose: sendPurpose, response: &response)),
            "sessionInfo": .string(sessionInfo),
            "lead": TemplateValue(PhonePage.around(s["phone.code.lead"], number: MFAEnrollment.obfuscate(st.phoneNumber))),
            "needsAppToken": .bool(!ctx.project.devMode),
            "resendWait": .int(wait),
        ]
        if st.state == .pending {
            values["expiresText"] = .string((s["phone.code.expires"] ?? "").replacing("{minutes}", with: String(minutes)))
        }
        if wait > 0 { values["resendWaitText"] = .string((s["phone.code.resendIn"] ?? "").replacing("{seconds}", with: String(wait))) }
        if let error { values["error"] = .string(message(error, ctx: ctx, status: st)) }
        if let info { values["info"] = .string(info) }
        values.merge(PhonePage.deliveryValues(st, strings: s, url: "/__/auth/mfa/delivery")) { $1 }
        response.body = ctx.app.templates.renderBytes("pages/mfa_code", ctx: ctx, values: values)
        return response
    }

    /// The sign-in cannot be finished any more: say so, offer to sign in again, drop the cookie.
    static func expiredPage(_ ctx: Context, continueURL: String?, message: String? = nil, status: Int = 410) throws -> Response {
        var response = Response.html("", status: status)
        let s = ctx.strings
        response.body = ctx.app.templates.renderBytes("pages/mfa", ctx: ctx, values: [
            "expired": .string(message ?? (s["mfa.expired_body"] ?? "")),
            "signInHref": .string("/__/auth/signin" + PhonePage.continueQuery(continueURL)),
            "needsAppToken": false,
        ])
        if ctx.request.cookies[cookieName] != nil { response.addCookie(clearedCookie()) }
        return response
    }

    /// Too many step-ups from this client: the localized "too many attempts", nothing started.
    static func tooManyPage(_ ctx: Context, _ e: AuthError) -> Response {
        let html = ctx.app.templates.render("error", ctx: ctx, values: ["message": .string(message(e, ctx: ctx, status: nil)), "status": .int(429)])
        return .html(html, status: 429)
    }

    /// The phone page's words for a code error; a factor that is gone has its own.
    static func message(_ e: AuthError, ctx: Context, status: PhoneSignIn.Status?) -> String {
        if e.code == .mfaEnrollmentNotFound { return ctx.strings["mfa.factor_gone"] ?? "" }
        return PhonePage.message(e, ctx: ctx, status: status)
    }
}

extension PhonePage {
    /// A localized sentence split around its `{number}` placeholder (`before`, `number`,
    /// `after`), so that the page can set the number apart.
    static func around(_ text: String?, number: String) -> [String: String] {
        let sentence = text ?? "{number}"
        guard let r = sentence.firstRange(of: "{number}") else { return ["before": sentence, "number": "", "after": ""] }
        return ["before": String(sentence[..<r.lowerBound]), "number": number, "after": String(sentence[r.upperBound...])]
    }
}
