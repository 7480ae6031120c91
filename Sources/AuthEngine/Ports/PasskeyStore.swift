/// A passkey as stored (WebAuthn's credential record, §4): its id, unique within a project, the
/// user it signs in, its public key as the authenticator gave it (a COSE key), the signature
/// counter last seen, and the backup flags last reported.
public struct PasskeyRecord: Sendable, Equatable {
    public var projectID: String
    /// The credential id's base64url (no padding): what the wire names it by.
    public var credentialID: String
    public var localID: String
    /// The COSE key (CBOR) from the attested credential data.
    public var publicKey: [UInt8]
    /// The COSE algorithm (-7 ES256, -8 EdDSA, -257 RS256).
    public var algorithm: Int64
    public var signCount: Int64
    public var name: String?
    /// The authenticator's model (16 bytes; zeros when it does not say).
    public var aaguid: [UInt8]
    public var backupEligible: Bool
    public var backedUp: Bool
    public var createdAt: Millis
    public var lastUsedAt: Millis?

    public init(projectID: String, credentialID: String, localID: String, publicKey: [UInt8], algorithm: Int64, signCount: Int64,
                name: String?, aaguid: [UInt8], backupEligible: Bool, backedUp: Bool, createdAt: Millis, lastUsedAt: Millis? = nil) {
        self.projectID = projectID; self.credentialID = credentialID; self.localID = localID; self.publicKey = publicKey
        self.algorithm = algorithm; self.signCount = signCount; self.name = name; self.aaguid = aaguid
        self.backupEligible = backupEligible; self.backedUp = backedUp; self.createdAt = createdAt; self.lastUsedAt = lastUsedAt
    }
}

/// A WebAuthn challenge handed out and not yet answered: only its hash is kept, with what it
/// may be used for (an enrolment of one user, or a sign-in).
public struct PasskeyChallengeRecord: Sendable, Equatable {
    public var challengeHash: [UInt8]
    public var projectID: String
    /// The user enrolling; nil for a sign-in.
    public var localID: String?
    public var createdAt: Millis
    public var expiresAt: Millis
    public var consumedAt: Millis?

    public init(challengeHash: [UInt8], projectID: String, localID: String?, createdAt: Millis, expiresAt: Millis, consumedAt: Millis? = nil) {
        self.challengeHash = challengeHash; self.projectID = projectID; self.localID = localID
        self.createdAt = createdAt; self.expiresAt = expiresAt; self.consumedAt = consumedAt
    }
}

/// Passkeys and their challenges.
public protocol PasskeyStore: Transactional {
    func insertPasskeyChallenge(_ record: PasskeyChallengeRecord) throws
    func passkeyChallenge(hash: [UInt8]) throws -> PasskeyChallengeRecord?
    /// Marks it consumed if it is unconsumed and unexpired at `now`; true when this call did.
    func consumePasskeyChallenge(hash: [UInt8], now: Millis) throws -> Bool
    /// Deletes challenges that expired before `before`; returns how many.
    @discardableResult
    func purgePasskeyChallenges(before: Millis) throws -> Int

    /// Inserts a new passkey; false (nothing written) when the project already has this credential id.
    func insertPasskey(_ record: PasskeyRecord) throws -> Bool
    func passkey(project: String, credentialID: String) throws -> PasskeyRecord?
    /// A user's passkeys, oldest first.
    func passkeys(project: String, localID: String) throws -> [PasskeyRecord]
    /// Records a use if the stored counter is still `expectedCount` (a concurrent use of the same
    /// credential made it stale otherwise); true when this call wrote.
    func recordPasskeyUse(project: String, credentialID: String, expectedCount: Int64, signCount: Int64, backedUp: Bool, at: Millis) throws -> Bool
    /// True when the user had it.
    func renamePasskey(project: String, localID: String, credentialID: String, name: String?) throws -> Bool
    /// True when the user had it.
    func deletePasskey(project: String, localID: String, credentialID: String) throws -> Bool
}
