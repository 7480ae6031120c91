import AuthEngine
import HTTP

/// The session cookie the hosted pages set after sign-in: a session JWT (issuer
/// `https://session.firebase.google.com/<project>`), `HttpOnly; Secure; SameSite=Lax; Path=/`,
/// backed by a server-side session (its `sid` claim) so that the idle timeout
/// (`SessionPolicy.idleTimeoutSeconds`) and sign-out are enforced by Gatehouse.
enum SessionCookie {
    static func cookie(_ value: String, project: ProjectSettings, maxAge: Int?) -> Cookie {
        Cookie(name: project.session.cookieName, value: value, path: "/", domain: project.session.cookieDomain, maxAge: maxAge,
               secure: true, httpOnly: true, sameSite: .lax)
    }

    /// Starts a session for `account` signed in with `provider` (and `secondFactor`, when the
    /// sign-in passed one; `authTime` when it happened earlier than now) and adds its cookie to
    /// `response`. A session the browser already had is revoked (one cookie, one session). The
    /// session records the browser's device (`SignInDevice`: what the account page lists).
    static func set(for account: Account, provider: String, authTime: Int64? = nil, secondFactor: SecondFactor? = nil,
                    ctx: Context, response: inout Response) throws {
        let policy = ctx.project.session
        if let previous = ctx.sessionCookieValue {
            _ = try? ctx.sessions.signOut(cookie: previous, project: ctx.project.id, cache: ctx.app.sessionCache)
        }
        let jwt = try ctx.sessions.startHostedSession(account: account, provider: provider, lifetime: policy.cookieLifetimeSeconds,
                                                      idleTimeout: policy.idleTimeoutSeconds, authTime: authTime,
                                                      secondFactor: secondFactor, device: SignInRecording.device(ctx))
        response.addCookie(cookie(jwt, project: ctx.project, maxAge: Int(policy.cookieLifetimeSeconds)))
        // A sign-in (not a session re-issued for an earlier one after a change, which passes its
        // `authTime`) meets the new sign-in notice.
        if authTime == nil { SignInRecording.hostedSignIn(ctx, account: account, provider: provider) }
        SessionPurge.runIfDue(ctx)
    }

    /// Revokes the request's session (if any) and deletes the cookie.
    static func clear(ctx: Context, response: inout Response) {
        if let current = ctx.sessionCookieValue {
            do { try ctx.sessions.signOut(cookie: current, project: ctx.project.id, cache: ctx.app.sessionCache) } catch {
                ctx.app.log.warning("sign-out: could not revoke the session: \(error)", requestID: ctx.request.logID)
            }
        }
        response.addCookie(cookie("", project: ctx.project, maxAge: 0))
    }
}

/// Where a hosted page may send the browser after sign-in: `continueUrl` only when absolute
/// http(s) on an authorized domain; otherwise Gatehouse's own signed-in page.
enum ContinueURL {
    static func safe(_ raw: String?, project: ProjectSettings) -> String? {
        guard let raw, !raw.isEmpty, raw.count <= 2048, let (scheme, host) = parts(raw) else { return nil }
        guard scheme == "https" || scheme == "http", project.isAuthorized(host: host) else { return nil }
        return raw
    }

    /// (scheme, host) of an absolute URL, lower-cased; nil if malformed.
    static func parts(_ url: String) -> (String, String)? {
        guard let sep = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<sep.lowerBound].lowercased()
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }), scheme.first!.isLetter else { return nil }
        let rest = url[sep.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@"), !authority.contains("\\") else { return nil }
        var host = String(authority)
        if host.hasPrefix("[") { host = String(host.prefix { $0 != "]" }) + "]" }
        else if let colon = host.lastIndex(of: ":") {
            guard host[host.index(after: colon)...].allSatisfy(\.isNumber) else { return nil }
            host = String(host[..<colon])
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || "-.[]:".contains($0) }) else { return nil }
        return (scheme, host.lowercased())
    }
}
