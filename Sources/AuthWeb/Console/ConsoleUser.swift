import AuthEngine
import AuthCrypto
import HTTP
import TextCoding

/// One user in the console (docs/console.md "Users"): `GET /__/auth/console/users/{uid}` (or
/// `/__/auth/console/user?uid=` for a uid that is not one path segment) shows the account, its
/// sign-in methods, second factors (phones obfuscated, as the account page shows them), passkeys,
/// live sign-ins (`SignInList`) and audit trail (newest 50, then `before=<id>`).
///
/// Actions, each confirmed first: `?confirm=<action>` renders the confirmation with the form, whose
/// POST to the same address carries `action` (and `factor`), the CSRF token and a single-use form
/// token bound to the action, project, user and factor (`ConsoleForm`). Each goes through the
/// engine's admin operations, audited with the operator as actor:
/// - `disable`: `AccountAdmin.update` (disabled, and `validSince` now: every sign-in ends, so
///   enabling the account later brings none back); `enable`: the same without revocation;
/// - `signout`: `SignInList.signOutEverywhere`;
/// - `remove_factor`: `AccountAdmin.removeFactor` (every sign-in ends, as a withdrawal's);
/// - `delete`: `AccountAdmin.delete`.
/// An operator may not disable or delete its own account here (it would shut itself out).
enum ConsoleUser {
    static let actions = ["disable", "enable", "signout", "remove_factor", "delete"]
    static let trailSize = 50

