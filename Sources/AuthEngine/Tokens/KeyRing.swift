public import AuthCrypto
import Locking

/// The signing keys of RFC 7515 RS256 tokens: the current signer plus every key still published.
/// Reads the store (so every instance sees a rotation) and caches for a few seconds.
///
/// Rotation never breaks a token Gatehouse issued: the old key stops signing but stays published
/// `retiredKeyLifetime` after that, longer than anything it signed can live; an instance that
/// meets an unknown `kid` (another instance just rotated) re-reads the store at once. A rotation
/// may also be staged (`activationDelay`): the key is published at once and signs later, so that
/// verifiers caching the key set (`max-age` 3600) know it before its first token. A key's
/// `createdAt` is the moment it starts signing.
public final class KeyRing: Sendable {
    /// A published key: its public half parsed from `publicPEM`; the private half parsed from
    /// `privatePEM` the first time it signs, then kept (verifying and publishing never parse it).
    public struct Key: Sendable {
        public let record: SigningKeyRecord
        public let publicKey: RSAPublicKey
        fileprivate let signing: PrivateHalf

        public var privateKey: RSAPrivateKey {
            get throws { try signing.key(pem: record.privatePEM) }
        }
    }

    /// The lazily parsed private key of one `Key`, shared by its copies.
    fileprivate final class PrivateHalf: Sendable {
        private let parsed: Locked<RSAPrivateKey?>

        init(_ key: RSAPrivateKey? = nil) { parsed = Locked(key) }

        func key(pem: String) throws -> RSAPrivateKey {
            try parsed.withLock { parsed in
                if let parsed { return parsed }
                let k = try RSAPrivateKey(pem: pem)
                parsed = k
                return k
            }
        }
    }

    /// Published lifetime of a retired key: the longest cookie (14 days) + the longest ID token (1 h).
    public static let retiredKeyLifetime: Millis = (14 * 24 + 1) * 3600 * 1000
    public static let cacheLifetime: Millis = 5_000
    /// The staging delay that covers every verifier honouring the key endpoints' `max-age`.
    public static let stagingDelay: Millis = 3600 * 1000
    /// Re-reads the store on an unknown `kid` at most this often (an attacker cannot force reads).
    public static let unknownKidReloadInterval: Millis = 1_000

    private struct Cache {
        var cached: (at: Millis, keys: [Key])?
        var lastForcedReload: Millis?
        /// Bumped whenever the published kid list changes; tags `derivedCache`.
        var generation = 0
        var derivedCache: [String: (generation: Int, bytes: [UInt8])] = [:]
    }
    private let cache = Locked(Cache())
    private let clock: any Clock

    public init(clock: any Clock) { self.clock = clock }

    /// Generates a key if none can sign yet (first start; signs at once), and with
    /// `deleteExpired` deletes keys whose publication ended (a write transaction: CGI mode leaves
    /// it to the next rotation or start of any other command). Safe under concurrent starts.
    public func ensureKey(store: any SigningKeyStore, random: any RandomSource, deleteExpired: Bool = true) throws {
        let now = clock.now()
        if deleteExpired { try store.deleteExpiredSigningKeys(at: now) }
        if try store.publishedSigningKeys(at: now).contains(where: { $0.retiredAt.map { $0 > now } ?? true }) { return }
        try rotate(store: store, random: random)
    }

    /// Adds a new signer: at once by default (gatehouse.md "a new key signs"), or published now
    /// and signing from now + `activationDelay` while the current signer carries on (the first key
    /// always signs at once). Older signers stay published `retiredKeyLifetime` after they stop
    /// signing; keys whose publication ended are deleted.
    @discardableResult
    public func rotate(store: any SigningKeyStore, random: any RandomSource, activationDelay: Millis = 0) throws -> SigningKeyRecord {
        let now = clock.now()
        let key = try RSAPrivateKey.generate(bits: 2048)
        let kid = Hex.encode(random.bytes(20))
        let record: SigningKeyRecord = try store.transaction {
            let hasSigner = try store.publishedSigningKeys(at: now).contains { $0.createdAt <= now && ($0.retiredAt.map { $0 > now } ?? true) }
            let start = hasSigner ? now + max(0, activationDelay) : now
            let record = SigningKeyRecord(
                kid: kid, privatePEM: try key.pem(), publicPEM: try key.publicKey.pem(),
                certificatePEM: try key.selfSignedCertificatePEM(commonName: "gatehouse-\(kid.prefix(8))", notBefore: now / 1000 - 60,
                                                                 validSeconds: 400 * 86400, serial: Int(now % 1_000_000_000)),
                createdAt: start)
            try store.insertSigningKey(record)
            try store.retireSigningKeys(except: kid, at: start, expiresAt: start + KeyRing.retiredKeyLifetime)
            try store.deleteExpiredSigningKeys(at: now)
            return record
        }
        invalidate()
        return record
    }

