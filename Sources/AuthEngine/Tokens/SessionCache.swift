import Locking
/// A small per-process cache of session lookups for `/__/auth/verify`, so a burst of requests
/// costs one store read per session every `ttl`. It only errs towards refusing: a cached
/// `lastSeenAt` is never newer than the store's (the idle check can only fire early), and every
/// revocation made through this process evicts the entries it affects at once. Revocations made
/// by another instance are seen within `ttl`.
public final class SessionCache: @unchecked Sendable {
    /// The stored facts a decision needs.
    public struct State: Sendable {
        public var session: SessionRecord?
        public var account: Account?
        public init(session: SessionRecord?, account: Account?) { self.session = session; self.account = account }
    }

    public static let defaultTTL: Millis = 2_000
    public let ttl: Millis
    public let maxEntries: Int
    private let lock = Lock()
    private var entries: [[UInt8]: (at: Millis, state: State)] = [:]
    /// Cookies whose signature and claims were verified, by SHA-256 of project and cookie: a
    /// burst of page views verifies one RS256 signature per cookie every `ttl`. Only valid
    /// cookies are kept; each use checks its expiry again.
    private var verified: [[UInt8]: (at: Millis, claims: SessionClaims)] = [:]

    public init(ttl: Millis = SessionCache.defaultTTL, maxEntries: Int = 10_000) {
        self.ttl = ttl
        self.maxEntries = maxEntries
    }

    /// The cached state if it is younger than `ttl` (a clock going backwards counts as stale).
    public func get(_ key: [UInt8], now: Millis) -> State? {
        lock.withLock {
            guard let e = entries[key] else { return nil }
            guard now >= e.at, now - e.at < ttl else { entries[key] = nil; return nil }
            return e.state
        }
    }

    public func put(_ key: [UInt8], _ state: State, now: Millis) {
        lock.withLock {
            if entries.count >= maxEntries {
                entries = entries.filter { now >= $0.value.at && now - $0.value.at < ttl }
                if entries.count >= maxEntries { entries.removeAll() }
            }
            entries[key] = (now, state)
        }
    }

    public func evict(_ key: [UInt8]) { lock.withLock { entries[key] = nil } }

    func verifiedClaims(_ key: [UInt8], now: Millis) -> SessionClaims? {
        lock.withLock {
            guard let e = verified[key] else { return nil }
            guard now >= e.at, now - e.at < ttl, e.claims.expiresAt * 1000 > now else { verified[key] = nil; return nil }
            return e.claims
        }
    }

    func putVerified(_ key: [UInt8], _ claims: SessionClaims, now: Millis) {
        lock.withLock {
            if verified.count >= maxEntries {
                verified = verified.filter { now >= $0.value.at && now - $0.value.at < ttl }
                if verified.count >= maxEntries { verified.removeAll() }
            }
            verified[key] = (now, claims)
        }
    }

    /// Forgets every session of a user (revocation, disable, delete, profile change).
    public func evict(project: String, localID: String) {
        lock.withLock {
            entries = entries.filter { $0.value.state.session.map { $0.projectID != project || $0.localID != localID } ?? true }
        }
    }

    public func removeAll() { lock.withLock { entries.removeAll(); verified.removeAll() } }

    public var count: Int { lock.withLock { entries.count } }
}
