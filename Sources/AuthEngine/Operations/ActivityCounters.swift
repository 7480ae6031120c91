/// The console's Activity counters, kept in `limit_counters` (so housekeeping purges them when
/// they expire, and every instance shares them): one bucket per series,
/// `activity:<project>:<series>`, with a window per hour (per day for the SMS regions), each
/// kept `kept` (31 days: the 30-day view and its current day).
///
/// Counted as it happens, by the failure paths and the outbox worker only (a successful sign-in
/// writes nothing more; its audit row is what `Activity` rolls up), inside the caller's
/// transaction:
/// - `wrong_code:<kind>`: a wrong phone sign-in code (`phone`), a wrong second-factor phone code
///   (`mfa_phone`, enrolment included), a wrong TOTP code (`totp`);
/// - `refused:<rule>`, of project `*` (a budget knows no project): a refusal by a `Limits` rule;
/// - `sent:<channel>`: an SMS or email the outbox worker recorded as sent;
/// - `sms_region:<RR>` (daily windows): an SMS the pumping guard admitted, by destination region.
/// Rolled up by `Activity` from the audit log: `signin:<method>:<outcome>` and the hour markers
/// `rolled`.
public enum ActivityCounters {
    public static let hour: Millis = 3_600_000
    public static let day: Millis = 86_400_000
    /// How long a window is kept after it starts.
    public static let kept: Millis = 31 * day
    /// The project of the deployment-wide series (refusals by budget).
    public static let anyProject = "*"

    public enum WrongCode: String, Sendable, CaseIterable { case phone, mfaPhone = "mfa_phone", totp }

    /// The bucket of `series` of `project`.
    public static func bucket(_ project: String, _ series: String) -> String { "activity:" + project + ":" + series }

    /// Adds `amount` to the window of `size` holding `at`.
    public static func add(_ store: any LimitStore, project: String, series: String, at: Millis, size: Millis = hour, amount: Int = 1) throws {
        let start = at / size * size
        _ = try store.incrementCounter(bucket: bucket(project, series), windowStart: start, amount: amount, expiresAt: start + kept)
    }

    public static func wrongCode(_ store: any LimitStore, project: String, _ kind: WrongCode, at: Millis) throws {
        try add(store, project: project, series: "wrong_code:" + kind.rawValue, at: at)
    }

    public static func refusal(_ store: any LimitStore, rule: String, at: Millis) throws {
        try add(store, project: anyProject, series: "refused:" + rule, at: at)
    }

    public static func sent(_ store: any LimitStore, project: String, channel: OutboxMessage.Channel, at: Millis) throws {
        try add(store, project: project, series: "sent:" + channel.rawValue, at: at)
    }

    public static func smsRegion(_ store: any LimitStore, project: String, region: String, at: Millis) throws {
        try add(store, project: project, series: "sms_region:" + region.uppercased(), at: at, size: day)
    }
}
