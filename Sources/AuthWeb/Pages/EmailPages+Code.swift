import AuthEngine
import HTTP

/// The short code beside an email link, on the hosted page: "check your inbox" carries a form
/// for it (no script needed), `POST /__/auth/email/code` signs in with it exactly as the link's
/// confirmation does, and `GET /__/auth/email/code?email=…` shows that form again (a reload, a
/// closed tab). The code is bound to the pending cookie of the browser that asked
/// (`EmailLinks.signIn(email:code:binding:…)`): another browser is refused with a way on.
extension EmailPages {
    static let codePurpose = "email-code"

    /// What the "check your inbox" page says above its forms.
    enum SentState: Equatable {
        /// Just sent from this browser.
        case sent
        /// Shown again (`GET`), or after a refused code: says where the code went, not that it was just sent.
        case resumed
    }

    /// "Check your inbox": the code form, then "send again" and "use another address".
    static func sentPage(_ ctx: Context, email: String, continueURL: String?, state: SentState, codeError: String? = nil,
                         status: Int) throws -> Response {
        let strings = ctx.strings
        var response = Response.html("", status: status)
        let csrf = try CSRF.token(ctx, purpose: formPurpose, response: &response)
        let csrfCode = try CSRF.token(ctx, purpose: codePurpose, response: &response)
        let minutes = String(ctx.project.emailLink.linkLifetimeSeconds / 60)
        let codeMinutes = String(min(EmailLinks.codeLifetimeSeconds, ctx.project.emailLink.linkLifetimeSeconds) / 60)
        let lead = state == .sent ? strings["email.page.sent_body"] : strings["email.page.code_resume_body"]
        var values: [String: TemplateValue] = [
            "csrf": .string(csrf), "csrfCode": .string(csrfCode), "email": .string(email), "continueUrl": .string(continueURL ?? ""),
            "needsAppToken": .bool(!ctx.project.devMode),
            "sent": TemplateValue(around(lead, email: email)),
            // The link's hint follows "we sent a link"; shown again, the page is about the code.
            "hint": .string(fill(strings["email.page.sent_hint"], ["minutes": minutes])), "showHint": .bool(state == .sent),
            "codeHint": .string(fill(strings["email.page.code_hint"], ["minutes": codeMinutes])),
            // A fresh send waits before offering another; a refused code (another browser's,
            // one out of tries) offers a new one at once.
            "resendAfter": .int(state == .sent ? resendAfterSeconds : 0),
            "otherAddress": .string(requestPageURL(ctx, continueURL: continueURL)),
        ]
        if let codeError { values["codeError"] = .string(codeError) }
        response.body = ctx.app.templates.renderBytes("pages/email_sent", ctx: ctx, values: values)
        return response
    }

    /// `GET /__/auth/email/code?email=…[&continueUrl=…]`: the code form for an address.
    static func showCode(_ ctx: inout Context) throws -> Response {
        let continueURL = ctx.request.query("continueUrl").flatMap { $0.isEmpty ? nil : $0 }
        if let c = continueURL, !EmailLinkURLs.isAllowedContinueURL(c, project: ctx.project) {
            return problem(ctx, .continueNotAllowed, continueURL: nil)
        }
        guard ctx.project.emailLink.enabled else { return problem(ctx, .notAllowed, continueURL: nil) }
        guard let email = ctx.request.query("email").flatMap(EmailAddress.validated) else {
            return try form(ctx, email: ctx.request.query("email") ?? "", continueURL: continueURL,
                            error: ctx.strings["email.page.error_invalid_email"], status: 400)
        }
        return try sentPage(ctx, email: email, continueURL: continueURL, state: .resumed, status: 200)
    }

    /// `POST /__/auth/email/code`: signs in with the code typed on the page that asked.
    static func code(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: codePurpose, token: ctx.request.formField("csrf"))
        let continueURL = ctx.request.formField("continueUrl").flatMap { $0.isEmpty ? nil : $0 }
        if let c = continueURL, !EmailLinkURLs.isAllowedContinueURL(c, project: ctx.project) {
            return problem(ctx, .continueNotAllowed, continueURL: nil)
        }
        guard let email = ctx.request.formField("email").flatMap(EmailAddress.validated) else {
            return try form(ctx, email: ctx.request.formField("email") ?? "", continueURL: continueURL,
                            error: ctx.strings["email.page.error_invalid_email"], status: 400)
        }
        // People copy codes with the spaces a mail client or their eye puts in.
        let typed = String((ctx.request.formField("code") ?? "").filter { $0 != " " && $0 != "\u{00A0}" && $0 != "-" })
        let result: EmailLinkSignInResult
        do {
            result = try ctx.emailLinks.signIn(email: email, code: typed, binding: existingPendingToken(ctx), issueTokens: false,
                                               remoteAddress: ctx.request.remoteAddress)
        } catch let e as AuthError {
            let (key, status): (String, Int)
            switch e.code {
            case .missingCode: (key, status) = ("code_missing", 400)
            case .invalidCode: (key, status) = ("code_wrong", 400)
            case .sessionExpired: (key, status) = ("code_expired", 410)
            case .credentialMismatch: (key, status) = ("code_browser", 403)
            case .tooManyAttempts: (key, status) = (e.detail == EmailLinks.codeTriesDetail ? "code_tries" : "code_too_many", 429)
            default:
                if let page = problem(ctx, for: e, continueURL: continueURL) { return page }
                throw e
            }
            return try sentPage(ctx, email: email, continueURL: continueURL, state: .resumed,
                                codeError: ctx.strings["email.page.\(key)"], status: status)
        }
        return try signedIn(ctx, result, continueURL: continueURL)
    }
}
