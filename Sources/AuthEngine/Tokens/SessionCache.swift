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

    /// Forgets every session of a user (revocation, disable, delete, profile change).
    public func evict(project: String, localID: String) {
        lock.withLock {
            entries = entries.filter { $0.value.state.session.map { $0.projectID != project || $0.localID != localID } ?? true }
        }
    }

    public func removeAll() { lock.withLock { entries.removeAll() } }

    public var count: Int { lock.withLock { entries.count } }
}
