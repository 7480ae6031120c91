/// Rate limits over fixed windows in the store. Flows call `hit` before doing work; over the
/// limit → `TOO_MANY_ATTEMPTS_TRY_LATER` (or the error the flow passes).
///
/// Every refusal a rule decides (`record`/`hit` past the budget, `allows` false, `admits` nil)
/// is also counted for the console's Activity page, once per decision, under the rule's name
/// (`ActivityCounters.refusal`, deployment-wide), in the caller's transaction: a flow that
/// commits its counts on a refusal commits that one too. A call that fits writes nothing more.
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

    /// Whether another send to `key` of `amount` units fits (does not count); nil when neither
    /// the budget nor the client block's reserve has room.
    public func admits(_ budget: DestinationBudget, key: String, client: ClientAddress, amount: Int = 1) throws -> DestinationAdmission? {
        let fitting = try fits(budget.rules.map { ($0, key) }, amount: amount)
        guard let refused = fitting.firstIndex(of: false) else { return .budget }
        let refusedBy = budget.rules[refused]
        if let reserve = budget.reserve, try fits(reserve, key: key + "|" + client.wide, amount: amount) { return .reserve }
        try noteRefusal(refusedBy)
        return nil
    }

    /// Counts a send admitted as `admission`: on every rule of the budget (so the budget keeps
    /// its count), and on the block's reserve when that is what let it through.
    public func count(_ budget: DestinationBudget, key: String, client: ClientAddress, as admission: DestinationAdmission,
                      amount: Int = 1) throws {
        for rule in budget.rules { _ = try tally(rule, key: key, amount: amount) }
        if admission == .reserve, let reserve = budget.reserve { _ = try tally(reserve, key: key + "|" + client.wide, amount: amount) }
    }

    // MARK: Per client: both tiers of the client's network

    /// Counts one event for the client (`rule.max`) and for its block (`rule.max × wideFactor`);
    /// false if either is past its budget. `scope` separates projects.
    public func record(_ rule: Rule, client: ClientAddress, scope: String, amount: Int = 1) throws -> Bool {
        let within = try tally(tiers(rule, client: client, scope: scope), amount: amount).allSatisfy { $0 }
        if !within { try noteRefusal(rule) }
        return within
    }

    public func hit(_ rule: Rule, client: ClientAddress, scope: String, error: AuthError = AuthError(.tooManyAttempts)) throws {
        if try !record(rule, client: client, scope: scope) { throw error }
    }

    /// Whether another event would still fit on both tiers (does not count the event; a false
    /// answer is counted as a refusal: the caller refuses).
    public func allows(_ rule: Rule, client: ClientAddress, scope: String, amount: Int = 1) throws -> Bool {
        let fit = try fits(tiers(rule, client: client, scope: scope), amount: amount).allSatisfy { $0 }
        if !fit { try noteRefusal(rule) }
        return fit
    }

    /// The client's counter and its block's, with their rules.
    func tiers(_ rule: Rule, client: ClientAddress, scope: String) -> [(Rule, String)] {
        [(rule, scope + "|" + client.narrow), (rule.widened(client.wideFactor), scope + "|" + client.wide)]
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
        let within = try tally(rule, key: key, amount: amount)
        if !within { try noteRefusal(rule) }
        return within
    }

    /// Whether another event would still fit (does not count the event; a false answer is
    /// counted as a refusal: the caller refuses).
    public func allows(_ rule: Rule, key: String, amount: Int = 1) throws -> Bool {
        let fits = try fits(rule, key: key, amount: amount)
        if !fits { try noteRefusal(rule) }
        return fits
    }

    /// Counts one event without noting a refusal; false past the budget.
    func tally(_ rule: Rule, key: String, amount: Int = 1) throws -> Bool {
        try tally([(rule, key)], amount: amount)[0]
    }

    /// Counts one event on each rule's counter, all at once; for each, whether it is within.
    func tally(_ counters: [(Rule, String)], amount: Int) throws -> [Bool] {
        let increments = counters.map { rule, key in
            let start = window(rule)
            return CounterIncrement(counter(rule, key, window: start), amount: amount, expiresAt: start + rule.windowSeconds * 1000)
        }
        let totals = try store.incrementCounters(increments)
        guard totals.count == counters.count else { throw AuthError(.internalError, "the store counted \(totals.count) of \(counters.count) counters") }
        return zip(counters, totals).map { counter, total in total <= counter.0.max }
    }

    /// Whether `amount` more units fit, noting nothing.
    func fits(_ rule: Rule, key: String, amount: Int = 1) throws -> Bool {
        try fits([(rule, key)], amount: amount)[0]
    }

    /// `fits` for each rule's counter, read all at once.
    func fits(_ counters: [(Rule, String)], amount: Int) throws -> [Bool] {
        let totals = try store.counters(counters.map { counter($0.0, $0.1, window: window($0.0)) })
        guard totals.count == counters.count else { throw AuthError(.internalError, "the store read \(totals.count) of \(counters.count) counters") }
        return zip(counters, totals).map { counter, total in
            let (sum, overflow) = total.addingReportingOverflow(amount)
            return !overflow && sum <= counter.0.max
        }
    }

    /// One refusal by `rule` (its block's tier counted under the rule's own name).
    func noteRefusal(_ rule: Rule) throws {
        try ActivityCounters.refusal(store, rule: rule.name, at: clock.now())
    }

    /// Events counted so far in the current window.
    public func count(_ rule: Rule, key: String) throws -> Int {
        let c = counter(rule, key, window: window(rule))
        return try store.counter(bucket: c.bucket, windowStart: c.windowStart)
    }

    /// The counter of `rule` for `key` in the window starting at `start`: every bucket is named here.
    func counter(_ rule: Rule, _ key: String, window start: Millis) -> CounterKey {
        CounterKey(bucket: rule.name + ":" + key, windowStart: start)
    }
}
