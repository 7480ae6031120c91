import AuthCrypto
import AuthEngine
import HTTP
import TextCoding

/// The hosted email sign-in page (gatehouse.md "Email-link sign-in and the action handler"):
/// `GET /__/auth/email?continueUrl=…` asks for an address; `POST` sends a link bound to this
/// browser by a random HttpOnly pending cookie (only its hash is stored) and shows "check your
/// inbox" with a form for the short code beside the link (`EmailPages+Code.swift`), which works
/// only on this browser: the code is bound to the same cookie.
enum EmailPages {
    static let pendingCookie = "__Host-gh_email"
    static let resendAfterSeconds = 60
    static let formPurpose = "email"

    static func show(_ ctx: inout Context) throws -> Response {
        let continueURL = ctx.request.query("continueUrl").flatMap { $0.isEmpty ? nil : $0 }
        if let c = continueURL, !EmailLinkURLs.isAllowedContinueURL(c, project: ctx.project) {
            return problem(ctx, .continueNotAllowed, continueURL: nil)
        }
        guard ctx.project.emailLink.enabled else { return problem(ctx, .notAllowed, continueURL: nil) }
        return try form(ctx, email: ctx.request.query("email") ?? "", continueURL: continueURL, error: nil, status: 200)
    }

    static func start(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: formPurpose, token: ctx.request.formField("csrf"))
        let email = ctx.request.formField("email") ?? ""
        let continueURL = ctx.request.formField("continueUrl").flatMap { $0.isEmpty ? nil : $0 }
        if let c = continueURL, !EmailLinkURLs.isAllowedContinueURL(c, project: ctx.project) {
            return problem(ctx, .continueNotAllowed, continueURL: nil)
        }
        let strings = ctx.strings
        let pending = existingPendingToken(ctx) ?? ctx.app.random.token(bytes: 24)
        var req = OobSendRequest(requestType: .emailSignIn, email: email, apiKey: ctx.linkAPIKey, origin: ctx.origin, lang: ctx.locale,
                                 remoteAddress: ctx.request.remoteAddress)
        req.settings.continueURL = continueURL
        req.browserBinding = Digest.sha256(pending)
        req.codeBinding = pending
        req.appToken = ctx.request.formField("appToken")
        let result: OobSendResult
        do {
            result = try ctx.emailLinks.send(req) { EmailMessages.compose($0, templates: ctx.app.templates) }
        } catch let e as AuthError {
            let (key, status): (String, Int) = switch e.code {
            case .missingEmail: ("error_missing_email", 400)
            case .invalidEmail: ("error_invalid_email", 400)
            case .tooManyAttempts: ("error_too_many", 429)
            case .operationNotAllowed: ("error_not_allowed", 403)
            case .missingRecaptchaToken, .captchaCheckFailed: ("error_verification", 400)
            default: throw e
            }
            return try form(ctx, email: email, continueURL: continueURL, error: strings["email.page.\(key)"], status: status)
        }
        ctx.app.outboxNotifier()

        let address = EmailAddress.validated(email) ?? result.email
        var response = try sentPage(ctx, email: address, continueURL: continueURL, state: .sent, status: 200)
        response.addCookie(Cookie(name: pendingCookie, value: pending, path: "/", maxAge: Int(ctx.project.emailLink.linkLifetimeSeconds),
                                  secure: true, httpOnly: true, sameSite: .lax))
        return response
    }

    /// The request form, with an optional error above the field.
    static func form(_ ctx: Context, email: String, continueURL: String?, error: String?, status: Int) throws -> Response {
        var response = Response.html("", status: status)
        let csrf = try CSRF.token(ctx, purpose: formPurpose, response: &response)
        let minutes = String(ctx.project.emailLink.linkLifetimeSeconds / 60)
        var values: [String: TemplateValue] = [
            "csrf": .string(csrf), "email": .string(email), "continueUrl": .string(continueURL ?? ""), "needsAppToken": .bool(!ctx.project.devMode),
            "hint": .string(fill(ctx.strings["email.page.email_hint"], ["minutes": minutes])),
        ]
        if let error { values["error"] = .string(error) }
        if ctx.project.passkeys.enabled {
            // The address field offers the browser's passkeys too (conditional mediation, `passkey.js`).
            values["passkeyForm"] = .object(try PasskeyPage.formValues(ctx, continueURL: ContinueURL.safe(continueURL, project: ctx.project),
                                                                       conditional: true, response: &response))
        }
        response.body = ctx.app.templates.renderBytes("pages/email", ctx: ctx, values: values)
        return response
    }

    /// The pending cookie of this browser, when it is well-formed.
    static func existingPendingToken(_ ctx: Context) -> String? {
        guard let v = ctx.request.cookies[pendingCookie], v.count >= 32, v.count <= 64, Base64URL.decode(v) != nil else { return nil }
        return v
    }

    /// `/__/auth/email?hl=…[&continueUrl=…]`: where "request a new link" and "use another address" go.
    static func requestPageURL(_ ctx: Context, continueURL: String?) -> String {
        var url = "/__/auth/email?hl=" + PercentEncoding.encode(ctx.locale)
        if let c = continueURL, EmailLinkURLs.isAllowedContinueURL(c, project: ctx.project) { url += "&continueUrl=" + PercentEncoding.encode(c) }
        return url
    }

    /// A localized sentence split around its `{email}` placeholder, so the page can set the
    /// address apart: `before`, `email`, `after`.
    static func around(_ text: String?, email: String, _ values: [String: String] = [:]) -> [String: String] {
        let filled = fill(text, values)
        guard let r = filled.firstRange(of: "{email}") else { return ["before": filled, "email": "", "after": ""] }
        return ["before": String(filled[..<r.lowerBound]), "email": email, "after": String(filled[r.upperBound...])]
    }

    /// Replaces `{name}` placeholders of a localized string.
    static func fill(_ text: String?, _ values: [String: String]) -> String {
        var s = text ?? ""
        for (k, v) in values { s = s.replacing("{\(k)}", with: v) }
        return s
    }
}

extension Context {
    /// Localized strings of the request's locale (flattened keys).
    var strings: LocaleStrings { app.templates.locales.strings(for: locale) }
}
