import Locking
/// A small per-process cache of session lookups for `/__/auth/verify`, so a burst of requests
/// costs one store read per session every `ttl`. It only errs towards refusing: a cached
/// `lastSeenAt` is never newer than the store's (the idle check can only fire early), and every
/// revocation made through this process evicts the entries it affects at once. Revocations made
/// by another instance are seen within `ttl`.
public final class SessionCache: Sendable {
    /// The stored facts a decision needs.
    public struct State: Sendable {
        public var session: SessionRecord?
        public var account: Account?
        public init(session: SessionRecord?, account: Account?) { self.session = session; self.account = account }
    }

    public static let defaultTTL: Millis = 2_000
    public let ttl: Millis
    public let maxEntries: Int
    private struct Tables {
        var entries: [[UInt8]: (at: Millis, state: State)] = [:]
        /// Cookies whose signature and claims were verified, by SHA-256 of project and cookie: a
        /// burst of page views verifies one RS256 signature per cookie every `ttl`. Only valid
        /// cookies are kept; each use checks its expiry again.
        var verified: [[UInt8]: (at: Millis, claims: SessionClaims)] = [:]
    }
    private let tables = Locked(Tables())

    public init(ttl: Millis = SessionCache.defaultTTL, maxEntries: Int = 10_000) {
        self.ttl = ttl
        self.maxEntries = maxEntries
    }

    /// The cached state if it is younger than `ttl` (a clock going backwards counts as stale).
    public func get(_ key: [UInt8], now: Millis) -> State? {
        tables.withLock { t in
            guard let e = t.entries[key] else { return nil }
            guard now >= e.at, now - e.at < ttl else { t.entries[key] = nil; return nil }
            return e.state
        }
    }

    public func put(_ key: [UInt8], _ state: State, now: Millis) {
        tables.withLock { t in
            if t.entries.count >= maxEntries {
                t.entries = t.entries.filter { now >= $0.value.at && now - $0.value.at < ttl }
                if t.entries.count >= maxEntries { t.entries.removeAll() }
            }
            t.entries[key] = (now, state)
        }
    }

    public func evict(_ key: [UInt8]) { tables.withLock { t in t.entries[key] = nil } }

    func verifiedClaims(_ key: [UInt8], now: Millis) -> SessionClaims? {
        tables.withLock { t in
            guard let e = t.verified[key] else { return nil }
            guard now >= e.at, now - e.at < ttl, e.claims.expiresAt * 1000 > now else { t.verified[key] = nil; return nil }
            return e.claims
        }
    }

    func putVerified(_ key: [UInt8], _ claims: SessionClaims, now: Millis) {
        tables.withLock { t in
            if t.verified.count >= maxEntries {
                t.verified = t.verified.filter { now >= $0.value.at && now - $0.value.at < ttl }
                if t.verified.count >= maxEntries { t.verified.removeAll() }
            }
            t.verified[key] = (now, claims)
        }
    }

    /// Forgets every session of a user (revocation, disable, delete, profile change).
    public func evict(project: String, localID: String) {
        tables.withLock { t in
            t.entries = t.entries.filter { $0.value.state.session.map { $0.projectID != project || $0.localID != localID } ?? true }
        }
    }

    public func removeAll() { tables.withLock { t in t.entries.removeAll(); t.verified.removeAll() } }

    public var count: Int { tables.withLock { t in t.entries.count } }
}
