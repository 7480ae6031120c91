/// The console's Activity numbers over the last 24 hours (hourly buckets) or 30 days (daily
/// buckets, UTC), read from the store (docs/console.md "Activity").
///
/// Sign-ins per method and outcome come from the audit log, which every sign-in already writes.
/// Rescanning 30 days of it at each view would not do on a busy deployment, so each closed hour
/// is rolled up once, lazily, by the first view that needs it, into counter windows
/// (`ActivityCounters`: `signin:<method>:<outcome>` and a marker `rolled` per hour, kept 31
/// days and purged by housekeeping like every counter); the hours not rolled up (the current
/// one, one that closed less than `grace` ago, one a concurrent view is rolling up) are counted
/// from the audit log as the view is drawn. The other series are counted as they happen.
public struct Activity {
    public typealias Store = LimitStore & ConsoleStore
    public let store: any Store
    public let clock: any Clock

    public init(store: any Store, clock: any Clock) { self.store = store; self.clock = clock }

    public enum Range: String, Sendable, CaseIterable {
        case day = "24h", month = "30d"
    }

    public struct Series: Sendable, Equatable {
        public let name: String
        public var values: [Int]
        public init(name: String, values: [Int]) { self.name = name; self.values = values }
        public var total: Int { values.reduce(0) { var t = $0; Activity.add(&t, $1); return t } }
    }

    public struct Report: Sendable, Equatable {
        public let range: Range
        /// Each bucket's start (UTC hours, or UTC days), oldest first; the last holds now.
        public let bucketStarts: [Millis]
        public let bucketSize: Millis
        /// Accepted sign-ins, one series per method of `methods` (in that order, every one).
        public var signIns: [Series]
        /// Refused sign-ins (audited with outcome `refused`), per method that had any.
        public var refusedSignIns: [Series]
        /// Wrong codes per kind (`ActivityCounters.WrongCode`, every one).
        public var wrongCodes: [Series]
        /// Refusals by budget, per rule that refused any (deployment-wide), by rule name.
        public var refusals: [Series]
        public var smsSent: [Int]
        public var emailsSent: [Int]
    }

    /// Sign-in methods, in the order the charts stack them.
    public static let methods = ["phone", "email_link", "passkey", "mfa", "custom_token", "anonymous"]

    /// The method of a sign-in event (nil: not a sign-in). An email link's first factor is not
    /// one: the second factor's `mfa.sign_in` that completes it is.
    static func method(of event: String) -> String? {
        switch AuditEventName(rawValue: event) {
        case .phoneSignIn, .phoneSignUp: "phone"
        case .emailLinkSignIn, .emailLinkSignUp: "email_link"
        case .passkeySignIn: "passkey"
        case .mfaSignIn: "mfa"
        case .customTokenSignIn, .customTokenSignUp: "custom_token"
        case .anonymousSignUp: "anonymous"
        default: nil
        }
    }

    /// An hour is rolled up once it ended this long ago: an audit row carries the time its
    /// flow read the clock, and commits a moment later.
    public static let grace: Millis = 120_000
    static let hour = ActivityCounters.hour
    static let day = ActivityCounters.day

    /// The buckets of `range` at `now`: their first start, size and count.
    static func buckets(_ range: Range, now: Millis) -> (first: Millis, size: Millis, count: Int) {
        switch range {
        case .day: return (now / hour * hour - 23 * hour, hour, 24)
        case .month: return (now / day * day - 29 * day, day, 30)
        }
    }

    public func report(project: String, range: Range) throws -> Report {
        let now = clock.now()
        let (first, size, count) = Activity.buckets(range, now: now)
        let end = first + size * Millis(count)
        let currentHour = now / Activity.hour * Activity.hour
        let hours = Array(stride(from: first, through: currentHour, by: Int(Activity.hour)))
        var marked = try rolledHours(project: project, from: first, to: end)
        let closed = hours.filter { !marked.contains($0) && $0 + Activity.hour + Activity.grace <= now }
        if try rollUp(project: project, hours: closed) { marked.formUnion(closed) } else { marked = try rolledHours(project: project, from: first, to: end) }

        func index(_ at: Millis) -> Int? {
            guard at >= first, at < end else { return nil }
            return Int((at - first) / size)
        }
        // [method: [outcome: values]]
        var signIns: [String: [String: [Int]]] = [:]
        func addSignIn(_ method: String, _ outcome: String, _ at: Millis, _ n: Int) {
            guard let i = index(at) else { return }
            Activity.add(&signIns[method, default: [:]][outcome, default: Array(repeating: 0, count: count)][i], n)
        }
        for w in try store.counterWindows(prefix: ActivityCounters.bucket(project, "signin:"), from: first, to: end)
        where marked.contains(w.windowStart) {
            let parts = w.bucket.split(separator: ":").suffix(2).map(String.init)
            guard parts.count == 2 else { continue }
            addSignIn(parts[0], parts[1], w.windowStart, w.count)
        }
        let live = hours.filter { !marked.contains($0) }
        if let lo = live.first, let hi = live.last {
            let liveSet = Set(live)
            for c in try signInCounts(project: project, from: lo, to: hi + Activity.hour) where liveSet.contains(c.bucketStart) {
                addSignIn(c.method, c.outcome, c.bucketStart, c.count)
            }
        }
        let zero = Array(repeating: 0, count: count)
        let refusedMethods = Activity.methods.filter { signIns[$0]?["refused"] != nil }
        func series(_ prefix: String, project p: String = project) throws -> [String: [Int]] {
            var out: [String: [Int]] = [:]
            let full = ActivityCounters.bucket(p, prefix)
            for w in try store.counterWindows(prefix: full, from: first, to: end) {
                guard let i = index(w.windowStart) else { continue }
                Activity.add(&out[String(w.bucket.dropFirst(full.count)), default: zero][i], w.count)
            }
            return out
        }
        let wrong = try series("wrong_code:")
        let refused = try series("refused:", project: ActivityCounters.anyProject)
        let sent = try series("sent:")
        return Report(
            range: range, bucketStarts: (0..<count).map { first + size * Millis($0) }, bucketSize: size,
            signIns: Activity.methods.map { Series(name: $0, values: signIns[$0]?["ok"] ?? zero) },
            refusedSignIns: refusedMethods.map { Series(name: $0, values: signIns[$0]?["refused"] ?? zero) },
            wrongCodes: ActivityCounters.WrongCode.allCases.map { Series(name: $0.rawValue, values: wrong[$0.rawValue] ?? zero) },
            refusals: refused.keys.sorted().map { Series(name: $0, values: refused[$0] ?? zero) },
            smsSent: sent["sms"] ?? zero, emailsSent: sent["email"] ?? zero)
    }

