import AuthEngine
import HTTP

/// The session cookie the hosted pages set after sign-in: a session JWT (issuer
/// `https://session.firebase.google.com/<project>`), `HttpOnly; Secure; SameSite=Lax; Path=/`.
enum SessionCookie {
    static func cookie(_ value: String, project: ProjectSettings, maxAge: Int?) -> Cookie {
        Cookie(name: project.session.cookieName, value: value, path: "/", domain: project.session.cookieDomain, maxAge: maxAge,
               secure: true, httpOnly: true, sameSite: .lax)
    }

    /// Mints the cookie for `account` signed in with `provider` and adds it to `response`.
    static func set(for account: Account, provider: String, ctx: Context, response: inout Response) throws {
        let lifetime = ctx.project.session.cookieLifetimeSeconds
        let now = ctx.app.clock.nowSeconds
        let claims = ctx.app.tokens.claims(for: account, provider: provider, kind: .sessionCookie, issuedAt: now, lifetime: lifetime, authTime: now)
        let jwt = try ctx.app.tokens.sign(claims, store: ctx.store)
        response.addCookie(cookie(jwt, project: ctx.project, maxAge: Int(lifetime)))
    }

    static func clear(ctx: Context, response: inout Response) {
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
        guard let sep = url.range(of: "://") else { return nil }
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
