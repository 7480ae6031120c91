import AuthCrypto

/// The signing keys of RFC 7515 RS256 tokens: the current signer plus every key still published.
/// Reads the store (so every instance sees a rotation) and caches for a few seconds.
public final class KeyRing: @unchecked Sendable {
    public struct Key: @unchecked Sendable {
        public let record: SigningKeyRecord
        public let privateKey: RSAPrivateKey
        public let publicKey: RSAPublicKey
    }

    /// Published lifetime of a retired key: the longest cookie (14 days) + the longest ID token (1 h).
    public static let retiredKeyLifetime: Millis = (14 * 24 + 1) * 3600 * 1000
    public static let cacheLifetime: Millis = 5_000

    private let lock = NSLockLike()
    private var cached: (at: Millis, keys: [Key])?
    private let clock: Clock

    public init(clock: Clock) { self.clock = clock }

    /// Generates a key if the store has none yet (first start). Safe under concurrent starts.
    public func ensureKey(store: SigningKeyStore, random: RandomSource) throws {
        if try store.publishedSigningKeys(at: clock.now()).contains(where: { $0.retiredAt == nil }) { return }
        try rotate(store: store, random: random)
    }

    /// Adds a new signer; older signers stay published for `retiredKeyLifetime`.
    @discardableResult
    public func rotate(store: SigningKeyStore, random: RandomSource) throws -> SigningKeyRecord {
        let now = clock.now()
        let key = try RSAPrivateKey.generate(bits: 2048)
        let kid = Hex.encode(random.bytes(20))
        let record = SigningKeyRecord(
            kid: kid, privatePEM: try key.pem(), publicPEM: try key.publicKey.pem(),
            certificatePEM: try key.selfSignedCertificatePEM(commonName: "gatehouse-\(kid.prefix(8))", notBefore: now / 1000 - 60,
                                                             validSeconds: 400 * 86400, serial: Int(now % 1_000_000_000)),
            createdAt: now)
        try store.transaction {
            try store.insertSigningKey(record)
            try store.retireSigningKeys(except: kid, at: now, expiresAt: now + KeyRing.retiredKeyLifetime)
        }
        invalidate()
        return record
    }

    public func invalidate() { lock.withLock { cached = nil } }

    /// Published keys, newest first (cached briefly).
    public func keys(store: SigningKeyStore) throws -> [Key] {
        let now = clock.now()
        if let c = lock.withLock({ cached }), now - c.at < KeyRing.cacheLifetime, now >= c.at { return c.keys }
        let previous = lock.withLock { cached?.keys ?? [] }
        let keys = try store.publishedSigningKeys(at: now).map { rec -> Key in
            if let old = previous.first(where: { $0.record.kid == rec.kid }) { return Key(record: rec, privateKey: old.privateKey, publicKey: old.publicKey) }
            let priv = try RSAPrivateKey(pem: rec.privatePEM)
            return Key(record: rec, privateKey: priv, publicKey: priv.publicKey)
        }
        lock.withLock { cached = (now, keys) }
        return keys
    }

    /// The current signer (newest key not retired).
    public func signer(store: SigningKeyStore) throws -> Key {
        guard let k = try keys(store: store).first(where: { $0.record.retiredAt == nil }) else {
            throw PortError("keys", "no current signing key")
        }
        return k
    }

    /// The published key with this `kid`, if any.
    public func key(kid: String, store: SigningKeyStore) throws -> Key? {
        try keys(store: store).first(where: { $0.record.kid == kid })
    }
}
