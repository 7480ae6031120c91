/// A receipt of `verifyIosClient` as stored: the receipt and its secret only as SHA-256 hashes,
/// bound to the project, the app (bundle id) and the device the secret was pushed to.
public struct IOSReceiptRecord: Sendable, Equatable {
    public var receiptHash: [UInt8]
    public var projectID: String
    public var bundleID: String
    /// SHA-256 of the device token (upper-case hex) the push went to.
    public var deviceTokenHash: [UInt8]
    public var sandbox: Bool
    public var secretHash: [UInt8]
    public var createdAt: Millis
    public var expiresAt: Millis
    /// Sends that used the pair so far (`PushPolicy.sendsPerReceipt` at most).
    public var uses: Int

    public init(receiptHash: [UInt8], projectID: String, bundleID: String, deviceTokenHash: [UInt8], sandbox: Bool,
                secretHash: [UInt8], createdAt: Millis, expiresAt: Millis, uses: Int = 0) {
        self.receiptHash = receiptHash; self.projectID = projectID; self.bundleID = bundleID; self.deviceTokenHash = deviceTokenHash
        self.sandbox = sandbox; self.secretHash = secretHash; self.createdAt = createdAt; self.expiresAt = expiresAt; self.uses = uses
    }
}

/// Storage port of silent-push app verification (gatehouse.md "APNs silent push").
public protocol PushStore: Transactional {
    func insertIOSReceipt(_ record: IOSReceiptRecord) throws
    func iosReceipt(hash: [UInt8]) throws -> IOSReceiptRecord?
    /// Counts one use of the receipt if it is unexpired at `now` and has fewer than `maxUses`
    /// uses (one conditional write, race-free across instances). False when it has not.
    func useIOSReceipt(hash: [UInt8], maxUses: Int, now: Millis) throws -> Bool
}