    /// `GET`: the user's page, or an action's confirmation.
    static func show(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            let project = Console.project(ctx)
            guard let uid = uid(ctx), let account = try ctx.store.account(project: project.id, localID: uid) else {
                return missing(ctx, op)
            }
            if let action = ctx.request.query("confirm") {
                return try confirmPage(ctx, op, account, project, action: action, factor: ctx.request.query("factor"))
            }
            let notice = ctx.request.query("notice").flatMap { ctx.strings["console_users.notice.\($0)"] }
            return try userPage(ctx, op, account, project, notice: notice)
        }
    }

    /// `POST`: the confirmed action.
    static func act(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            let s = ctx.strings
            let project = Console.project(ctx)
            let action = ctx.request.formField("action") ?? ""
            let factor = ctx.request.formField("factor").flatMap { $0.isEmpty ? nil : $0 }
            let uid = uid(ctx)
            do {
                try ConsoleForm.consume(ctx, purpose: purpose(action, project: project.id, uid: uid ?? "", factor: factor))
            } catch let e as AuthError where e.code == .permissionDenied {
                guard let uid, let account = try ctx.store.account(project: project.id, localID: uid) else { return missing(ctx, op) }
                return try userPage(ctx, op, account, project, error: s["console.errors.form"], status: 403)
            }
            guard let uid, let account = try ctx.store.account(project: project.id, localID: uid) else { return missing(ctx, op) }
            guard actions.contains(action) else {
                return try userPage(ctx, op, account, project, error: s["console_users.errors.action"], status: 400)
            }
            if let refusal = selfRefusal(action, account, op, project, s) {
                return try userPage(ctx, op, account, project, error: refusal, status: 403)
            }
            let admin = AccountAdmin(store: ctx.store, clock: ctx.app.clock, random: ctx.app.random, cache: ctx.app.sessionCache, actor: op.actor)
            do {
                switch action {
                case "disable", "enable":
                    var c = AccountChanges()
                    c.localID = uid
                    c.disabled = action == "disable"
                    // Disabling ends every sign-in too: enabling later must not bring them back.
                    if action == "disable" { c.validSince = ctx.now / 1000 }
                    _ = try admin.update(project: project.id, c)
                case "signout":
                    try SignInList(store: ctx.store, clock: ctx.app.clock).signOutEverywhere(
                        account: account, remoteAddress: ctx.request.remoteAddress, actor: op.actor, reason: "signed out everywhere by an operator")
                    ctx.app.sessionCache.evict(project: project.id, localID: uid)
                case "remove_factor":
                    try admin.removeFactor(project: project.id, localID: uid, enrollmentID: factor ?? "", remoteAddress: ctx.request.remoteAddress)
                default:
                    try admin.delete(project: project.id, localID: uid)
                    return Console.back(ctx, "/users?" + ConsoleUsers.query(ctx, project), notice: action)
                }
            } catch let e as AuthError where e.code == .mfaEnrollmentNotFound || e.code == .userNotFound {
                let fresh = try ctx.store.account(project: project.id, localID: uid) ?? account
                return try userPage(ctx, op, fresh, project, error: s["console.errors.not_found"], status: 409)
            }
            return Console.back(ctx, String(ConsoleUsers.userURL(uid, ctx: ctx, project: project).dropFirst(Console.base.count)), notice: action)
        }
    }

    /// The uid of the path (`{uid}`) or of the query; nil for one no account can have.
    static func uid(_ ctx: Context) -> String? {
        guard let raw = ctx.params["uid"] ?? ctx.request.query("uid") ?? ctx.request.formField("uid"),
              !raw.isEmpty, raw.utf8.count <= 128 else { return nil }
        return raw
    }

    /// What a form token is good for: one action on one user (and factor) of one project.
    static func purpose(_ action: String, project: String, uid: String, factor: String?) -> String {
        "user|" + action + "|" + project + "|" + uid + "|" + (factor ?? "")
    }

    /// An operator's own account cannot be disabled or deleted from the console.
    static func selfRefusal(_ action: String, _ account: Account, _ op: Operator, _ project: ProjectSettings, _ s: LocaleStrings) -> String? {
        guard account.localID == op.uid, project.id == op.account.projectID else { return nil }
        switch action {
        case "delete": return s["console_users.errors.self_delete"]
        case "disable": return s["console_users.errors.self_disable"]
        default: return nil
        }
    }

    static func missing(_ ctx: Context, _ op: Operator) -> Response {
        var response = Response()
        return Console.page("user", section: "users", ctx: ctx, op: op, values: [
            "missing": true, "error": .string(ctx.strings["console_users.user.missing"] ?? ""),
            "usersHref": .string(Console.base + "/users?" + ConsoleUsers.query(ctx, Console.project(ctx))),
        ], response: &response, status: 404)
    }

    // MARK: The page

    static func userPage(_ ctx: Context, _ op: Operator, _ a: Account, _ project: ProjectSettings, notice: String? = nil,
                         error: String? = nil, status: Int = 200) throws -> Response {
        let s = ctx.strings
        let href = ConsoleUsers.userURL(a.localID, ctx: ctx, project: project)
        func confirmHref(_ action: String, factor: String? = nil) -> String {
            href + "&confirm=" + action + (factor.map { "&factor=" + PercentEncoding.encode($0) } ?? "")
        }
        let isSelf = a.localID == op.uid && project.id == op.account.projectID
        var values: [String: TemplateValue] = [
            "uid": .string(a.localID), "email": ConsoleUsers.text(a.email), "emailVerified": .bool(a.emailVerified),
            "phone": ConsoleUsers.text(a.phoneNumber), "displayName": ConsoleUsers.text(a.displayName),
            "created": .string(AccountPage.display(a.createdAt / 1000)), "createdISO": .string(RFC3339.format(a.createdAt)),
            "lastSignIn": ConsoleUsers.text(a.lastLoginAt.map { AccountPage.display($0 / 1000) }),
            "lastSignInISO": .string(a.lastLoginAt.map { RFC3339.format($0) } ?? ""),
            "validSince": ConsoleUsers.text(a.validSince > 0 ? AccountPage.display(a.validSince) : nil),
            "disabled": .bool(a.disabled), "anonymous": .bool(a.anonymous),
            "usersHref": .string(Console.base + "/users?" + ConsoleUsers.query(ctx, project)),
            "isSelf": .bool(isSelf),
            "signoutHref": .string(confirmHref("signout")),
        ]
        if a.disabled { values["enableHref"] = .string(confirmHref("enable")) }
        if !a.disabled, !isSelf { values["disableHref"] = .string(confirmHref("disable")) }
        if !isSelf { values["deleteHref"] = .string(confirmHref("delete")) }
        values["providers"] = .list(a.providers.map { p in
            .object(["name": .string(s["account.provider.\(p.providerID)"] ?? p.providerID), "id": .string(p.providerID),
                     "identifier": .string(p.email ?? p.phoneNumber ?? p.rawID)])
        })
        values["factors"] = .list(a.mfaEnrollments.enumerated().map { i, e in
            .object(["id": .string(e.enrollmentID), "index": .string(String(i)), "text": .string(factorText(e, s)),
                     "name": ConsoleUsers.text(e.displayName), "enrolled": .string(AccountPage.display(e.enrolledAt / 1000)),
                     "enrolledISO": .string(RFC3339.format(e.enrolledAt)), "removeHref": .string(confirmHref("remove_factor", factor: e.enrollmentID))])
        })
        let passkeys = try ctx.store.passkeys(project: project.id, localID: a.localID)
        if !passkeys.isEmpty {
            values["hasPasskeys"] = true
            values["passkeys"] = .list(passkeys.map { k in
                .object(["name": .string(k.name.flatMap { $0.isEmpty ? nil : $0 } ?? s["console_users.user.passkey_unnamed"] ?? "Passkey"),
                         "created": .string(AccountPage.display(k.createdAt / 1000)), "createdISO": .string(RFC3339.format(k.createdAt)),
                         "lastUsed": ConsoleUsers.text(k.lastUsedAt.map { AccountPage.display($0 / 1000) }),
                         "lastUsedISO": .string(k.lastUsedAt.map { RFC3339.format($0) } ?? "")])
            })
        }
        let live = try SignInList(store: ctx.store, clock: ctx.app.clock).list(account: a, currentSession: nil)
        values["sessions"] = .list(live.map { e in
            .object(["kind": .string(s["console_users.user.kind_\(e.kind.rawValue)"] ?? e.kind.rawValue),
                     "device": .string(AccountPage.deviceText(e.device.name, s)), "network": ConsoleUsers.text(e.device.network),
                     "how": .string(AccountPage.howText(e, account: a, s)),
                     "started": .string(AccountPage.display(e.startedAt / 1000)), "startedISO": .string(RFC3339.format(e.startedAt)),
                     "lastUsed": .string(AccountPage.display(e.lastUsedAt / 1000)), "lastUsedISO": .string(RFC3339.format(e.lastUsedAt))])
        })
        var filter = AuditFilter()
        filter.project = project.id
        filter.localID = a.localID
        filter.limit = trailSize + 1
        if let before = ctx.request.query("before").flatMap({ Int64($0) }), before > 0 {
            filter.beforeID = before
            values["trailNewestHref"] = .string(href + "#trail")
        }
        var trail = try ctx.store.auditPage(filter)
        if trail.count > trailSize {
            trail.removeLast(trail.count - trailSize)
            if let last = trail.last { values["trailMoreHref"] = .string(href + "&before=" + String(last.id) + "#trail") }
        }
        values["hasTrail"] = .bool(!trail.isEmpty)
        values["trail"] = .list(trail.map { r in
            .object(["at": .string(AccountPage.display(r.at / 1000)), "atISO": .string(RFC3339.format(r.at)),
                     "event": .string(r.event.event.rawValue),
                     "actor": .string(r.event.actor ?? s["console_users.user.actor_user"] ?? "user"),
                     "outcome": .string(r.event.outcome), "refused": .bool(r.event.outcome != "ok"),
                     "client": .string(r.event.remoteAddress ?? ""), "detail": .string(r.event.detail ?? "")])
        })
        if let notice { values["notice"] = .string(notice) }
        if let error { values["error"] = .string(error) }
        var response = Response()
        return Console.page("user", section: "users", ctx: ctx, op: op, values: values, response: &response, status: status)
    }

    /// "SMS to +*******1234" or "Authenticator app".
    static func factorText(_ e: MFAEnrollment, _ s: LocaleStrings) -> String {
        if e.totp != nil { return s["console_users.user.factor_totp"] ?? "Authenticator app" }
        return (s["console_users.user.factor_phone"] ?? "SMS to {phone}").replacing("{phone}", with: e.obfuscatedPhone)
    }

    // MARK: Confirmation

    static func confirmPage(_ ctx: Context, _ op: Operator, _ a: Account, _ project: ProjectSettings, action: String,
                            factor: String?) throws -> Response {
        let s = ctx.strings
        guard actions.contains(action) else { return try userPage(ctx, op, a, project, error: s["console_users.errors.action"], status: 400) }
        if let refusal = selfRefusal(action, a, op, project, s) { return try userPage(ctx, op, a, project, error: refusal, status: 403) }
        var body = s["console_users.confirm.\(action).body"] ?? ""
        var factorID: String?
        if action == "remove_factor" {
            guard let id = factor, let e = a.mfaEnrollments.first(where: { $0.enrollmentID == id }) else {
                return try userPage(ctx, op, a, project, error: s["console_users.errors.factor"], status: 404)
            }
            factorID = id
            let named = e.displayName.flatMap { $0.isEmpty ? nil : factorText(e, s) + " (" + $0 + ")" } ?? factorText(e, s)
            body = body.replacing("{factor}", with: named)
        }
        let href = ConsoleUsers.userURL(a.localID, ctx: ctx, project: project)
        var response = Response()
        var values = try ConsoleForm.fields(ctx, purpose: purpose(action, project: project.id, uid: a.localID, factor: factorID), response: &response)
        values["uid"] = .string(a.localID)
        values["email"] = ConsoleUsers.text(a.email)
        values["phone"] = ConsoleUsers.text(a.phoneNumber)
        values["action"] = .string(action)
        values["factor"] = ConsoleUsers.text(factorID)
        values["formAction"] = .string(href)
        values["cancelHref"] = .string(href)
        values["heading"] = .string(s["console_users.confirm.\(action).title"] ?? action)
        values["body"] = .string(body)
        values["button"] = .string(s["console_users.confirm.\(action).button"] ?? action)
        values["danger"] = .bool(action != "enable")
        return Console.page("confirm", section: "users", ctx: ctx, op: op, values: values, response: &response)
    }
}
