import AuthEngine
import HTTP
import TextCoding

/// `GET /__/auth/verify`, the target of nginx `auth_request` (gatehouse.md "Tokens, sessions,
/// nginx"; `nginx/protect.conf`). Reads the session cookie and answers:
/// - 200 with `X-Auth-User-Id`, `X-Auth-Phone`, `X-Auth-Email`, `X-Auth-Provider`;
/// - 401 with `Location: <origin>/__/auth/signin?continueUrl=<X-Original-URL>` when not signed in;
/// - 403 when signed in but the location's requirement (`X-Gatehouse-Require-Users`,
///   `X-Gatehouse-Require-Claim`) is not met;
/// - with `?require=mfa` (step-up, `nginx/protect-mfa.conf`), 401 with a `Location` to the
///   second-factor page (or the account page's enrolment) when the session passed no second factor
///   and was not signed in with a passkey;
/// - with `?require=passkey` (`nginx/protect-passkey.conf`), 401 with a `Location` to the passkey
///   sign-in page when the session was signed in another way (403 in a project without passkeys).
/// Never sets a cookie. Costs one RS256 verification plus a session lookup cached per process.
enum VerifyAPI {
    static let noStore = ("Cache-Control", "no-store")

    static func verify(_ ctx: inout Context) throws -> Response {
        if let id = ctx.request.header("x-gatehouse-project"), !id.isEmpty {
            guard let p = ctx.app.settings.project(id: id) else { throw AuthError(.projectNotFound) }
            ctx.project = p
        }
        let check = try ctx.sessions.authorize(cookie: ctx.sessionCookieValue, project: ctx.project.id, cache: ctx.app.sessionCache)
        guard let identity = check.identity else {
            if case let .signedOut(reason) = check {
                ctx.app.services.telemetry.verification(result: reason.rawValue)
                if reason != .missing { ctx.app.log.debug("verify: refused (\(reason.rawValue))", requestID: ctx.request.logID) }
            }
            return Response(status: 401, headers: [("Location", signInURL(ctx, continueURL: ctx.request.header("x-original-url"))), noStore])
        }
        let rule = SessionRequirements(users: ctx.request.header("x-gatehouse-require-users"),
                                       claims: ctx.request.header("x-gatehouse-require-claim"))
        guard rule.allows(identity) else {
            ctx.app.services.telemetry.verification(result: "forbidden")
            return Response(status: 403, headers: [noStore])
        }
        // `?require=mfa` (protect-mfa.conf) or `?require=passkey` (protect-passkey.conf): plain
        // verifies have no query, so they read none. A passkey sign-in is verified (a PIN or a
        // biometric on the authenticator): it is multi-factor on its own.
        let required = ctx.request.rawQuery.isEmpty ? nil : ctx.request.query("require")
        if required == "passkey", identity.provider != Passkeys.provider {
            guard ctx.project.passkeys.enabled else {
                ctx.app.services.telemetry.verification(result: "forbidden")
                return Response(status: 403, headers: [noStore])
            }
            ctx.app.services.telemetry.verification(result: "passkey_required")
            return Response(status: 401, headers: [("Location", passkeyURL(ctx, continueURL: ctx.request.header("x-original-url"))), noStore])
        }
        if required == "mfa", identity.secondFactor == nil, identity.provider != Passkeys.provider {
            guard ctx.project.mfa.allowsPhone else {
                ctx.app.services.telemetry.verification(result: "forbidden")
                return Response(status: 403, headers: [noStore])
            }
            ctx.app.services.telemetry.verification(result: "mfa_required")
            return Response(status: 401, headers: [("Location", secondFactorURL(ctx, identity, continueURL: ctx.request.header("x-original-url"))),
                                                   noStore])
        }
        var headers: [(String, String)] = [("X-Auth-User-Id", identity.uid), ("X-Auth-Provider", identity.provider)]
        if let p = identity.account.phoneNumber { headers.append(("X-Auth-Phone", p)) }
        if let e = identity.account.email { headers.append(("X-Auth-Email", e)) }
        headers.append(noStore)
        ctx.app.services.telemetry.verification(result: "ok")
        return Response(status: 200, headers: headers)
    }

    /// Where a signed-in user without a second factor goes for one: the second-factor page, or
    /// the account page's enrolment when the user has no factor yet; back to `continueURL` after.
    static func secondFactorURL(_ ctx: Context, _ identity: SessionIdentity, continueURL: String?) -> String {
        let back = ContinueURL.safe(continueURL, project: ctx.project)
        if identity.account.mfaEnrollments.isEmpty {
            return ctx.origin + "/__/auth/account?enrol=1" + (back.map { "&continueUrl=" + PercentEncoding.encode($0) } ?? "")
        }
        return ctx.origin + "/__/auth/mfa" + (back.map { "?continueUrl=" + PercentEncoding.encode($0) } ?? "")
    }

    /// The passkey sign-in page, back to `continueURL` after.
    static func passkeyURL(_ ctx: Context, continueURL: String?) -> String {
        let base = ctx.origin + "/__/auth/passkey"
        guard let back = ContinueURL.safe(continueURL, project: ctx.project) else { return base }
        return base + "?continueUrl=" + PercentEncoding.encode(back)
    }

    /// The hosted sign-in page, with `continueUrl` only when it is safe to come back to.
    static func signInURL(_ ctx: Context, continueURL: String?) -> String {
        let base = ctx.origin + "/__/auth/signin"
        guard let back = ContinueURL.safe(continueURL, project: ctx.project) else { return base }
        return base + "?continueUrl=" + PercentEncoding.encode(back)
    }
}
