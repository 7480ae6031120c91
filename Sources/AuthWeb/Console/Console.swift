import AuthCrypto
import AuthEngine
import HTTP
import TextCoding

/// The operator console (`/__/auth/console/`; docs/console.md). nginx protects it with a second
/// factor (its location in `nginx/gatehouse-locations.conf`: `auth_request` to `verify?require=mfa`),
/// and every handler checks again here, so a console request that reaches Gatehouse some other way
/// is refused just the same:
/// - signed in to the deployment's own project (`WebSettings.defaultProject`), else to sign-in;
/// - with a second factor or a passkey, else to the second-factor step;
/// - as an operator (`operators`: `gatehouse operators add`), else 403 with nothing about why.
/// Every form carries a CSRF token and a single-use form token (`ConsoleForm`); every action is
/// audited with the operator as its actor (`operator:<uid>`).
struct Operator {
    let identity: SessionIdentity
    var account: Account { identity.account }
    var uid: String { identity.account.localID }
    /// The audit log's actor of what this operator does.
    var actor: String { "operator:" + identity.account.localID }
}

enum Console {
    static let base = "/__/auth/console"

    /// The operator behind the request, or the response that refuses it.
    static func authorize(_ ctx: Context) throws -> Result<Operator, Refusal> {
        let home = ctx.app.settings.defaultProject
        let here = ctx.origin + ctx.request.path + (ctx.request.rawQuery.isEmpty ? "" : "?" + ctx.request.rawQuery)
        let check = try ctx.sessions.authorize(cookie: ctx.sessionCookieValue, project: home.id, cache: ctx.app.sessionCache)
        guard let identity = check.identity else { return .failure(Refusal(Response.redirect(to: VerifyAPI.signInURL(ctx, continueURL: here)))) }
        guard identity.secondFactor != nil || identity.provider == Passkeys.provider else {
            if home.mfa.allowsPhone {
                return .failure(Refusal(Response.redirect(to: VerifyAPI.secondFactorURL(ctx, identity, continueURL: here))))
            }
            return .failure(Refusal(forbidden(ctx)))
        }
        guard try ctx.store.isOperator(project: home.id, localID: identity.account.localID) else { return .failure(Refusal(forbidden(ctx))) }
        return .success(Operator(identity: identity))
    }

    struct Refusal: Error { let response: Response; init(_ r: Response) { response = r } }

    /// Runs `body` for an operator; anyone else gets the refusal.
    static func handle(_ ctx: inout Context, _ body: (inout Context, Operator) throws -> Response) throws -> Response {
        switch try authorize(ctx) {
        case let .failure(refusal): return refusal.response
        case let .success(op): return try body(&ctx, op)
        }
    }

    /// The same page for everyone who may not see the console: no hint of who is an operator.
    static func forbidden(_ ctx: Context) -> Response {
        var r = Response()
        r.status = 403
        r.headers.insert(("Content-Type", "text/html; charset=utf-8"), at: 0)
        r.body = ctx.app.templates.renderBytes("console/forbidden", ctx: ctx, values: [:])
        return r
    }

    /// The project the console shows (`?project=`, one of the configured ones; the deployment's
    /// own by default).
    static func project(_ ctx: Context) -> ProjectSettings {
        let raw = ctx.request.query("project") ?? ctx.request.formField("project")
        return raw.flatMap { ctx.app.settings.project(id: $0) } ?? ctx.app.settings.defaultProject
    }

    /// A console page: the layout's navigation (`section` marks the current one), the project
    /// picker, the operator's name, plus the page's own values.
    static func page(_ name: String, section: String, ctx: Context, op: Operator, values: [String: TemplateValue],
                     response: inout Response, status: Int = 200) -> Response {
        var v = values
        let project = Console.project(ctx)
        v["operatorName"] = .string(op.account.email ?? op.account.phoneNumber ?? op.uid)
        v["projectId"] = .string(project.id)
        v["projectQuery"] = .string("project=" + PercentEncoding.encode(project.id))
        v["projects"] = .list(ctx.app.settings.projects.map { p in
            .object(["id": .string(p.id), "selected": .bool(p.id == project.id)])
        })
        v["multipleProjects"] = .bool(ctx.app.settings.projects.count > 1)
        v["nav_" + section] = .bool(true)
        response.status = status
        response.headers.insert(("Content-Type", "text/html; charset=utf-8"), at: 0)
        response.body = ctx.app.templates.renderBytes("console/" + name, ctx: ctx, values: v)
        return response
    }

    /// A redirect back into the console after an action (303: the browser GETs it).
    static func back(_ ctx: Context, _ path: String, notice: String) -> Response {
        let sep = path.contains("?") ? "&" : "?"
        var r = Response.redirect(to: base + path + sep + "notice=" + PercentEncoding.encode(notice))
        r.status = 303
        return r
    }
}

/// The console's forms: each carries the CSRF token of its purpose and a form token that may be
/// used once (`ConsoleForm.consume`): a form posted twice, or replayed from a log or a proxy,
/// is refused. The form token is `<random>.<issued ms>.<MAC>` under the CSRF key, accepted for
/// an hour, its use counted under `console-form` in the limit counters (kept as long).
enum ConsoleForm {
    static let field = "formToken"
    static let lifetime: Millis = 3_600_000
    static let rule = Limits.Rule("console-form", max: 1, per: 3_600)

    /// The hidden fields of one form.
    static func fields(_ ctx: Context, purpose: String, response: inout Response) throws -> [String: TemplateValue] {
        let csrf = try CSRF.token(ctx, purpose: "console-" + purpose, response: &response)
        let body = ctx.app.random.token(bytes: 16) + "." + String(ctx.now)
        let mac = Base64URL.encode(try CSRF.key(ctx).mac(Array(("console-form|" + purpose + "|" + body).utf8)))
        return ["csrf": .string(csrf), "formToken": .string(body + "." + mac)]
    }

    /// Checks the CSRF token and uses the form token up; throws `PERMISSION_DENIED` for either.
    static func consume(_ ctx: Context, purpose: String) throws {
        try CSRF.verify(ctx, purpose: "console-" + purpose, token: ctx.request.formField(CSRF.fieldName))
        guard let token = ctx.request.formField(field), token.utf8.count <= 200 else {
            throw AuthError(.permissionDenied, "missing form token")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let issued = Millis(parts[1]) else { throw AuthError(.permissionDenied, "invalid form token") }
        let body = parts[0] + "." + parts[1]
        let mac = Base64URL.encode(try CSRF.key(ctx).mac(Array(("console-form|" + purpose + "|" + body).utf8)))
        guard Digest.constantTimeEqual(mac, String(parts[2])) else { throw AuthError(.permissionDenied, "invalid form token") }
        let now = ctx.now
        guard issued <= now + 60_000, now - issued <= lifetime else { throw AuthError(.permissionDenied, "expired form token") }
        // Counted in its own transaction: a replay is refused whatever the action then does.
        let fresh = try Limits(store: ctx.store, clock: ctx.app.clock).record(rule, key: Base64URL.encode(Digest.sha256(token)))
        guard fresh else { throw AuthError(.permissionDenied, "form already used") }
    }
}
