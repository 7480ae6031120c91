/// A pending second-factor sign-in: what a first factor hands an enrolled user instead of tokens
/// (`mfaPendingCredential`), stored as a hash.
public struct MFAPendingRecord: Sendable, Equatable {
    public var credentialHash: [UInt8]
    public var projectID: String
    public var localID: String
    /// The first factor's `sign_in_provider` (`password` for an email link).
    public var firstFactor: String
    /// Seconds: the first factor's sign-in time, the tokens' `auth_time`.
    public var authTime: Int64
    public var createdAt: Millis
    public var expiresAt: Millis
    public var consumedAt: Millis?

    public init(credentialHash: [UInt8], projectID: String, localID: String, firstFactor: String, authTime: Int64,
                createdAt: Millis, expiresAt: Millis, consumedAt: Millis? = nil) {
        self.credentialHash = credentialHash; self.projectID = projectID; self.localID = localID; self.firstFactor = firstFactor
        self.authTime = authTime; self.createdAt = createdAt; self.expiresAt = expiresAt; self.consumedAt = consumedAt
    }
}

/// Pending second-factor sign-ins.
public protocol MFAStore: Transactional {
    func insertMFAPending(_ record: MFAPendingRecord) throws
    func mfaPending(hash: [UInt8]) throws -> MFAPendingRecord?
    /// Marks it consumed if it is unconsumed and unexpired at `now`; true when this call did.
    func consumeMFAPending(hash: [UInt8], now: Millis) throws -> Bool
    /// Deletes those that expired before `before`.
    func purgeMFAPending(before: Millis) throws
    /// Marks every unconsumed pending sign-in of a user consumed (a revocation); returns how many.
    @discardableResult
    func revokeMFAPending(project: String, localID: String, at: Millis) throws -> Int
}
