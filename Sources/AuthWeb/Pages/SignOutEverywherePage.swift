import AuthEngine
import HTTP

/// The new sign-in notice's link (`SignInNotice`): `GET /__/auth/signout-everywhere?token=` only
/// shows what the button will do, because mail scanners and link previews fetch every link in a
/// message and must not sign anyone out; `POST /__/auth/signout-everywhere` (CSRF, the token in
/// the form) signs the account out everywhere, once. A used, expired or forged link shows why it
/// cannot be used (400). The pages are the link's project's (the token names it), whatever host
/// the mail pointed at; `no-store` and `no-referrer`, as the URL carries the token.
enum SignOutEverywherePage {
    static let purpose = "signout-everywhere"
    static let headers = [("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer")]

    static func flow(_ ctx: Context) -> SignInNotice {
        SignInNotice(store: ctx.store, clock: ctx.app.clock, random: ctx.app.random, policy: ctx.project.signInNotice)
    }

    /// The link's project, when this deployment has it (else the default one's pages refuse it).
    static func select(_ ctx: inout Context, token: String?) {
        if let id = SignInNotice.project(ofToken: token), let p = ctx.app.settings.project(id: id) { ctx.project = p }
    }

    static func show(_ ctx: inout Context) throws -> Response {
        let token = ctx.request.query("token")
        select(&ctx, token: token)
        do {
            _ = try flow(ctx).check(token: token)
        } catch let e as AuthError where e.code == .invalidOobCode || e.code == .expiredOobCode {
            return page(ctx, ["invalid": .bool(true)], heading: "invalid_title", status: 400)
        }
        var response = Response()
        let csrf = try CSRF.token(ctx, purpose: purpose, response: &response)
        let body = (ctx.strings["sessions.notice.page.body"] ?? "").replacing("{project}", with: ctx.project.id)
        let shown = page(ctx, ["confirm": .bool(true), "csrf": .string(csrf), "token": .string(token ?? ""), "body": .string(body)],
                         heading: "title", status: 200)
        response.status = shown.status
        response.headers = shown.headers + response.headers
        response.body = shown.body
        return response
    }

    static func signOut(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        select(&ctx, token: f["token"])
        try CSRF.verify(ctx, purpose: purpose, token: f["csrf"])
        let account: Account
        do {
            account = try flow(ctx).signOutEverywhere(token: f["token"], remoteAddress: ctx.request.remoteAddress)
        } catch let e as AuthError where e.code == .invalidOobCode || e.code == .expiredOobCode {
            return page(ctx, ["invalid": .bool(true)], heading: "invalid_title", status: 400)
        }
        ctx.app.sessionCache.evict(project: account.projectID, localID: account.localID)
        var response = page(ctx, ["done": .bool(true)], heading: "done_title", status: 200)
        // This browser's cookie is refused now in any case; delete it when it was this project's.
        if ctx.sessionCookieValue != nil { SessionCookie.clear(ctx: ctx, response: &response) }
        return response
    }

    static func page(_ ctx: Context, _ values: [String: TemplateValue], heading: String, status: Int) -> Response {
        var v = values
        v["heading"] = .string(ctx.strings["sessions.notice.page." + heading] ?? "")
        return .html(ctx.app.templates.render("pages/signout_everywhere", ctx: ctx, values: v), status: status, headers: headers)
    }
}
