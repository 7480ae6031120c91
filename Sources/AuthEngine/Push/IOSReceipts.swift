import AuthCrypto

/// The iOS app credential a send may carry: `iosReceipt` (from `verifyIosClient`) and
/// `iosSecret` (from the silent push that followed it).
public struct IOSCredential: Sendable, Equatable {
    public var receipt: String?
    public var secret: String?
    public init(receipt: String?, secret: String?) { self.receipt = receipt; self.secret = secret }

    /// Whether the request carried either part (an empty string counts as absent).
    public var isGiven: Bool { !(receipt ?? "").isEmpty || !(secret ?? "").isEmpty }
}

/// Receipts and secrets of silent-push app verification (gatehouse.md "APNs silent push"):
/// random, stored hashed, bound to project, bundle id and device; a pair is reusable by its app
/// for `PushPolicy.receiptLifetimeSeconds` with `sendsPerReceipt` sends. Anything else is
/// `INVALID_APP_CREDENTIAL`, which makes the iOS SDK forget the pair and verify afresh.
public struct IOSReceipts {
    public static let receiptPrefix = "ghir1."
    /// Longest receipt or secret looked at: anything longer was not issued here.
    static let maxLength = 200

    public let store: any PushStore
    public let clock: any Clock
    public let project: ProjectSettings

    public init(store: any PushStore, clock: any Clock, project: ProjectSettings) {
        self.store = store; self.clock = clock; self.project = project
    }

    static func hash(_ value: String) -> [UInt8] { Digest.sha256(value) }

    /// Checks the pair for `bundleID` (the calling app, `X-Ios-Bundle-Identifier`) and counts one
    /// use of it. The secret is compared as a hash, in constant time.
    public func use(_ credential: IOSCredential, bundleID: String) throws {
        guard let receipt = credential.receipt, let secret = credential.secret, !receipt.isEmpty, !secret.isEmpty else {
            throw AuthError(.invalidAppCredential, "Both iosReceipt and iosSecret are required.")
        }
        guard receipt.hasPrefix(IOSReceipts.receiptPrefix), receipt.utf8.count <= IOSReceipts.maxLength,
              secret.utf8.count <= IOSReceipts.maxLength else { throw IOSReceipts.invalid }
        let hash = IOSReceipts.hash(receipt)
        let now = clock.now()
        guard let record = try store.iosReceipt(hash: hash), record.projectID == project.id, record.bundleID == bundleID,
              Digest.constantTimeEqual(record.secretHash, IOSReceipts.hash(secret)), record.expiresAt > now else {
            throw IOSReceipts.invalid
        }
        guard try store.useIOSReceipt(hash: hash, maxUses: project.push.sendsPerReceipt, now: now) else { throw IOSReceipts.invalid }
    }

    static let invalid = AuthError(.invalidAppCredential, "The iOS app credential is invalid, expired or used up.")
}
