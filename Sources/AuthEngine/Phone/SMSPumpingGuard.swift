/// SMS pumping (toll fraud) protection: called once per real SMS (not a test number, not dev
/// mode) inside the send's write transaction, before the message is enqueued
/// (docs/security.md "SMS pumping").
///
/// Everything is keyed on the destination, which an attacker pays for, never on the requester,
/// whose addresses are cheap. Three series of 5-minute buckets count the SMS sent, in the
/// store's limit counters (shared by every instance): the project, the destination region and
/// the destination prefix (the number without its last `prefixDroppedDigits` digits: premium-rate
/// and other revenue-sharing ranges are sold as contiguous blocks). A send is refused when a hold
/// covers its region or prefix, or when any budget is spent (a rolling day for the project, a
/// rolling hour for the region and the prefix); a refusal counts nothing. After counting, a
/// prefix or region whose last hour jumped far above its own 24-hour baseline is held.
public struct SMSPumpingGuard {
    public let store: any SMSPumpingStore
    public let clock: any Clock
    public let project: ProjectSettings
    public let telemetry: Telemetry
    public let log: Log

    public init(store: any SMSPumpingStore, clock: any Clock, project: ProjectSettings, telemetry: Telemetry = .off, log: Log = Log()) {
        self.store = store; self.clock = clock; self.project = project; self.telemetry = telemetry; self.log = log
    }

    static let bucket: Millis = 300_000
    static let hour: Millis = 3_600_000
    static let day: Millis = 24 * hour
    /// The baseline reaches back 25 hours from the current bucket.
    static let kept: Millis = 26 * hour
    /// After an operator's release, the destination is not held again automatically for this
    /// long (its budgets still apply): the operator judged its traffic legitimate.
    public static let releaseGrace: Millis = day

    var policy: SMSPumpingPolicy { project.phone.pumping }

    /// One destination a send counts against.
    struct Target {
        let kind: SMSHold.Kind
        let key: String
        let limit: Int
        let holdMinimum: Int
    }

    /// Refuses the send (`TOO_MANY_ATTEMPTS_TRY_LATER`, as the other send limits) or counts it,
    /// as `weight` messages (a call weighs more than a text: `PhoneChannel.weight`). Holds apply
    /// to every channel.
    func admit(_ number: ParsedNumber, weight: Int = 1) throws {
        guard !project.devMode, !number.isTest else { return }
        let now = clock.now()
        let start = now / SMSPumpingGuard.bucket * SMSPumpingGuard.bucket
        let targets = [
            Target(kind: .prefix, key: SMSPumpingGuard.prefix(of: number.e164, region: number.region, dropping: policy.prefixDroppedDigits),
                   limit: policy.smsPerPrefixPerHour, holdMinimum: policy.holdMinPrefixPerHour),
            Target(kind: .region, key: number.region.uppercased(), limit: policy.smsPerRegionPerHour, holdMinimum: policy.holdMinRegionPerHour),
        ]
        for t in targets {
            if let hold = try store.smsHold(project: project.id, kind: t.kind, key: t.key), hold.isActive(at: now) { throw refused("hold_" + t.kind.rawValue) }
        }
        // Every budget is checked before any is counted, so a refused send eats none.
        let projectSeries = "sms-project:" + project.id
        if try store.counterSum(bucket: projectSeries, from: start + SMSPumpingGuard.bucket - SMSPumpingGuard.day,
                                to: start + SMSPumpingGuard.bucket) + weight > policy.smsPerProjectPerDay { throw refused("project") }
        for t in targets where try lastHour(series(t), start) + weight > t.limit { throw refused(t.kind.rawValue) }
        for s in [projectSeries] + targets.map(series) {
            _ = try store.incrementCounter(bucket: s, windowStart: start, amount: weight, expiresAt: start + SMSPumpingGuard.kept)
        }
        // The console's sends per country per day (kept a month, unlike the 26 h series above).
        try ActivityCounters.smsRegion(store, project: project.id, region: number.region, at: now)
        // The send that crosses the line still goes out: a refusal would roll back the hold.
        for t in targets { try holdIfJumped(t, start: start, now: now) }
    }

