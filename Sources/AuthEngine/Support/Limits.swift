/// Rate limits over fixed windows in the store. Flows call `hit` before doing work; over the
/// limit → `TOO_MANY_ATTEMPTS_TRY_LATER` (or the error the flow passes).
public struct Limits {
    public let store: LimitStore
    public let clock: Clock

    public init(store: LimitStore, clock: Clock) {
        self.store = store
        self.clock = clock
    }

    /// One named limit: `max` events per `windowSeconds` for `key`.
    public struct Rule: Sendable {
        public let name: String
        public let max: Int
        public let windowSeconds: Int64
        public init(_ name: String, max: Int, per windowSeconds: Int64) {
            self.name = name; self.max = max; self.windowSeconds = windowSeconds
        }

        /// The same rule for a client's block: its own counter, `factor` times the budget.
        func widened(_ factor: Int) -> Rule {
            let (m, overflow) = max.multipliedReportingOverflow(by: Swift.max(1, factor))
            return Rule(name + ".wide", max: overflow ? Int.max : m, per: windowSeconds)
        }
    }

    // MARK: Per client: both tiers of the client's network

    /// Counts one event for the client (`rule.max`) and for its block (`rule.max × wideFactor`);
    /// false if either is past its budget. `scope` separates projects.
    public func record(_ rule: Rule, client: ClientAddress, scope: String) throws -> Bool {
        let narrow = try record(rule, key: scope + "|" + client.narrow)
        let wide = try record(rule.widened(client.wideFactor), key: scope + "|" + client.wide)
        return narrow && wide
    }

    public func hit(_ rule: Rule, client: ClientAddress, scope: String, error: AuthError = AuthError(.tooManyAttempts)) throws {
        if try !record(rule, client: client, scope: scope) { throw error }
    }

    /// Whether another event would still fit on both tiers (does not count).
    public func allows(_ rule: Rule, client: ClientAddress, scope: String) throws -> Bool {
        try allows(rule, key: scope + "|" + client.narrow) && allows(rule.widened(client.wideFactor), key: scope + "|" + client.wide)
    }

    /// Events of the client (narrow tier) so far in the current window.
    public func count(_ rule: Rule, client: ClientAddress, scope: String) throws -> Int {
        try count(rule, key: scope + "|" + client.narrow)
    }

    func window(_ rule: Rule) -> Millis {
        let w = rule.windowSeconds * 1000
        return clock.now() / w * w
    }

    /// Counts one event; throws `error` if that takes the counter past `rule.max`.
    public func hit(_ rule: Rule, key: String, amount: Int = 1, error: AuthError = AuthError(.tooManyAttempts)) throws {
        if try !record(rule, key: key, amount: amount) { throw error }
    }

    /// Counts one event; false if that takes the counter past `rule.max`. For a flow that counts
    /// inside its own transaction and must commit the count even when it refuses the request.
    public func record(_ rule: Rule, key: String, amount: Int = 1) throws -> Bool {
        let start = window(rule)
        let n = try store.incrementCounter(bucket: rule.name + ":" + key, windowStart: start, amount: amount,
                                           expiresAt: start + rule.windowSeconds * 1000)
        return n <= rule.max
    }

    /// Whether another event would still fit (does not count).
    public func allows(_ rule: Rule, key: String) throws -> Bool {
        try store.counter(bucket: rule.name + ":" + key, windowStart: window(rule)) < rule.max
    }

    /// Events counted so far in the current window.
    public func count(_ rule: Rule, key: String) throws -> Int {
        try store.counter(bucket: rule.name + ":" + key, windowStart: window(rule))
    }
}
