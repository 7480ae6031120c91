import AuthEngine
import HTTP
import TextCoding

/// The email action handler `/__/auth/action` (firebase-wire.md §4.1, §4.2) and the app-link
/// wrapper `/__/auth/links`. GET and HEAD never consume a code (mail scanners prefetch links):
/// links for apps (`canHandleCodeInApp`) are forwarded to `continueUrl` with `mode`, `oobCode`,
/// `apiKey` and `lang`; Gatehouse's own links render a confirmation page whose CSRF-checked POST
/// consumes the code, signs in (session cookie; for a user with a second factor, on to the
/// second-factor page, `MFAPage`) or verifies the address.
extension EmailPages {
    static let actionPurpose = "email-action"

    /// `GET /__/auth/action?apiKey=…&mode=…&oobCode=…[&continueUrl=…][&lang=…]`
    static func action(_ ctx: inout Context) throws -> Response {
        let q = ctx.request
        guard let apiKey = q.query("apiKey"), !apiKey.isEmpty, let project = ctx.app.settings.project(apiKey: apiKey) else {
            return problem(ctx, .invalid, continueURL: nil)
        }
        ctx.project = project
        let mode = q.query("mode") ?? ""
        guard mode == "signIn" || mode == "verifyEmail" else { return problem(ctx, .unsupported, continueURL: nil) }
        let record: EmailLinkRecord
        switch try ctx.emailLinks.status(of: q.query("oobCode")) {
        case .unknown: return problem(ctx, .invalid, continueURL: q.query("continueUrl"))
        case let .used(r): return problem(ctx, .used, continueURL: r.continueURL)
        case let .expired(r): return problem(ctx, .expired, continueURL: r.continueURL)
        case let .usable(r): record = r
        }
        guard record.requestType.mode == mode else { return problem(ctx, .invalid, continueURL: nil) }
        if let c = record.continueURL, !EmailLinkURLs.isAllowedContinueURL(c, project: project) {
            return problem(ctx, .continueNotAllowed, continueURL: nil)
        }
        let code = q.query("oobCode") ?? ""
        if record.canHandleCodeInApp, let target = record.continueURL {
            return .redirect(to: appending(target, [("mode", mode), ("oobCode", code), ("apiKey", apiKey), ("lang", record.lang)]))
        }
        return try confirmPage(ctx, record: record, oobCode: code, apiKey: apiKey, email: "", error: nil, status: 200)
    }

    /// `POST /__/auth/action` from the confirmation page.
    static func confirm(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: actionPurpose, token: ctx.request.formField("csrf"))
        let form = ctx.request
        guard let apiKey = form.formField("apiKey"), !apiKey.isEmpty, let project = ctx.app.settings.project(apiKey: apiKey) else {
            return problem(ctx, .invalid, continueURL: nil)
        }
        ctx.project = project
        let code = form.formField("oobCode") ?? ""
        let mode = form.formField("mode") ?? ""
        let record: EmailLinkRecord
        switch try ctx.emailLinks.status(of: code) {
        case .unknown: return problem(ctx, .invalid, continueURL: nil)
        case let .used(r): return problem(ctx, .used, continueURL: r.continueURL)
        case let .expired(r): return problem(ctx, .expired, continueURL: r.continueURL)
        case let .usable(r): record = r
        }
        guard record.requestType.mode == mode else { return problem(ctx, .invalid, continueURL: nil) }
        let continueURL = record.continueURL.flatMap { EmailLinkURLs.isAllowedContinueURL($0, project: project) ? $0 : nil }
        if record.continueURL != nil, continueURL == nil { return problem(ctx, .continueNotAllowed, continueURL: nil) }

        if record.requestType == .verifyEmail {
            do {
                let account = try ctx.emailLinks.applyVerifyEmail(oobCode: code, remoteAddress: ctx.request.remoteAddress)
                return .html(ctx.app.templates.render("pages/action_verified", ctx: ctx, values: [
                    "address": TemplateValue(around(ctx.strings["email.page.verified_body"], email: account.email ?? "")),
                    "continueUrl": .string(continueURL ?? ""), "needsAppToken": false,
                ]))
            } catch let e as AuthError {
                if let page = problem(ctx, for: e, continueURL: continueURL) { return page }
                throw e
            }
        }

