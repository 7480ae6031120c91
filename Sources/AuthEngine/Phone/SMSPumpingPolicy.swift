/// SMS pumping (toll fraud) protection of a project: budgets per project, destination region and
/// destination prefix, and the automatic hold of a destination whose rate jumps
/// (docs/configuration-phone.md, docs/security.md "SMS pumping"). Every number is bounded.
public struct SMSPumpingPolicy: Sendable, Equatable {
    /// SMS of the project in any 24 hours.
    public var smsPerProjectPerDay = 2000
    /// SMS to one destination region in any hour.
    public var smsPerRegionPerHour = 500
    /// SMS to one destination prefix in any hour.
    public var smsPerPrefixPerHour = 50
    /// A prefix is the E.164 number without this many last digits (a block of 10^n numbers).
    public var prefixDroppedDigits = 4
    /// A destination is held when its last hour has more than `holdFactor` × its mean hour of
    /// the 24 hours before, and at least the minimum of its kind.
    public var holdFactor = 10
    public var holdMinPrefixPerHour = 20
    public var holdMinRegionPerHour = 100
    /// 0: a hold lasts until an operator releases it.
    public var holdHours = 0
    public init() {}
}
