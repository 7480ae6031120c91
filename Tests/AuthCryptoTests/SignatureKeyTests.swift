@testable import AuthCrypto
import TestSupport
import Testing

/// The keys that check passkey signatures (`SignatureKey`): ES256 (DER signatures), RS256 and
/// EdDSA built from a COSE key's numbers. Each accepts its own good signature and refuses one bit
/// flipped, another key's, another algorithm's; a P-256 point off the curve and an RSA modulus
/// under 2048 bits are refused when the key is built.
///
/// The fixed vectors were made once with Python's `cryptography` 48.0.0 and pasted here:
/// `rsa.generate_private_key(65537, 2048)` (and 1024) signing `message` with
/// `padding.PKCS1v15(), hashes.SHA256()`; `ec.generate_private_key(ec.SECP256R1())` signing it with
/// `ec.ECDSA(hashes.SHA256())` (DER, as authenticators send it); the key's public numbers as
/// big-endian bytes. The Ed25519 vectors are RFC 8032 §7.1 TEST 2 and TEST 3 (checked with the
/// same library). The signatures were made by another implementation than the one verifying.
@Suite("Passkeys: signature keys")
struct SignatureKeyTests {
    static func hex(_ s: String) -> [UInt8] { Hex.decode(s)! }


    static let rsa2048Signature = hex(
        "699c8f56c3db2e4b8f569bf1b4a0cb68fa7482226a6aa4fb8466af9e4d520887f42ef8c0dd2e14695e67dd74b827ff26" +
        "bc5788b559faaf7daf9c7ed1608b45d7641c7919a1c2c1344b4239f81c9ae1a50c0b7b01c7abf9e61c269ae7d5ac8571" +
        "9ac52db7a1fee8c1438aebd58de3e679d6beaa1d34a07117951a36abcb08b04dd6f0231e71270cb4d0c3ba4753d68a15" +
        "5c2e0c046ecc6e7caa5a7adf65815d9fe746363f9bb0adaadffcd07a91eb05ad3ef09dc66298fcc1ece063f1ab9aace4" +
        "2e5cdff262a5b70531feb72fc4c303e31708bc98671e5b7b751765cda54152a97e332cf11e6d5d67f8d5d92e7b0b7202" +
        "b8a8a7a4b19279e005d5fdfdd22da607")
    static let rsa1024N = hex(
        "bf22d016002dd13a7d67010811588638938c7943ae0feca6f0703178186ff782411ea4b5fdcb7b5df5be5c416a7e5720" +
        "07322ed1a6e1f69f1ce14203788b296031dec94b4230824248305cdd1f212ddc8507881b69c2626315ec48fd2ed675c2" +
        "737879cd30a535934f3404049449ec8bd845fad8f4d5383b7383eed72ab6baaf")
    static let rsa1024Signature = hex(
        "448e647cec4ad59e48085da10c43b1738511b730522eb75493eb1496d19493b4a6d367b5a7f0948f25cc085b518a8600" +
        "1e30e52f94f8931da6f63874749e83e4f485da5b6c66fcb7a58717d0f35400bddaaa2231bce30b48f8ddd24a9a88f154" +
        "8c6673b0511f0d851791c34ab35088e674c01d738328df5fa002e4ec49b830dc")

    /// RFC 8032 §7.1 TEST 2: a one-byte message.
    static let ed25519Message: [UInt8] = [0x72]
    /// RFC 8032 §7.1 TEST 3: another key, a two-byte message.
    static let ed25519Key3 = hex("fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025")
    static let ed25519Message3: [UInt8] = [0xAF, 0x82]
    static let ed25519Signature3 = hex(
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac" +
        "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a")

    /// `bytes` with one bit flipped at `index` (the middle by default).
    static func flipped(_ bytes: [UInt8], at index: Int? = nil) -> [UInt8] {
        var b = bytes
        b[index ?? b.count / 2] ^= 0x01
        return b
    }

    // MARK: ES256

    @Test("ES256: another implementation's DER signature verifies; a flipped bit in it or in the message does not")
    func es256Vector() throws {
        let key = try #require(SignatureKey.p256(x: SignatureVectors.p256X, y: SignatureVectors.p256Y))
        #expect(key.algorithm == .es256)
        #expect(key.verify(signature: SignatureVectors.p256Signature, message: SignatureVectors.message))
        #expect(!key.verify(signature: Self.flipped(SignatureVectors.p256Signature), message: SignatureVectors.message))
        #expect(!key.verify(signature: Self.flipped(SignatureVectors.p256Signature, at: SignatureVectors.p256Signature.count - 1), message: SignatureVectors.message))
        #expect(!key.verify(signature: SignatureVectors.p256Signature, message: Self.flipped(SignatureVectors.message)))
        // The raw r ‖ s form (what JWS uses) is not what WebAuthn sends: refused.
        let raw = try ES256Signature.raw(fromDER: SignatureVectors.p256Signature)
        #expect(!key.verify(signature: raw, message: SignatureVectors.message))
        #expect(!key.verify(signature: [], message: SignatureVectors.message))
        #expect(!key.verify(signature: [UInt8](repeating: 0x30, count: 2000), message: SignatureVectors.message))
    }