        let typed = form.formField("email").map(EmailAddress.canonical).flatMap { $0.isEmpty ? nil : $0 }
        let sameBrowser = EmailLinks.browserMatches(record, pendingToken: ctx.request.cookies[pendingCookie])
        guard let email = typed ?? (sameBrowser ? record.email : nil) else {
            return try confirmPage(ctx, record: record, oobCode: code, apiKey: apiKey, email: "", askEmail: true,
                                   error: ctx.strings["email.page.error_missing_email"], status: 400)
        }
        let result: EmailLinkSignInResult
        do {
            result = try ctx.emailLinks.signIn(email: email, oobCode: code, issueTokens: false, remoteAddress: ctx.request.remoteAddress)
        } catch let e as AuthError where e.code == .invalidEmail {
            return try confirmPage(ctx, record: record, oobCode: code, apiKey: apiKey, email: form.formField("email") ?? "", askEmail: true,
                                   error: ctx.strings["email.page.error_mismatch"], status: 400)
        } catch let e as AuthError {
            if let page = problem(ctx, for: e, continueURL: continueURL) { return page }
            throw e
        }
        return try signedIn(ctx, result, continueURL: continueURL)
    }

    /// The answer to a sign-in by link or by code: on to the second-factor page, or the session
    /// cookie and `continueUrl` (else the account page); the pending cookie is done with.
    static func signedIn(_ ctx: Context, _ result: EmailLinkSignInResult, continueURL: String?) throws -> Response {
        var response: Response
        if let challenge = result.challenge {
            // A user with a second factor: no session yet; the second-factor page finishes it.
            response = MFAPage.begin(ctx, challenge: challenge, continueURL: continueURL)
        } else {
            response = Response.redirect(to: continueURL ?? "/__/auth/account")
            try SessionCookie.set(for: result.account, provider: "password", ctx: ctx, response: &response)
        }
        response.addCookie(Cookie(name: pendingCookie, value: "", path: "/", maxAge: 0, secure: true, httpOnly: true, sameSite: .lax))
        return response
    }

    /// The confirmation page: sign-in (the address shown when this browser asked, else a field
    /// for it) or email verification.
    static func confirmPage(_ ctx: Context, record: EmailLinkRecord, oobCode: String, apiKey: String, email: String,
                            askEmail: Bool = false, error: String?, status: Int) throws -> Response {
        var response = Response.html("", status: status)
        let csrf = try CSRF.token(ctx, purpose: actionPurpose, response: &response)
        var values: [String: TemplateValue] = ["csrf": .string(csrf), "apiKey": .string(apiKey), "oobCode": .string(oobCode),
                                               "email": .string(email), "needsAppToken": false]
        if let error { values["error"] = .string(error) }
        let template: String
        if record.requestType == .verifyEmail {
            template = "pages/action_verify"
            values["address"] = TemplateValue(around(ctx.strings["email.page.verify_body"], email: record.email))
        } else {
            template = "pages/action_signin"
            if !askEmail, EmailLinks.browserMatches(record, pendingToken: ctx.request.cookies[pendingCookie]) {
                values["known"] = TemplateValue(around(ctx.strings["email.page.confirm_known"], email: record.email))
            }
        }
        response.body = ctx.app.templates.renderBytes(template, ctx: ctx, values: values)
        return response
    }

    /// `GET /__/auth/links?link=<action URL>`: a browser (no app installed) goes on to the action
    /// handler — only ever to Gatehouse's own `/__/auth/action` on its configured public origin
    /// (the `Host` header is the client's to choose, so it never widens what is allowed).
    static func links(_ ctx: inout Context) throws -> Response {
        guard let link = ctx.request.query("link"), link.utf8.count <= 4096,
              link.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else { return problem(ctx, .invalid, continueURL: nil) }
        guard link.hasPrefix(ctx.origin + "/__/auth/action?") else { return problem(ctx, .invalid, continueURL: nil) }
        return .redirect(to: link)
    }

    /// `url` with `params` set in its query (replacing same-named ones), before any fragment.
    static func appending(_ url: String, _ params: [(String, String)]) -> String {
        var base = url, fragment = ""
        if let hash = url.firstIndex(of: "#") { base = String(url[..<hash]); fragment = String(url[hash...]) }
        var path = base, query: [String] = []
        if let qm = base.firstIndex(of: "?") {
            path = String(base[..<qm])
            let names = Set(params.map(\.0))
            query = base[base.index(after: qm)...].split(separator: "&").map(String.init).filter { pair in
                !names.contains(String(pair.split(separator: "=", maxSplits: 1).first ?? ""))
            }
        }
        query += params.map { $0.0 + "=" + PercentEncoding.encode($0.1) }
        return path + "?" + query.joined(separator: "&") + fragment
    }
}
