import AuthEngine
import HTTP
import TextCoding

/// The console's Keys page (docs/console.md "Keys"): `GET /__/auth/console/keys` lists the
/// published signing keys (kid, algorithm, since when it signs, age, current, staged or retired
/// and until when it is published), never a private half; `POST` rotates, as
/// `gatehouse keys rotate` does (`KeyRing.rotate(store:random:actor:)`: a new signer at once,
/// audited `key.rotate` with the operator as actor).
enum ConsoleKeys {
    static let purpose = "keys|rotate"

    /// `GET /__/auth/console/keys`
    static func show(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            var response = Response()
            let notice = ctx.request.query("notice").flatMap { ctx.strings["console_ops.keys.notice.\($0)"] }
            return try page(ctx, op, response: &response, notice: notice)
        }
    }

    /// `POST /__/auth/console/keys`
    static func rotate(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            var response = Response()
            do {
                try ConsoleForm.consume(ctx, purpose: purpose)
            } catch let e as AuthError where e.code == .permissionDenied {
                return try page(ctx, op, response: &response, error: ctx.strings["console.errors.form"], status: 403)
            }
            try ctx.app.keyRing.rotate(store: ctx.store, random: ctx.app.random, actor: op.actor)
            return Console.back(ctx, "/keys?" + ConsoleUsers.query(ctx, Console.project(ctx)), notice: "rotate")
        }
    }

    static func page(_ ctx: Context, _ op: Operator, response: inout Response, notice: String? = nil, error: String? = nil,
                     status: Int = 200) throws -> Response {
        let s = ctx.strings
        let now = ctx.now
        // The store, not the ring's cache: a rotation just made (here or by another instance) shows at once.
        let keys = try ctx.store.publishedSigningKeys(at: now)
        let signer = keys.first { $0.createdAt <= now && ($0.retiredAt.map { $0 > now } ?? true) }
        var values: [String: TemplateValue] = [
            "keys": .list(keys.map { k in
                let state: String, stateLabel: String
                if k.kid == signer?.kid {
                    (state, stateLabel) = ("current", s["console_ops.keys.current"] ?? "current")
                } else if k.createdAt > now {
                    (state, stateLabel) = ("staged", s["console_ops.keys.staged"] ?? "staged")
                } else {
                    (state, stateLabel) = ("retired", s["console_ops.keys.retired"] ?? "retired")
                }
                var detail: String?
                if state == "staged" {
                    detail = (s["console_ops.keys.signs_from"] ?? "{time}").replacing("{time}", with: AccountPage.display(k.createdAt / 1000))
                } else if state == "retired", let until = k.expiresAt {
                    detail = (s["console_ops.keys.published_until"] ?? "{time}").replacing("{time}", with: AccountPage.display(until / 1000))
                }
                return .object([
                    "kid": .string(k.kid), "algorithm": .string(k.algorithm),
                    "created": .string(AccountPage.display(k.createdAt / 1000)), "createdISO": .string(RFC3339.format(k.createdAt)),
                    "age": .string(age(now - k.createdAt, s)),
                    "state": .string(state), "stateLabel": .string(stateLabel), "current": .bool(state == "current"),
                    "detail": ConsoleUsers.text(detail),
                ])
            }),
        ]
        values.merge(try ConsoleForm.fields(ctx, purpose: purpose, response: &response)) { $1 }
        if let notice { values["notice"] = .string(notice) }
        if let error { values["error"] = .string(error) }
        return Console.page("keys", section: "keys", ctx: ctx, op: op, values: values, response: &response, status: status)
    }

    /// `12 d`, `5 h`, `3 min` (a staged key's negative age reads as 0 min).
    static func age(_ ms: Millis, _ s: LocaleStrings) -> String {
        let minutes = max(0, ms) / 60_000
        let (key, n) = minutes >= 2 * 1440 ? ("age_days", minutes / 1440) : minutes >= 120 ? ("age_hours", minutes / 60) : ("age_minutes", minutes)
        return (s["console_ops.keys." + key] ?? "{n}").replacing("{n}", with: String(n))
    }
}
