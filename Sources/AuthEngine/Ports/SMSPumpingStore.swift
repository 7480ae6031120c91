/// A destination whose SMS are refused until an operator releases it (or the hold expires):
/// its send rate jumped far above its own recent baseline (docs/security.md "SMS pumping").
public struct SMSHold: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// An E.164 number without its last digits (`+3712012`).
        case prefix
        /// An ISO region (`LV`), or `001` for non-geographic numbers.
        case region
    }

    public var projectID: String
    public var kind: Kind
    public var key: String
    public var heldAt: Millis
    /// nil: until released.
    public var expiresAt: Millis?
    public var releasedAt: Millis?
    /// SMS to the destination in the hour that triggered the hold, and in the 24 hours before it.
    public var recentCount: Int
    public var baselineCount: Int

    public init(projectID: String, kind: Kind, key: String, heldAt: Millis, expiresAt: Millis? = nil, releasedAt: Millis? = nil,
                recentCount: Int, baselineCount: Int) {
        self.projectID = projectID; self.kind = kind; self.key = key; self.heldAt = heldAt; self.expiresAt = expiresAt
        self.releasedAt = releasedAt; self.recentCount = recentCount; self.baselineCount = baselineCount
    }

    /// Whether sends to the destination are refused at `now`.
    public func isActive(at now: Millis) -> Bool { releasedAt == nil && (expiresAt ?? Millis.max) > now }
}

/// What SMS pumping protection needs from the store: the durable limit counters (one series of
/// 5-minute buckets per destination, summed over a range) and the holds.
public protocol SMSPumpingStore: LimitStore {
    /// The sum of the counters of `bucket` whose windows start in `from..<to`.
    func counterSum(bucket: String, from: Millis, to: Millis) throws -> Int
    func smsHold(project: String, kind: SMSHold.Kind, key: String) throws -> SMSHold?
    /// Inserts or replaces the hold of the same project, kind and key.
    func putSMSHold(_ hold: SMSHold) throws
    /// Every hold recorded (active, released or expired), of one project or all; oldest first.
    func smsHolds(project: String?) throws -> [SMSHold]
}
