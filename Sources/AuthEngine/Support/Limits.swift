/// Rate limits over fixed windows in the store. Flows call `hit` before doing work; over the
/// limit → `TOO_MANY_ATTEMPTS_TRY_LATER` (or the error the flow passes).
public struct Limits {
    public let store: any LimitStore
    public let clock: any Clock

    public init(store: any LimitStore, clock: any Clock) {
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

    // MARK: A destination's budget, with a reserve for every client block

    /// The sends a destination (a number, a mailbox) takes per window, whoever asks, and the
    /// reserve each client block (IPv4 /24, IPv6 /48) keeps for itself once others have spent
    /// them: nobody can spend a destination's budget into refusing its owner, who still gets
    /// `reserve.max` sends per window from their own network; what strangers make a destination
    /// receive stays bounded by the blocks they control, each under its own per-client budgets.
    /// `reserve` nil: none (a budget that must bound what anyone gets, such as a number's codes,
    /// which bound the guesses against it).
    public struct DestinationBudget: Sendable {
        public let rules: [Rule]
        public let reserve: Rule?
        public init(_ rules: [Rule], reserve: Rule?) { self.rules = rules; self.reserve = reserve }
    }

    /// How a destination send fits: inside the shared budget, or in the client block's reserve.
    public enum DestinationAdmission: Sendable, Equatable { case budget, reserve }

    /// Whether another send to `key` fits (does not count); nil when neither the budget nor the
    /// client block's reserve has room.
    public func admits(_ budget: DestinationBudget, key: String, client: ClientAddress) throws -> DestinationAdmission? {
        var shared = true
        for rule in budget.rules where try !allows(rule, key: key) { shared = false }
        if shared { return .budget }
        guard let reserve = budget.reserve else { return nil }
        return try allows(reserve, key: key + "|" + client.wide) ? .reserve : nil
    }

    /// Counts a send admitted as `admission`: on every rule of the budget (so the budget keeps
    /// its count), and on the block's reserve when that is what let it through.
    public func count(_ budget: DestinationBudget, key: String, client: ClientAddress, as admission: DestinationAdmission) throws {
        for rule in budget.rules { _ = try record(rule, key: key) }
        if admission == .reserve, let reserve = budget.reserve { _ = try record(reserve, key: key + "|" + client.wide) }
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
