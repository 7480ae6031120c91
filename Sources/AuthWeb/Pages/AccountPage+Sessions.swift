import AuthEngine
import AuthCrypto
import HTTP
import TextCoding

/// The account page's "Where you're signed in": every live sign-in of the user (`SignInList`:
/// hosted sessions and the refresh-token families of apps), with its device as people name it,
/// its network as a coarse prefix, when it started and was last used, how it signed in, and
/// "This device" for the browser's own session. Three forms, each a POST with CSRF:
/// - `POST /__/auth/account/sessions/revoke` (`id`): that one sign-in (a session, or an app's
///   refresh family); this browser's own id signs this browser out;
/// - `POST /__/auth/account/sessions/revoke-others`: every other session and every refresh family;
/// - `POST /__/auth/account/sessions/revoke-all`: everywhere (`validSince` too, so ID tokens
///   end as well); this browser is signed out with the rest.
/// This process evicts what it revoked from its verify cache at once; other processes see it
/// within their cache's 2 s (docs/sessions-and-nginx.md "Where you're signed in").
extension AccountPage {
    static let sessionsPurpose = "sessions"

    static func signInList(_ ctx: Context) -> SignInList { SignInList(store: ctx.store, clock: ctx.app.clock) }

    /// What `?sessions=` says after a sign-out, in the page's words.
    static func sessionsNotice(_ ctx: Context) -> String? {
        switch ctx.request.query("sessions") {
        case "revoked": return ctx.strings["sessions.revoked"]
        case "others": return ctx.strings["sessions.revoked_others"]
        default: return nil
        }
    }

    /// The section's values (`sessions`).
    static func sessionValues(_ ctx: Context, _ id: SessionIdentity, response: inout Response) throws -> TemplateValue {
        let s = ctx.strings
        let entries = try signInList(ctx).list(account: id.account, currentSession: id.sidHash)
        let csrf = try CSRF.token(ctx, purpose: sessionsPurpose, response: &response)
        let items: [TemplateValue] = entries.enumerated().map { i, e in
            .object([
                "id": .string(e.id), "index": .string(String(i)), "kind": .string(e.kind.rawValue),
                "device": .string(deviceText(e.device.name, s)),
                "network": .string(e.device.network.map { (s["sessions.network"] ?? "{network}").replacing("{network}", with: $0) }
                    ?? (s["sessions.network_unknown"] ?? "")),
                "started": .string(display(e.startedAt / 1000)), "startedISO": .string(RFC3339.format(e.startedAt)),
                "lastUsed": .string(display(e.lastUsedAt / 1000)), "lastUsedISO": .string(RFC3339.format(e.lastUsedAt)),
                "how": .string(howText(e, account: id.account, s)),
                "current": .bool(e.isCurrent),
            ])
        }
        var section: [String: TemplateValue] = [
            "sessionItems": .list(items), "sessionsCsrf": .string(csrf),
            "sessionOthers": .bool(entries.contains { !$0.isCurrent }),
        ]
        if let notice = sessionsNotice(ctx) { section["sessionsNotice"] = .string(notice) }
        return .object(section)
    }

    /// "Firefox on Windows", "App on iOS", "MyApp on Android", "curl", "Unknown device".
    static func deviceText(_ d: DeviceName, _ s: LocaleStrings) -> String {
        func fill(_ key: String, _ fallback: String) -> String {
            (s["sessions.device." + key] ?? fallback).replacing("{name}", with: d.browser ?? "").replacing("{system}", with: d.system ?? "")
        }
        switch (d.kind, d.browser, d.system) {
        case (.unknown, _, _), (_, nil, nil): return fill("unknown", "Unknown device")
        case (.app, nil, _?): return fill("app_on", "App on {system}")
        case (.browser, nil, _?): return fill("browser_on", "Browser on {system}")
        case (_, _?, nil): return fill("named", "{name}")
        default: return fill("named_on", "{name} on {system}")
        }
    }

    /// The first factor, and the second the sign-in passed ("Email link, then SMS to •••78").
    static func howText(_ e: SignInList.Entry, account: Account, _ s: LocaleStrings) -> String {
        let first = s["account.provider.\(e.provider)"] ?? s["account.provider.other"] ?? e.provider
        guard let factor = e.secondFactor.map({ SecondFactor(identifier: $0) }) else { return first }
        let enrollment = account.mfaEnrollments.first { $0.enrollmentID == factor.identifier }
        let second = secondFactorText(enrollment, factor, s)
        return (s["sessions.how_then"] ?? "{first}, then {second}").replacing("{first}", with: first).replacing("{second}", with: second)
    }

    static func sessionsRedirect(_ ctx: Context, _ what: String) -> Response {
        .redirect(to: "/__/auth/account?sessions=\(what)&hl=" + PercentEncoding.encode(ctx.locale) + "#sessions")
    }

    /// `POST /__/auth/account/sessions/revoke` (`id`): signs out the one sign-in it names.
    static func revokeSession(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: sessionsPurpose, token: f["csrf"])
        guard let id = try identity(ctx) else { return .redirect(to: "/__/auth/account") }
        guard let target = f["id"], !target.isEmpty, target.utf8.count <= 200 else { return sessionsRedirect(ctx, "none") }
        if let current = id.sidHash, target == "s." + Hex.encode(current) {
            // This browser's own entry: the sign-out button's effect.
            var response = Response.redirect(to: "/__/auth/account?signedOut=1")
            SessionCookie.clear(ctx: ctx, response: &response)
            return response
        }
        let revoked = try signInList(ctx).signOut(account: id.account, id: target, remoteAddress: ctx.request.remoteAddress)
        if revoked, target.hasPrefix("s."), let hash = Hex.decode(String(target.dropFirst(2))) { ctx.app.sessionCache.evict(hash) }
        return sessionsRedirect(ctx, revoked ? "revoked" : "none")
    }

    /// `POST /__/auth/account/sessions/revoke-others`: every sign-in but this browser's.
    static func revokeOtherSessions(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: sessionsPurpose, token: ctx.request.formField(CSRF.fieldName))
        guard let id = try identity(ctx) else { return .redirect(to: "/__/auth/account") }
        try signInList(ctx).signOutOthers(account: id.account, currentSession: id.sidHash, remoteAddress: ctx.request.remoteAddress)
        ctx.app.sessionCache.evict(project: ctx.project.id, localID: id.account.localID)
        return sessionsRedirect(ctx, "others")
    }

    /// `POST /__/auth/account/sessions/revoke-all`: everywhere, this browser included: its
    /// cookie is deleted and the page shows the signed-out state.
    static func revokeAllSessions(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: sessionsPurpose, token: ctx.request.formField(CSRF.fieldName))
        guard let id = try identity(ctx) else { return .redirect(to: "/__/auth/account") }
        try signInList(ctx).signOutEverywhere(account: id.account, remoteAddress: ctx.request.remoteAddress)
        ctx.app.sessionCache.evict(project: ctx.project.id, localID: id.account.localID)
        var response = Response.redirect(to: "/__/auth/account?signedOut=everywhere&hl=" + PercentEncoding.encode(ctx.locale))
        SessionCookie.clear(ctx: ctx, response: &response)
        return response
    }
}
