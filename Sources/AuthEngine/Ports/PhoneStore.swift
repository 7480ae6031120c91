/// One phone verification (firebase-wire.md §2.1): a code sent, or pretended sent for a test
/// number, to one number for one app. Only hashes of the code and of the sessionInfo are kept;
/// `nonce` is the random value the sessionInfo is derived from with a server key
/// (see `PhoneSignIn.sessionInfo(nonce:key:)`).
public struct PhoneVerificationRecord: Sendable, Equatable {
    /// SHA-256 of the sessionInfo handed to the client.
    public var sessionHash: [UInt8]
    public var projectID: String
    /// E.164.
    public var phoneNumber: String
    /// The app the code was requested for (bundle id, package, `web` for the hosted page, "" unknown).
    public var appID: String
    /// HMAC of the code under the server's phone key, bound to `nonce`.
    public var codeHash: [UInt8]
    public var nonce: [UInt8]
    public var createdAt: Millis
    public var expiresAt: Millis
    /// Wrong codes entered so far.
    public var attempts: Int
    public var consumedAt: Millis?
    /// Set when a "send again" replaced this code with a new one.
    public var supersededAt: Millis?
    public var isTest: Bool
    /// SHA-256 of the requesting client's network (`PhoneSignIn.clientHash`): a pending code is
    /// handed back only to the client that asked for it.
    public var clientHash: [UInt8]
    /// What the code is for: a first-factor sign-in, or a second factor's enrolment or sign-in,
    /// which only that flow accepts.
    public var purpose: PhoneCodePurpose
    /// The outbox message carrying the current code (nil for test numbers), and its channel:
    /// the hosted page shows what became of it; an automatic fallback replaces both.
    public var messageID: Int64?
    public var channel: OutboxMessage.Channel?

    public init(sessionHash: [UInt8], projectID: String, phoneNumber: String, appID: String, codeHash: [UInt8], nonce: [UInt8],
                createdAt: Millis, expiresAt: Millis, attempts: Int = 0, consumedAt: Millis? = nil, supersededAt: Millis? = nil,
                isTest: Bool = false, clientHash: [UInt8] = [], purpose: PhoneCodePurpose = .signIn,
                messageID: Int64? = nil, channel: OutboxMessage.Channel? = nil) {
        self.sessionHash = sessionHash; self.projectID = projectID; self.phoneNumber = phoneNumber; self.appID = appID
        self.codeHash = codeHash; self.nonce = nonce; self.createdAt = createdAt; self.expiresAt = expiresAt
        self.attempts = attempts; self.consumedAt = consumedAt; self.supersededAt = supersededAt; self.isTest = isTest
        self.clientHash = clientHash; self.purpose = purpose; self.messageID = messageID; self.channel = channel
    }
}

/// A `temporaryProof` (firebase-wire.md §2.2): proof that a number was verified, handed out when
/// the number could not be linked because another account owns it. Stored as a hash.
public struct PhoneProofRecord: Sendable, Equatable {
    public var proofHash: [UInt8]
    public var projectID: String
    public var phoneNumber: String
    public var createdAt: Millis
    public var expiresAt: Millis

    public init(proofHash: [UInt8], projectID: String, phoneNumber: String, createdAt: Millis, expiresAt: Millis) {
        self.proofHash = proofHash; self.projectID = projectID; self.phoneNumber = phoneNumber
        self.createdAt = createdAt; self.expiresAt = expiresAt
    }
}

/// Storage port of phone sign-in. Every change is conditional ("if still unused") so concurrent
/// requests on several connections cannot use a code twice or exceed the attempt limit.
public protocol PhoneStore: Transactional {
    func insertPhoneVerification(_ record: PhoneVerificationRecord) throws
    func phoneVerification(sessionHash: [UInt8]) throws -> PhoneVerificationRecord?
    /// The newest verification for project + number + purpose + client network that is still
    /// pending at `now`: unexpired, unconsumed, not superseded, fewer than `maxAttempts` wrong
    /// codes. Not keyed on the app the request names: a client could name a new one each time.
    func pendingPhoneVerification(project: String, phoneNumber: String, purpose: PhoneCodePurpose, clientHash: [UInt8],
                                  now: Millis, maxAttempts: Int) throws -> PhoneVerificationRecord?
    /// Counts one wrong code if the verification is unconsumed and below `maxAttempts`;
    /// returns the new count, or nil when nothing was counted.
    func recordWrongPhoneCode(sessionHash: [UInt8], maxAttempts: Int) throws -> Int?
    /// Records a sign-in on an existing account whose number did not change: only its login
    /// times, and its providers when `providersChanged`, are written (its other columns, and so
    /// their indexes, stay as they are).
    func recordPhoneSignIn(_ account: Account, providersChanged: Bool) throws
    /// Marks the verification consumed if it is unconsumed, not superseded, unexpired at `now`
    /// and below `maxAttempts`; true when this call consumed it.
    func consumePhoneVerification(sessionHash: [UInt8], now: Millis, maxAttempts: Int) throws -> Bool
    /// Marks the verification superseded if it is still unconsumed and not superseded; true when
    /// this call did. Only that code: other clients' codes for the same number stay valid.
    func supersedePhoneVerification(sessionHash: [UInt8], at: Millis) throws -> Bool
    /// Gives a still pending verification (unconsumed, not superseded, unexpired at `now`) a new
    /// code carried by message `messageID` on `channel`, valid until `expiresAt`; its wrong
    /// codes so far still count. True when this call did.
    func replacePhoneCode(sessionHash: [UInt8], codeHash: [UInt8], messageID: Int64, channel: OutboxMessage.Channel, now: Millis,
                          expiresAt: Millis) throws -> Bool
    /// Deletes verifications and proofs that expired before `before`.
    func purgePhoneRecords(before: Millis) throws

    func insertPhoneProof(_ proof: PhoneProofRecord) throws
    func phoneProof(hash: [UInt8]) throws -> PhoneProofRecord?
    /// Deletes the proof; true if it existed.
    func deletePhoneProof(hash: [UInt8]) throws -> Bool
}
