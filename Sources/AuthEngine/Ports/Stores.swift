/// Storage ports. `AuthStore` implements them over SQLite (engine tests use it on an in-memory database).
/// Each flow keeps its writes inside one `transaction`, with explicit conditions
/// ("consume if still unused"), so nothing depends on a single writer.
public protocol Transactional {
    /// Runs `body` in one write transaction (nested calls join the outer one).
    func transaction<T>(_ body: () throws -> T) throws -> T
}

/// A signing key as stored: the private half never leaves the store and the signer.
public struct SigningKeyRecord: Sendable, Equatable {
    public var kid: String
    public var algorithm: String
    public var privatePEM: String
    public var publicPEM: String
    public var certificatePEM: String
    public var createdAt: Millis
    /// When it stopped signing (a newer key took over); nil while it is the current signer.
    public var retiredAt: Millis?
    /// When it stops being published.
    public var expiresAt: Millis?

    public init(kid: String, algorithm: String = "RS256", privatePEM: String, publicPEM: String, certificatePEM: String,
                createdAt: Millis, retiredAt: Millis? = nil, expiresAt: Millis? = nil) {
        self.kid = kid; self.algorithm = algorithm; self.privatePEM = privatePEM; self.publicPEM = publicPEM
        self.certificatePEM = certificatePEM; self.createdAt = createdAt; self.retiredAt = retiredAt; self.expiresAt = expiresAt
    }
}

/// Signing keys, shared by every instance that uses the store.
public protocol SigningKeyStore: Transactional {
    /// Keys still published at `now` (not expired), newest first.
    func publishedSigningKeys(at now: Millis) throws -> [SigningKeyRecord]
    func insertSigningKey(_ key: SigningKeyRecord) throws
    /// Marks every current signer other than `except` retired at `at`, published until `expiresAt`.
    func retireSigningKeys(except kid: String, at: Millis, expiresAt: Millis) throws
    /// Deletes keys whose publication ended (their private halves must not linger).
    @discardableResult
    func deleteExpiredSigningKeys(at now: Millis) throws -> Int
}

/// Server-side secrets (HMAC keys) generated once and shared by all instances.
public protocol SecretStore: Transactional {
    func secret(named name: String) throws -> [UInt8]?
    /// Inserts if absent; returns whichever value is stored afterwards (first writer wins).
    func insertSecretIfAbsent(named name: String, value: [UInt8], at: Millis) throws -> [UInt8]
}

/// Store health for `/__/auth/health`.
public protocol HealthProbe {
    /// Runs a trivial query; returns the schema version.
    func probe() throws -> Int
}

/// Everything a store must provide; grows as flows add ports.
public typealias GatehouseStore = AccountStore & SigningKeyStore & SecretStore & HealthProbe
    & LimitStore & OutboxStore & AuditStore & AppTokenStore
    & PhoneStore & AppVerificationStore & EmailLinkStore & SessionStore & SMSPumpingStore & MFAStore & PushStore & PasskeyStore
    & SignInListStore & OperatorStore & ConsoleStore & DeliveryStore
