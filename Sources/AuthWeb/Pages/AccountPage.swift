import AuthEngine
import HTTP
import JSONValue
import TextCoding
#if canImport(Glibc)
import Glibc
#endif

/// `GET /__/auth/account`: who you are, how you signed in, your second factors, and a sign-out
/// button. `POST /__/auth/signout` (CSRF-checked): revokes the server-side session, deletes the
/// cookie, and redirects to a safe `continueUrl` or back to the account page. The second factors'
/// forms are in `AccountPage+MFA.swift` (a phone) and `AccountPage+TOTP.swift` (an authenticator app),
/// the passkeys' in `AccountPage+Passkeys.swift`, where one is signed in in `AccountPage+Sessions.swift`.
enum AccountPage {
    static let csrfPurpose = "signout"

    static func show(_ ctx: inout Context) throws -> Response { try page(ctx) }

    /// The page; `passkeyError` when a passkey change just failed (`AccountPage+Passkeys.swift`).
    static func page(_ ctx: Context, passkeyError: String? = nil, status: Int = 200) throws -> Response {
        var response = Response()
        let strings = ctx.app.templates.locales.strings(for: ctx.locale)
        let back = ContinueURL.safe(ctx.request.query("continueUrl"), project: ctx.project)
        var values: [String: TemplateValue] = [
            "signedOut": .bool(ctx.request.query("signedOut") == "1" || ctx.request.query("signedOut") == "everywhere"),
            "signedOutEverywhere": .bool(ctx.request.query("signedOut") == "everywhere"),
            "signInHref": .string("/__/auth/signin?continueUrl=" + PercentEncoding.encode(ctx.origin + "/__/auth/account")),
        ]
        let check = try ctx.sessions.authorize(cookie: ctx.sessionCookieValue, project: ctx.project.id, cache: ctx.app.sessionCache)
        if let id = check.identity {
            let a = id.account
            let idle = id.idleTimeoutSeconds
            var user: [String: String] = [
                "name": a.displayName ?? a.email ?? a.phoneNumber ?? (strings["account.anonymous_user"] ?? "—"),
                "uid": a.localID,
                "method": strings["account.provider.\(id.provider)"] ?? strings["account.provider.other"] ?? id.provider,
                "authTime": display(id.authTime),
                "authTimeISO": RFC3339.format(id.authTime * 1000),
                "expires": display(id.expiresAt),
                "expiresISO": RFC3339.format(id.expiresAt * 1000),
                "idleNote": idle <= 0 ? "" : (strings["account.idle_note"] ?? "").replacing("{minutes}", with: String(max(1, idle / 60))),
                "csrf": try CSRF.token(ctx, purpose: csrfPurpose, response: &response),
            ]
            if let p = a.phoneNumber { user["phone"] = p }
            if let e = a.email { user["email"] = e }
            if let back { user["continueUrl"] = back }
            if let factor = id.secondFactor {
                user["secondFactor"] = secondFactorText(a.mfaEnrollments.first { $0.enrollmentID == factor.identifier }, factor, strings)
            }
            values["user"] = TemplateValue(user)
            if ctx.project.mfa.allowsPhone {
                if ctx.request.query("enrol") == "1" { return try enrolPage(ctx, id, continueURL: back) }
                if ctx.request.query("enrol") == "totp", ctx.project.totp.enabled {
                    return try totpEnrolPage(ctx, id, continueURL: back)
                }
                values["mfa"] = try factorValues(ctx, id, continueURL: back, response: &response)
            }
            values["sessions"] = try sessionValues(ctx, id, response: &response)
            if ctx.project.passkeys.enabled {
                let passkeys = try passkeyValues(ctx, id, error: passkeyError, response: &response)
                values["passkeys"] = passkeys.section
                if let offer = passkeys.offer { values["passkeyOffer"] = offer }
            }
        } else if let enrol = ctx.request.query("enrol"), enrol == "1" || (enrol == "totp" && ctx.project.totp.enabled) {
            // Asked to enrol (nginx step-up) but not signed in: sign in, then back here.
            values["signInHref"] = .string(signInAgainHref(ctx, continueURL: back, kind: enrol == "1" ? .phone : .totp))
        }
        response.status = status
        response.headers.insert(("Content-Type", "text/html; charset=utf-8"), at: 0)
        response.body = ctx.app.templates.renderBytes("pages/account", ctx: ctx, values: values)
        return response
    }

    static func signOut(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: csrfPurpose, token: ctx.request.formField(CSRF.fieldName))
        let back = ContinueURL.safe(ctx.request.formField("continueUrl"), project: ctx.project)
        var response = Response.redirect(to: back ?? "/__/auth/account?signedOut=1")
        SessionCookie.clear(ctx: ctx, response: &response)
        return response
    }

    /// The second factor this session passed, as the facts list shows it: a phone's obfuscated
    /// number, or "Authenticator app" with the app's name.
    static func secondFactorText(_ e: MFAEnrollment?, _ factor: SecondFactor, _ strings: LocaleStrings) -> String {
        if factor.factor == "totp" || e?.totp != nil {
            let app = strings["account.totp.kind"] ?? factor.factor
            guard let name = e?.displayName, !name.isEmpty else { return app }
            return (strings["account.totp.kind_named"] ?? "{kind} ({name})").replacing("{kind}", with: app).replacing("{name}", with: name)
        }
        return e?.obfuscatedPhone ?? strings["account.provider.phone"] ?? factor.factor
    }

    /// `2026-01-01 09:30 UTC`
    static func display(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        func pad(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(tm.tm_year + 1900)-\(pad(tm.tm_mon + 1))-\(pad(tm.tm_mday)) \(pad(tm.tm_hour)):\(pad(tm.tm_min)) UTC"
    }
}