    /// A rotation an operator asks for (`gatehouse keys rotate`, the console's Keys page): a new
    /// signer at once, audited as `key.rotate` with `actor` (`cli`, `operator:<uid>`). Keys serve
    /// every project: the row names none.
    @discardableResult
    public func rotate(store: any SigningKeyStore & AuditStore, random: any RandomSource, actor: String) throws -> SigningKeyRecord {
        let record = try rotate(store: store, random: random)
        try store.audit(AuditEvent(projectID: "*", event: .keyRotate, detail: "kid=\(record.kid)", actor: actor), at: clock.now())
        return record
    }

    public func invalidate() { cache.withLock { c in c.cached = nil; c.generation += 1; c.derivedCache = [:] } }

    /// Published keys, newest first (cached briefly).
    public func keys(store: any SigningKeyStore, reload: Bool = false) throws -> [Key] {
        let now = clock.now()
        if !reload, let hit = cache.withLock({ c in c.cached }), now - hit.at < KeyRing.cacheLifetime, now >= hit.at { return hit.keys }
        let previous = cache.withLock { c in c.cached?.keys ?? [] }
        let keys = try store.publishedSigningKeys(at: now).map { rec -> Key in
            if let old = previous.first(where: { $0.record.kid == rec.kid }) { return Key(record: rec, publicKey: old.publicKey, signing: old.signing) }
            if rec.publicPEM.isEmpty {
                // A record without its public half: derive it from the private key.
                let priv = try RSAPrivateKey(pem: rec.privatePEM)
                return Key(record: rec, publicKey: priv.publicKey, signing: PrivateHalf(priv))
            }
            return Key(record: rec, publicKey: try RSAPublicKey(pem: rec.publicPEM), signing: PrivateHalf())
        }
        cache.withLock { c in
            if c.cached.map({ $0.keys.map(\.record.kid) }) != keys.map(\.record.kid) { c.generation += 1; c.derivedCache = [:] }
            c.cached = (now, keys)
        }
        return keys
    }

    /// Bytes computed from the published keys (a serialized key set, RFC 7517), kept under `name`
    /// until the published kid list changes. `make` must depend only on each key's kid and its
    /// immutable material (modulus, exponent, certificate).
    public func derived(_ name: String, store: any SigningKeyStore, make: ([Key]) throws -> [UInt8]) throws -> [UInt8] {
        let keys = try keys(store: store)
        let (gen, hit) = cache.withLock { c in (c.generation, c.derivedCache[name]) }
        if let hit, hit.generation == gen { return hit.bytes }
        let bytes = try make(keys)
        cache.withLock { c in if c.generation == gen { c.derivedCache[name] = (gen, bytes) } }
        return bytes
    }

    /// The current signer: the newest key whose signing period has started and not ended
    /// (falling back to the newest started key, so a skewed clock never stops signing).
    public func signer(store: any SigningKeyStore) throws -> Key {
        let now = clock.now()
        let keys = try keys(store: store)
        let started = keys.filter { $0.record.createdAt <= now }
        guard let k = started.first(where: { $0.record.retiredAt.map { $0 > now } ?? true }) ?? started.first ?? keys.last else {
            throw PortError("keys", "no current signing key")
        }
        return k
    }

    /// The published key with this `kid`, if any. An unknown `kid` re-reads the store (rate
    /// limited), in case another instance just added a key.
    public func key(kid: String, store: any SigningKeyStore) throws -> Key? {
        if let k = try keys(store: store).first(where: { $0.record.kid == kid }) { return k }
        let now = clock.now()
        let reload: Bool = cache.withLock { c in
            if let last = c.lastForcedReload, now >= last, now - last < KeyRing.unknownKidReloadInterval { return false }
            c.lastForcedReload = now
            return true
        }
        guard reload else { return nil }
        return try keys(store: store, reload: true).first(where: { $0.record.kid == kid })
    }
}