    /// A refusal, counted by what refused it (`project`, `prefix`, `region`, or a hold of one).
    func refused(_ by: String) -> AuthError {
        telemetry.pumpingRefused(kind: by)
        return AuthError(.tooManyAttempts)
    }

    func series(_ t: Target) -> String { "sms-\(t.kind.rawValue):\(project.id)|\(t.key)" }

    /// SMS of the 12 buckets up to and including the current one.
    func lastHour(_ series: String, _ start: Millis) throws -> Int {
        try store.counterSum(bucket: series, from: start + SMSPumpingGuard.bucket - SMSPumpingGuard.hour, to: start + SMSPumpingGuard.bucket)
    }

    func holdIfJumped(_ t: Target, start: Millis, now: Millis) throws {
        let recentFrom = start + SMSPumpingGuard.bucket - SMSPumpingGuard.hour
        let recent = try store.counterSum(bucket: series(t), from: recentFrom, to: start + SMSPumpingGuard.bucket)
        guard recent >= t.holdMinimum else { return }
        let baseline = try store.counterSum(bucket: series(t), from: recentFrom - SMSPumpingGuard.day, to: recentFrom)
        // recent > factor × the mean hour of the baseline.
        guard Double(recent) * 24 > Double(policy.holdFactor) * Double(baseline) else { return }
        if let old = try store.smsHold(project: project.id, kind: t.kind, key: t.key),
           let released = old.releasedAt, now - released < SMSPumpingGuard.releaseGrace { return }
        let hours = Millis(policy.holdHours)
        try store.putSMSHold(SMSHold(projectID: project.id, kind: t.kind, key: t.key, heldAt: now,
                                     expiresAt: hours > 0 ? now + hours * SMSPumpingGuard.hour : nil,
                                     recentCount: recent, baselineCount: baseline))
        telemetry.pumpingHold(kind: t.kind.rawValue)
        log.warning("SMS pumping: \(t.kind.rawValue) \(t.key) of project \(project.id) held (\(recent) SMS in the last hour, "
                    + "\(baseline) in the 24 hours before); release with: gatehouse sms holds release \(t.key) --project \(project.id)")
    }

    /// The prefix of an E.164 number: without its last `dropping` digits, but always the country
    /// calling code and one digit more (so a prefix never spans two countries).
    static func prefix(of e164: String, region: String, dropping: Int) -> String {
        let digits = e164.utf8.filter { $0 >= 0x30 && $0 <= 0x39 }
        let codeLength = PhoneNumber.countryCode(forRegion: region).map { String($0).utf8.count } ?? 3
        let keep = min(digits.count, max(codeLength + 1, digits.count - max(dropping, 0)))
        return "+" + String(decoding: digits.prefix(keep), as: UTF8.self)
    }
}

// MARK: - Operator view

extension SMSPumpingGuard {
    /// The holds in force at `now`, of one project or all.
    public static func activeHolds(store: any SMSPumpingStore, project: String?, at now: Millis) throws -> [SMSHold] {
        try store.smsHolds(project: project).filter { $0.isActive(at: now) }
    }

    /// Releases the hold of `key` in `project`: a prefix starts with `+`, anything else is a
    /// region code. False when no hold of that key is in force.
    public static func release(_ key: String, project: String, store: any SMSPumpingStore, at now: Millis) throws -> Bool {
        let kind: SMSHold.Kind = key.hasPrefix("+") ? .prefix : .region
        let normalised = kind == .prefix ? key : key.uppercased()
        return try store.transaction {
            guard var hold = try store.smsHold(project: project, kind: kind, key: normalised), hold.isActive(at: now) else { return false }
            hold.releasedAt = now
            try store.putSMSHold(hold)
            return true
        }
    }
}