    @Test("ES256: our own key's signature (raw r ‖ s made DER) verifies with its point; another key's point refuses it")
    func es256Generated() throws {
        let signer = try ES256PrivateKey.generate(), other = try ES256PrivateKey.generate()
        let (x, y) = try Self.point(signer), (ox, oy) = try Self.point(other)
        let signature = try #require(ES256Signature.der(fromRaw: try signer.sign(SignatureVectors.message)))
        let own = try #require(SignatureKey.p256(x: x, y: y))
        let another = try #require(SignatureKey.p256(x: ox, y: oy))
        let fixed = try #require(SignatureKey.p256(x: SignatureVectors.p256X, y: SignatureVectors.p256Y))
        #expect(own.verify(signature: signature, message: SignatureVectors.message))
        #expect(!another.verify(signature: signature, message: SignatureVectors.message))
        #expect(!fixed.verify(signature: signature, message: SignatureVectors.message))
    }

    /// The public point of a generated key, from its SubjectPublicKeyInfo (`04 ‖ x ‖ y` at the end).
    static func point(_ key: ES256PrivateKey) throws -> ([UInt8], [UInt8]) {
        let der = try #require(PublicKeyDER.body(pem: Array(try key.publicKeyPEM().utf8)))
        try #require(der.count == 91 && der[26] == 0x04)
        return (Array(der[27..<59]), Array(der[59..<91]))
    }

    @Test("P-256: a point off the curve, coordinates not below the field prime, or of the wrong length are refused")
    func p256Invalid() {
        #expect(SignatureKey.p256(x: SignatureVectors.p256X, y: Self.flipped(SignatureVectors.p256Y, at: 31)) == nil)
        #expect(SignatureKey.p256(x: Self.flipped(SignatureVectors.p256X, at: 0), y: SignatureVectors.p256Y) == nil)
        #expect(SignatureKey.p256(x: [UInt8](repeating: 0, count: 32), y: [UInt8](repeating: 0, count: 32)) == nil)
        #expect(SignatureKey.p256(x: [UInt8](repeating: 0, count: 31) + [1], y: [UInt8](repeating: 0, count: 31) + [1]) == nil)
        #expect(SignatureKey.p256(x: [UInt8](repeating: 0xFF, count: 32), y: [UInt8](repeating: 0xFF, count: 32)) == nil)
        #expect(SignatureKey.p256(x: Array(SignatureVectors.p256X.dropFirst()), y: SignatureVectors.p256Y) == nil)
        #expect(SignatureKey.p256(x: [0] + SignatureVectors.p256X, y: SignatureVectors.p256Y) == nil)
        #expect(SignatureKey.p256(x: SignatureVectors.p256X, y: []) == nil)
    }

    // MARK: RS256

    @Test("RS256: a 2048-bit key's signature verifies (leading zeros in n or e allowed); a flipped bit, another message do not")
    func rs256Vector() throws {
        let key = try #require(SignatureKey.rsa(n: SignatureVectors.rsa2048N, e: [0x01, 0x00, 0x01]))
        #expect(key.algorithm == .rs256)
        #expect(key.verify(signature: Self.rsa2048Signature, message: SignatureVectors.message))
        #expect(!key.verify(signature: Self.flipped(Self.rsa2048Signature), message: SignatureVectors.message))
        #expect(!key.verify(signature: Self.flipped(Self.rsa2048Signature, at: 0), message: SignatureVectors.message))
        #expect(!key.verify(signature: Self.rsa2048Signature, message: Self.flipped(SignatureVectors.message)))
        #expect(!key.verify(signature: Array(Self.rsa2048Signature.dropLast()), message: SignatureVectors.message))
        let padded = try #require(SignatureKey.rsa(n: [0, 0] + SignatureVectors.rsa2048N, e: [0, 0, 0x01, 0x00, 0x01]))
        #expect(padded.verify(signature: Self.rsa2048Signature, message: SignatureVectors.message))
        // Another exponent is another key.
        let otherExponent = try #require(SignatureKey.rsa(n: SignatureVectors.rsa2048N, e: [0x03]))
        #expect(!otherExponent.verify(signature: Self.rsa2048Signature, message: SignatureVectors.message))
    }

