import AuthCrypto
public import JSONValue

/// What silent-push app verification needs from the store.
public typealias PushFlowStore = PushStore & OutboxStore & LimitStore

/// `accounts:verifyIosClient` (firebase-wire.md §2.15): issues a receipt to the caller and
/// commits, in the same transaction, a silent push carrying the receipt and its secret to the
/// device. The answer never waits for Apple: the outbox worker sends the push (retries and
/// backoff included), so a slow or absent gateway costs the caller nothing.
public struct IOSClientVerification {
    public let store: any PushFlowStore
    public let clock: any Clock
    public let random: any RandomSource
    public let project: ProjectSettings

    public init(store: any PushFlowStore, clock: any Clock, random: any RandomSource, project: ProjectSettings) {
        self.store = store; self.clock = clock; self.random = random; self.project = project
    }

    public struct Request: Sendable {
        /// The APNs device token as the SDK sends it: hex (upper-case from the SDK).
        public var appToken: String?
        public var isSandbox: Bool
        /// `X-Ios-Bundle-Identifier`.
        public var bundleID: String?
        public var remoteAddress: String
        public init(appToken: String?, isSandbox: Bool, bundleID: String?, remoteAddress: String) {
            self.appToken = appToken; self.isSandbox = isSandbox; self.bundleID = bundleID; self.remoteAddress = remoteAddress
        }
    }

    public struct Result: Sendable, Equatable {
        public var receipt: String
        /// Seconds, as the string the wire carries.
        public var suggestedTimeout: String
        /// The push committed to the outbox (the caller wakes the worker).
        public var deviceToken: String
    }

    /// APNs device tokens are 32 bytes today; Apple documents them as variable, up to 100.
    static let deviceTokenBytes = 32...100

    /// The token in upper-case hex; nil unless it is hex of 32–100 whole bytes.
    public static func deviceToken(_ raw: String) -> String? {
        let u = raw.utf8
        guard u.count % 2 == 0, deviceTokenBytes.contains(u.count / 2),
              u.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }) else { return nil }
        return raw.uppercased()
    }

    enum Refusal { case client, device }

    public func verify(_ request: Request) throws -> Result {
        guard let raw = request.appToken, !raw.isEmpty else { throw AuthError(.missingIOSAppToken) }
        guard let device = IOSClientVerification.deviceToken(raw) else {
            throw AuthError(.invalidAppCredential, "appToken is not an APNs device token (hex, 32 to 100 bytes).")
        }
        guard let bundle = request.bundleID, !bundle.isEmpty, let app = project.iosApp(bundleID: bundle) else {
            throw AuthError(.invalidAppCredential, "The request names no registered iOS app of this project (X-Ios-Bundle-Identifier).")
        }
        // Dev mode sends nothing (the push is listed by the dev endpoint), so it needs no key.
        guard project.devMode || app.apns != nil else {
            throw AuthError(.invalidAppCredential, "Silent pushes are not configured for this app (no APNs auth key).")
        }
        let policy = project.push
        let now = clock.now()
        let receipt = IOSReceipts.receiptPrefix + random.token(bytes: 32)
        let secret = random.token(bytes: 24)
        let expiresAt = now + policy.receiptLifetimeSeconds * 1000
        let record = IOSReceiptRecord(receiptHash: IOSReceipts.hash(receipt), projectID: project.id, bundleID: bundle,
                                      deviceTokenHash: Digest.sha256(device), sandbox: request.isSandbox,
                                      secretHash: IOSReceipts.hash(secret), createdAt: now, expiresAt: expiresAt)
        let message = OutboxMessage(
            projectID: project.id, channel: .push, recipient: device,
            body: IOSClientVerification.payload(receipt: receipt, secret: secret).serialized(),
            metadata: JSON.obj(("bundleId", bundle), ("sandbox", request.isSandbox), ("expiresAt", Int(expiresAt))).serialized(),
            nextAttemptAt: now, createdAt: now)
        let client = project.client(request.remoteAddress)
        // Counted and written in one transaction; a refusal commits its count and is thrown after.
        let refusal: Refusal? = try store.transaction {
            if !project.devMode {
                let limits = Limits(store: store, clock: clock)
                let perClient = Limits.Rule("push-verify-ip-hour", max: policy.verificationsPerIPPerHour, per: 3600)
                let perDevice = Limits.Rule("push-device-hour", max: policy.pushesPerDevicePerHour, per: 3600)
                if try !limits.record(perClient, client: client, scope: project.id) { return .client }
                if try !limits.record(perDevice, key: project.id + "|" + device) { return .device }
            }
            try store.insertIOSReceipt(record)
            _ = try store.enqueue(message)
            return nil
        }
        switch refusal {
        case .client?: throw AuthError(.tooManyAttempts)
        // The device's budget is not the caller's: the SDK answers this error with the
        // verification page, so the device's owner is never locked out by someone else's calls.
        case .device?: throw AuthError(.invalidAppCredential, "Too many pushes to this device; verify with the page instead.")
        case nil: return Result(receipt: receipt, suggestedTimeout: String(policy.suggestedTimeoutSeconds), deviceToken: device)
        }
    }

    /// The silent push: `content-available` and nothing the user sees; the SDK reads the pair
    /// under `com.google.firebase.auth` (firebase-wire.md §2.15).
    public static func payload(receipt: String, secret: String) -> JSON {
        .obj(("aps", JSON.obj(("content-available", 1))),
             ("com.google.firebase.auth", JSON.obj(("receipt", receipt), ("secret", secret))))
    }
}
