import AuthCrypto
import JSONValue

/// Who a valid session cookie belongs to (what `/__/auth/verify` passes to nginx).
public struct SessionIdentity: Sendable {
    public let account: Account
    public let provider: String
    public let authTime: Int64
    public let issuedAt: Int64
    public let expiresAt: Int64
    /// 0 when the session has no idle timeout.
    public let idleTimeoutSeconds: Int64
    /// The second factor the sign-in passed (`firebase.sign_in_second_factor`), if any.
    public var secondFactor: SecondFactor? = nil
    /// `Sessions.hash(sid:)` of the cookie's session: what the account page marks "this device"
    /// and keeps when it signs out the others.
    public var sidHash: [UInt8]? = nil
    public var uid: String { account.localID }
}

/// The answer for one cookie: signed in, or why not (reasons are for logs, never for clients).
public enum SessionCheck: Sendable {
    public enum Reason: String, Sendable {
        case missing, invalid, unknownSession, revoked, expired, idle, userNotFound, userDisabled, tokenRevoked
    }
    case signedIn(SessionIdentity)
    case signedOut(Reason)

    public var identity: SessionIdentity? { if case let .signedIn(i) = self { return i }; return nil }
}

/// Session cookies (firebase-wire.md §2.11, §3.4; gatehouse.md "Tokens, sessions, nginx"): RS256
/// session JWTs carrying a `sid` claim that names a server-side session, so the idle timeout and
/// sign-out are enforced by Gatehouse rather than trusted to the browser.
public struct Sessions {
    public static let minLifetime: Int64 = 300
    public static let maxLifetime: Int64 = 1_209_600
    /// The longest a session's `last_seen_at` may lag: one write per interval per session.
    public static let maxTouchInterval: Millis = 60_000

    public let store: any AccountStore & SessionStore & SigningKeyStore & AuditStore
    public let tokens: TokenService
    public let random: any RandomSource

    public init(store: any AccountStore & SessionStore & SigningKeyStore & AuditStore, tokens: TokenService, random: any RandomSource) {
        self.store = store; self.tokens = tokens; self.random = random
    }