    @Test("RS256: a key we generate signs what its numbers verify; another key's numbers refuse it")
    func rs256Generated() throws {
        let signer = try RSAPrivateKey.generate()
        let signature = try signer.signRS256(SignatureVectors.message)
        let key = try #require(SignatureKey.rsa(n: try signer.publicKey.modulus(), e: try signer.publicKey.exponent()))
        #expect(key.verify(signature: signature, message: SignatureVectors.message))
        let vectorKey = try #require(SignatureKey.rsa(n: SignatureVectors.rsa2048N, e: [1, 0, 1]))
        #expect(!vectorKey.verify(signature: signature, message: SignatureVectors.message))
    }

    @Test("RSA: a modulus under 2048 bits is refused (its own good signature notwithstanding); empty or oversized numbers too")
    func rsaSmallModulus() {
        #expect(SignatureKey.minimumRSABits == 2048)
        #expect(SignatureKey.rsa(n: Self.rsa1024N, e: [1, 0, 1]) == nil)
        // 2047 bits: the top bit of a 2048-bit modulus cleared.
        var short = SignatureVectors.rsa2048N
        short[0] &= 0x7F
        #expect(SignatureKey.rsa(n: short, e: [1, 0, 1]) == nil)
        #expect(SignatureKey.rsa(n: [], e: [1, 0, 1]) == nil)
        #expect(SignatureKey.rsa(n: [0, 0, 0], e: [1, 0, 1]) == nil)
        #expect(SignatureKey.rsa(n: SignatureVectors.rsa2048N, e: []) == nil)
        #expect(SignatureKey.rsa(n: SignatureVectors.rsa2048N, e: [UInt8](repeating: 1, count: 9)) == nil)
        #expect(SignatureKey.rsa(n: [UInt8](repeating: 0xC5, count: 1025), e: [1, 0, 1]) == nil)
    }

    // MARK: EdDSA

    @Test("EdDSA: RFC 8032 TEST 2 and 3 verify with their keys; a flipped bit, the other key, the other message do not")
    func ed25519Vectors() throws {
        let key = try #require(SignatureKey.ed25519(SignatureVectors.ed25519Key))
        let key3 = try #require(SignatureKey.ed25519(Self.ed25519Key3))
        #expect(key.algorithm == .eddsa)
        #expect(key.verify(signature: SignatureVectors.ed25519Signature, message: Self.ed25519Message))
        #expect(key3.verify(signature: Self.ed25519Signature3, message: Self.ed25519Message3))
        #expect(!key.verify(signature: Self.flipped(SignatureVectors.ed25519Signature), message: Self.ed25519Message))
        #expect(!key.verify(signature: Self.flipped(SignatureVectors.ed25519Signature, at: 63), message: Self.ed25519Message))
        #expect(!key.verify(signature: SignatureVectors.ed25519Signature, message: [0x73]))
        #expect(!key3.verify(signature: SignatureVectors.ed25519Signature, message: Self.ed25519Message))
        #expect(!key.verify(signature: Self.ed25519Signature3, message: Self.ed25519Message3))
        #expect(!key.verify(signature: Array(SignatureVectors.ed25519Signature.prefix(63)), message: Self.ed25519Message))
        #expect(SignatureKey.ed25519(Array(SignatureVectors.ed25519Key.prefix(31))) == nil)
        #expect(SignatureKey.ed25519(SignatureVectors.ed25519Key + [0]) == nil)
    }

    @Test("a signature of one algorithm never verifies under a key of another")
    func crossAlgorithm() throws {
        let es = try #require(SignatureKey.p256(x: SignatureVectors.p256X, y: SignatureVectors.p256Y))
        let rs = try #require(SignatureKey.rsa(n: SignatureVectors.rsa2048N, e: [1, 0, 1]))
        let ed = try #require(SignatureKey.ed25519(SignatureVectors.ed25519Key))
        #expect(!rs.verify(signature: SignatureVectors.p256Signature, message: SignatureVectors.message))
        #expect(!ed.verify(signature: SignatureVectors.p256Signature, message: SignatureVectors.message))
        #expect(!es.verify(signature: Self.rsa2048Signature, message: SignatureVectors.message))
        #expect(!es.verify(signature: SignatureVectors.ed25519Signature, message: Self.ed25519Message))
        #expect(!rs.verify(signature: SignatureVectors.ed25519Signature, message: Self.ed25519Message))
    }
}
