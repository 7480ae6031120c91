import AuthCrypto
import AuthEngine
import HTTP

/// CSRF protection for every form: a random per-browser cookie (`__Host-gh_csrf`, HttpOnly,
/// SameSite=Strict) and, in each form, an HMAC of it bound to the form's purpose. POSTs must
/// carry both; a cross-site POST has neither the cookie (SameSite) nor the token.
enum CSRF {
    static let cookieName = "__Host-gh_csrf"
    static let fieldName = "csrf"
    static let cookieAttributes = "; Path=/; Secure; HttpOnly; SameSite=Strict"

    /// The HMAC key, shared by every instance on the database (`secrets`, inserted once, never
    /// changed); kept by the app (`WebApp.csrfKey`) for `keyLifetime`, prepared for HMAC
    /// (`HMACKey`), so a page neither reads SQLite for it nor sets the key up each time.
    static func key(_ ctx: Context) throws -> HMACKey {
        let now = ctx.now
        let kept = ctx.app.csrfKey.withLock { entry -> HMACKey? in
            guard let entry, now < entry.until, now >= entry.until - keyLifetime else { return nil }
            return entry.key
        }
        if let kept { return kept }
        let bytes = try ctx.store.secret(named: "csrf")
            ?? ctx.store.insertSecretIfAbsent(named: "csrf", value: ctx.app.random.bytes(32), at: now)
        let k = HMACKey(bytes)
        ctx.app.csrfKey.withLock { $0 = (k, now + keyLifetime) }
        return k
    }

    /// Re-read at least this often (as the key ring re-reads signing keys).
    static let keyLifetime: Millis = 5_000

    /// base64url(HMAC-SHA-256(key, purpose "|" cookie)).
    static func tokenFor(cookie: String, purpose: String, key: HMACKey) -> String {
        var message = [UInt8]()
        message.reserveCapacity(purpose.utf8.count + 1 + cookie.utf8.count)
        message.append(contentsOf: purpose.utf8)
        message.append(UInt8(ascii: "|"))
        message.append(contentsOf: cookie.utf8)
        return Base64URL.encode(key.mac(message))
    }

    /// The token to embed in a form for `purpose`; sets the cookie on `response` when missing.
    /// A page with several forms calls this once per form: the first call sets the cookie, the
    /// others find it on the response and bind their tokens to the same secret (a second,
    /// different cookie would replace the first in the browser and fail the forms bound to it).
    static func token(_ ctx: Context, purpose: String, response: inout Response) throws -> String {
        var cookie = ctx.request.cookie(cookieName) ?? ""
        // (Anything but ASCII fails the base64url check, so bytes count as characters here.)
        if cookie.utf8.count < 22 || Base64URL.decode(cookie) == nil {
            if let set = secretSet(on: response) { return tokenFor(cookie: set, purpose: purpose, key: try key(ctx)) }
            cookie = ctx.app.random.token(bytes: 24)
            // What `Cookie(name: cookieName, value: cookie, sameSite: .strict).headerValue` writes
            // (the value is base64url, all cookie-octets), without its checks and joins.
            var header = ""
            header.reserveCapacity(cookieName.utf8.count + cookie.utf8.count + cookieAttributes.utf8.count + 1)
            header += cookieName
            header += "="
            header += cookie
            header += cookieAttributes
            response.headers.append(("Set-Cookie", header))
        }
        return tokenFor(cookie: cookie, purpose: purpose, key: try key(ctx))
    }

    /// The secret `token` already set on this response, if it did.
    static func secretSet(on response: Response) -> String? {
        let prefix = cookieName + "="
        for (name, value) in response.headers where name == "Set-Cookie" && value.hasPrefix(prefix) {
            return String(value.dropFirst(prefix.count).prefix { $0 != ";" })
        }
        return nil
    }

    /// Checks the form's token for `purpose` (and the Origin header when sent).
    static func verify(_ ctx: Context, purpose: String, token: String?) throws {
        if let origin = ctx.request.header("origin"), origin != "null", origin != ctx.origin, origin != ctx.request.origin {
            throw AuthError(.permissionDenied, "cross-origin form post")
        }
        guard let cookie = ctx.request.cookie(cookieName), let token, !token.isEmpty else {
            throw AuthError(.permissionDenied, "missing CSRF token")
        }
        guard Digest.constantTimeEqual(tokenFor(cookie: cookie, purpose: purpose, key: try key(ctx)), token) else {
            throw AuthError(.permissionDenied, "invalid CSRF token")
        }
    }
}
