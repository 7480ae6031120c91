/// A device an account has signed in from: the hash of its `SignInDevice.key`.
public struct UserDeviceRecord: Sendable, Equatable {
    public var projectID: String
    public var localID: String
    public var deviceHash: [UInt8]
    public var firstSeenAt: Millis
    public var lastSeenAt: Millis
    public init(projectID: String, localID: String, deviceHash: [UInt8], firstSeenAt: Millis, lastSeenAt: Millis) {
        self.projectID = projectID; self.localID = localID; self.deviceHash = deviceHash
        self.firstSeenAt = firstSeenAt; self.lastSeenAt = lastSeenAt
    }
}

/// What `noteDevice` found: the account's first device ever, one it used before, or a new one.
public enum DeviceSighting: Sendable, Equatable { case firstDevice, known, new }

/// Where an account is signed in, and the revocations the account page offers. Every method is
/// scoped to one user: an id from a form can only name that user's own session or family.
public protocol SignInListStore: Transactional {
    /// The newest token of each refresh family of the user that is neither rotated nor revoked
    /// (one per family: a refresh rotates the old token as it stores the new one).
    func liveRefreshTokens(project: String, localID: String) throws -> [RefreshTokenRecord]
    /// Revokes the user's family `familyID`; how many tokens it revoked (0: none of the user's, or already revoked).
    @discardableResult
    func revokeUserRefreshFamily(project: String, localID: String, familyID: String, at: Millis) throws -> Int
    /// Revokes the user's session `sidHash`; false when it is not the user's or already revoked.
    @discardableResult
    func revokeUserSession(project: String, localID: String, sidHash: [UInt8], at: Millis) throws -> Bool
    /// Revokes every session of the user but `keeping`, and every refresh token; how many rows.
    @discardableResult
    func revokeSignIns(project: String, localID: String, keepingSession keeping: [UInt8]?, at: Millis) throws -> Int
    /// Notes a sign-in from `device` (inserting it, or moving its `lastSeenAt` when a day old).
    /// Of two sign-ins from one new device at once, one finds it new.
    func noteDevice(_ device: UserDeviceRecord) throws -> DeviceSighting
}

/// An account that may open the operator console, and who made it one.
public struct OperatorRecord: Sendable, Equatable {
    public var projectID: String
    public var localID: String
    public var addedAt: Millis
    /// `cli` (the command line), or the uid of the operator who added it.
    public var addedBy: String
    public init(projectID: String, localID: String, addedAt: Millis, addedBy: String) {
        self.projectID = projectID; self.localID = localID; self.addedAt = addedAt; self.addedBy = addedBy
    }
}

public protocol OperatorStore: Transactional {
    /// False when it already was one.
    func addOperator(_ record: OperatorRecord) throws -> Bool
    /// False when it was not one.
    func removeOperator(project: String, localID: String) throws -> Bool
    /// Every operator (of `project`, or of all), in the order they were added.
    func operators(project: String?) throws -> [OperatorRecord]
    func isOperator(project: String, localID: String) throws -> Bool
}

/// A page of accounts for the console: in an order, or found by a prefix.
public struct AccountListing: Sendable, Equatable {
    public enum Order: String, Sendable { case created, lastSignIn = "last_sign_in" }
    public enum Field: String, Sendable { case uid, email, phone }
    public var order: Order = .created
    /// A prefix of one field: the page is in that field's byte order (and `order` is ignored).
    public var search: (field: Field, prefix: String)? {
        get { searchField.map { ($0, searchPrefix) } }
        set { searchField = newValue?.field; searchPrefix = newValue?.prefix ?? "" }
    }
    public var searchField: Field?
    public var searchPrefix = ""
    /// The last row of the previous page: its time (an order) or key (a search), and its uid.
    public var afterTime: Millis?
    public var afterKey: String?
    public var afterLocalID: String?
    public var limit = 50
    public init() {}
}

/// The console's audit filters; every one optional. Newest first, before `beforeID`.
public struct AuditFilter: Sendable, Equatable {
    public var project: String?
    public var localID: String?
    public var actor: String?
    public var event: String?
    /// Only rows of ids in [`fromID`, `beforeID`) (a time range, as ids by `auditID(atOrAfter:)`).
    public var fromID: Int64?
    public var beforeID: Int64?
    public var limit = 50
    public init() {}
}

/// One hour's (or day's) count of an audited event and outcome.
public struct AuditCount: Sendable, Equatable {
    public var bucketStart: Millis
    public var event: String
    public var outcome: String
    public var count: Int
    public init(bucketStart: Millis, event: String, outcome: String, count: Int) {
        self.bucketStart = bucketStart; self.event = event; self.outcome = outcome; self.count = count
    }
}

/// One stored counter window.
public struct CounterWindow: Sendable, Equatable {
    public var bucket: String
    public var windowStart: Millis
    public var count: Int
    public init(bucket: String, windowStart: Millis, count: Int) { self.bucket = bucket; self.windowStart = windowStart; self.count = count }
}

/// What the operator console reads and the few things it changes beyond the other ports.
public protocol ConsoleStore: Transactional {
    func accountPage(project: String, _ listing: AccountListing) throws -> [Account]
    func auditPage(_ filter: AuditFilter) throws -> [AuditRecord]
    /// The first audit id written at or after `at` (ids grow with time; found by bisection), or
    /// one past the last id when none was.
    func auditID(atOrAfter at: Millis) throws -> Int64
    /// Counts of the audited events of `project` with ids in [`fromID`, `toID`), per `bucketMillis` of `at`.
    func auditCounts(project: String, fromID: Int64, toID: Int64, bucketMillis: Millis) throws -> [AuditCount]
    /// Counter windows of every bucket starting with `prefix`, with windows in [`from`, `to`).
    func counterWindows(prefix: String, from: Millis, to: Millis) throws -> [CounterWindow]
    /// Messages of a project in `statuses`, newest first, ids below `beforeID`; `failedOnly`
    /// keeps those with a failed attempt.
    func outboxPage(project: String, statuses: [OutboxMessage.Status], failedOnly: Bool, beforeID: Int64?, limit: Int) throws -> [OutboxMessage]
    /// A pending message (waiting after failed attempts, or not yet due) made due now, its
    /// attempts reset; false for any other (a dead message's body is gone: it cannot be sent).
    func retryMessage(id: Int64, project: String, now: Millis) throws -> Bool
    /// A pending message made dead (body scrubbed, `lastError` = `reason`); a dead one deleted;
    /// false when it is being sent, was sent, or is not the project's.
    func discardMessage(id: Int64, project: String, reason: String, at: Millis) throws -> Bool
}