    public static func hash(sid: String) -> [UInt8] {
        let prefix: StaticString = "gatehouse-sid|"
        var sid = sid
        return sid.withUTF8 { s in
            withUnsafeTemporaryAllocation(byteCount: prefix.utf8CodeUnitCount + s.count, alignment: 1) { buf in
                UnsafeMutableRawBufferPointer(rebasing: buf[..<prefix.utf8CodeUnitCount])
                    .copyMemory(from: UnsafeRawBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
                UnsafeMutableRawBufferPointer(rebasing: buf[prefix.utf8CodeUnitCount...]).copyMemory(from: UnsafeRawBufferPointer(s))
                return Digest.sha256(bytes: UnsafeRawBufferPointer(buf))
            }
        }
    }

    /// Starts a browser session for `account` and returns its cookie value (hosted pages).
    /// `idleTimeout` 0 disables the idle check.
    public func startHostedSession(account: Account, provider: String, lifetime: Int64, idleTimeout: Int64,
                                   authTime: Int64? = nil, secondFactor: SecondFactor? = nil, device: SignInDevice? = nil) throws -> String {
        let life = min(max(lifetime, Sessions.minLifetime), Sessions.maxLifetime)
        let now = tokens.clock.nowSeconds
        let claims = tokens.claims(for: account, provider: provider, kind: .sessionCookie, issuedAt: now, lifetime: life,
                                   authTime: authTime ?? now, secondFactor: secondFactor)
        return try sign(claims, localID: account.localID, project: account.projectID, provider: provider,
                        expiresAt: now + life, idleTimeout: idleTimeout, secondFactor: secondFactor?.identifier, device: device)
    }

    /// `createSessionCookie`: a cookie with the ID token's claims, `iss` = the session issuer,
    /// `iat` = now, `exp` = now + `validDuration` (300 … 1,209,600 s, default the maximum).
    /// Missing token → `MISSING_ID_TOKEN`; bad duration → `INVALID_SESSION_COOKIE_DURATION`;
    /// then the ID-token checks (`INVALID_ID_TOKEN`, `USER_NOT_FOUND`, `TOKEN_EXPIRED`, `USER_DISABLED`).
    public func createSessionCookie(idToken: String?, validDuration: String?, project: String) throws -> String {
        guard let idToken, !idToken.isEmpty else { throw AuthError(.missingIDToken) }
        var duration = Sessions.maxLifetime
        if let raw = validDuration, !raw.isEmpty {
            guard let d = Int64(raw), d >= Sessions.minLifetime, d <= Sessions.maxLifetime else {
                throw AuthError(.invalidSessionCookieDuration)
            }
            duration = d
        }
        let (account, verified) = try Accounts(store: store, tokens: tokens).account(forIDToken: idToken, project: project)
        let now = tokens.clock.nowSeconds
        var pairs = verified.claims.objectValue ?? []
        func set(_ k: String, _ v: JSON) {
            if let i = pairs.firstIndex(where: { $0.0 == k }) { pairs[i].1 = v } else { pairs.append((k, v)) }
        }
        set("iss", .string(TokenService.Kind.sessionCookie.issuer(project: project)))
        set("iat", .number(Double(now)))
        set("exp", .number(Double(now + duration)))
        return try sign(.object(pairs), localID: account.localID, project: project, provider: verified.signInProvider,
                        expiresAt: now + duration, idleTimeout: 0)
    }

    /// Records the server-side session, adds its `sid` claim and signs.
    func sign(_ claims: JSON, localID: String, project: String, provider: String, expiresAt: Int64, idleTimeout: Int64,
              secondFactor: String? = nil, device: SignInDevice? = nil) throws -> String {
        let sid = random.token(bytes: 18)
        let now = tokens.clock.now()
        var pairs = (claims.objectValue ?? []).filter { $0.0 != "sid" }
        pairs.append(("sid", .string(sid)))
        try store.insertSession(SessionRecord(sidHash: Sessions.hash(sid: sid), projectID: project, localID: localID, provider: provider,
                                              createdAt: now, lastSeenAt: now, expiresAt: expiresAt * 1000,
                                              idleTimeoutSeconds: max(0, idleTimeout), secondFactor: secondFactor,
                                              userAgent: device?.userAgent, network: device?.network))
        return try tokens.sign(.object(pairs), store: store)
    }

    /// Checks a cookie: signature and lifetime (one RS256 verification), then the server-side
    /// session and the user (from `cache` when fresh). Store failures throw: callers refuse.
    public func authorize(cookie: String?, project: String, cache: SessionCache?) throws -> SessionCheck {
        guard let cookie, !cookie.isEmpty else { return .signedOut(.missing) }
        guard cookie.utf8.count <= 8192 else { return .signedOut(.invalid) }
        let now = tokens.clock.now()
        let cookieKey = cache.map { _ in Digest.sha256(project + "\n" + cookie) }
        let verified: SessionClaims
        if let cache, let cookieKey, let claims = cache.verifiedClaims(cookieKey, now: now) {
            verified = claims
        } else {
            guard let claims = sessionClaims(cookie, project: project) else { return .signedOut(.invalid) }
            verified = claims
            if let cache, let cookieKey { cache.putVerified(cookieKey, claims, now: now) }
        }
        let key = Sessions.hash(sid: verified.sid)
        if let state = cache?.get(key, now: now) { return Sessions.evaluate(state, verified, project: project, now: now) }

        var state = SessionCache.State(session: try store.session(sidHash: key),
                                       account: try store.account(project: project, localID: verified.uid))
        let check = Sessions.evaluate(state, verified, project: project, now: now)
        if case .signedIn = check, var s = state.session, now - s.lastSeenAt >= Sessions.touchInterval(idle: s.idleTimeoutSeconds) {
            try store.touchSession(sidHash: key, at: now)
            s.lastSeenAt = now
            state.session = s
        }
        cache?.put(key, state, now: now)
        return check
    }

    static func touchInterval(idle: Int64) -> Millis {
        idle <= 0 ? maxTouchInterval : max(1000, min(maxTouchInterval, idle * 100))
    }

    /// The decision for a verified cookie given the stored session and account.
    static func evaluate(_ state: SessionCache.State, _ token: SessionClaims, project: String, now: Millis) -> SessionCheck {
        guard let s = state.session, s.projectID == project, s.localID == token.uid else { return .signedOut(.unknownSession) }
        if s.revokedAt != nil { return .signedOut(.revoked) }
        if s.expiresAt <= now { return .signedOut(.expired) }
        if s.idleTimeoutSeconds > 0, now - s.lastSeenAt > s.idleTimeoutSeconds * 1000 { return .signedOut(.idle) }
        guard let account = state.account else { return .signedOut(.userNotFound) }
        if account.disabled { return .signedOut(.userDisabled) }
        if token.issuedAt < account.validSince { return .signedOut(.tokenRevoked) }
        // A session that passed a second factor the user no longer has stands for nothing.
        if !SensitiveChange.factorStillEnrolled(token.secondFactor, in: account) { return .signedOut(.tokenRevoked) }
        return .signedIn(SessionIdentity(account: account, provider: token.signInProvider, authTime: token.authTime,
                                         issuedAt: token.issuedAt, expiresAt: token.expiresAt, idleTimeoutSeconds: s.idleTimeoutSeconds,
                                         secondFactor: token.secondFactor, sidHash: s.sidHash))
    }

    /// Sign-out: revokes the cookie's server-side session (if the cookie is ours and still
    /// valid) and forgets it in `cache`. Returns whether a session was revoked.
    @discardableResult
    public func signOut(cookie: String?, project: String, cache: SessionCache?) throws -> Bool {
        guard let cookie, !cookie.isEmpty, cookie.utf8.count <= 8192,
              let verified = sessionClaims(cookie, project: project) else { return false }
        let key = Sessions.hash(sid: verified.sid)
        let now = tokens.clock.now()
        let revoked = try store.revokeSession(sidHash: key, at: now)
        cache?.evict(key)
        if revoked { try store.audit(AuditEvent(projectID: project, event: .signOut, localID: verified.uid), at: now) }
        return revoked
    }
}