    /// SMS admitted per destination region per UTC day over the last `days` days (today last),
    /// regions by their total, most first.
    public func smsRegions(project: String, days: Int = 30) throws -> (dayStarts: [Millis], regions: [Series]) {
        let today = clock.now() / Activity.day * Activity.day
        let first = today - Millis(days - 1) * Activity.day
        let prefix = ActivityCounters.bucket(project, "sms_region:")
        var out: [String: [Int]] = [:]
        for w in try store.counterWindows(prefix: prefix, from: first, to: today + Activity.day) {
            let i = Int((w.windowStart - first) / Activity.day)
            guard i >= 0, i < days else { continue }
            Activity.add(&out[String(w.bucket.dropFirst(prefix.count)), default: Array(repeating: 0, count: days)][i], w.count)
        }
        let regions = out.map { Series(name: $0.key, values: $0.value) }.sorted { ($0.total, $1.name) > ($1.total, $0.name) }
        return ((0..<days).map { first + Millis($0) * Activity.day }, regions)
    }

    // MARK: Roll-up

    /// Adds, saturating: counts come from the store, and no count may trap the process.
    static func add(_ total: inout Int, _ n: Int) {
        let (sum, overflow) = total.addingReportingOverflow(n)
        total = overflow ? (n < 0 ? Int.min : Int.max) : sum
    }

    struct SignInCount { let bucketStart: Millis; let method: String; let outcome: String; let count: Int }

    /// Sign-ins audited in [`from`, `to`) per hour, method and outcome (`ok` or `refused`).
    func signInCounts(project: String, from: Millis, to: Millis) throws -> [SignInCount] {
        let fromID = try store.auditID(atOrAfter: from), toID = try store.auditID(atOrAfter: to)
        guard fromID < toID else { return [] }
        return try store.auditCounts(project: project, fromID: fromID, toID: toID, bucketMillis: Activity.hour).compactMap { c in
            guard let m = Activity.method(of: c.event) else { return nil }
            return SignInCount(bucketStart: c.bucketStart, method: m, outcome: c.outcome == "ok" ? "ok" : "refused", count: c.count)
        }
    }

    /// The hours of [`from`, `to`) already rolled up.
    func rolledHours(project: String, from: Millis, to: Millis) throws -> Set<Millis> {
        let marker = ActivityCounters.bucket(project, "rolled")
        return Set(try store.counterWindows(prefix: marker, from: from, to: to).filter { $0.bucket == marker }.map(\.windowStart))
    }

    struct LostRace: Error {}

    /// Rolls `hours` (closed, ascending) up in one transaction: their markers first, in order
    /// (two views on PostgreSQL wait for each other on the first marker they share), then their
    /// counts. A marker found already set means another view rolled that hour up: this one gives
    /// up (rolls back) rather than count it twice, and returns false. The audit log is read
    /// before the transaction, so the write lock is never held over the scan.
    func rollUp(project: String, hours: [Millis]) throws -> Bool {
        guard let lo = hours.first, let hi = hours.last else { return true }
        let wanted = Set(hours)
        var totals: [String: [Millis: Int]] = [:]
        for c in try signInCounts(project: project, from: lo, to: hi + Activity.hour) where wanted.contains(c.bucketStart) {
            Activity.add(&totals["signin:" + c.method + ":" + c.outcome, default: [:]][c.bucketStart, default: 0], c.count)
        }
        let marker = ActivityCounters.bucket(project, "rolled")
        do {
            try store.transaction {
                for h in hours {
                    let n = try store.incrementCounter(bucket: marker, windowStart: h, amount: 1, expiresAt: h + ActivityCounters.kept)
                    if n != 1 { throw LostRace() }
                }
                for (series, byHour) in totals.sorted(by: { $0.key < $1.key }) {
                    for (h, n) in byHour.sorted(by: { $0.key < $1.key }) {
                        _ = try store.incrementCounter(bucket: ActivityCounters.bucket(project, series), windowStart: h, amount: n,
                                                       expiresAt: h + ActivityCounters.kept)
                    }
                }
            }
            return true
        } catch is LostRace {
            return false
        }
    }
}
