import COpenSSL

/// A public key that checks a passkey's signatures (WebAuthn §6.5.6, RFC 9053): ES256 (ECDSA on
/// P-256 with SHA-256, the signature DER-encoded as authenticators send it), RS256 (RSASSA-PKCS1
/// v1.5 with SHA-256) or EdDSA (Ed25519, the message itself signed). Built from the key's numbers
/// as a COSE key carries them, through OpenSSL's own decoding of a SubjectPublicKeyInfo (an EC
/// point off the curve, or an RSA modulus below 2048 bits, is refused).
// @unchecked: an immutable OpenSSL key, safe for concurrent use once built.
public final class SignatureKey: @unchecked Sendable {
    public enum Algorithm: Sendable, Equatable {
        case es256, rs256, eddsa
    }

    public let algorithm: Algorithm
    let handle: PKeyHandle

    /// The smallest RSA modulus accepted.
    public static let minimumRSABits: Int32 = 2048

    /// A P-256 point (`x`, `y`: 32 bytes each, big-endian).
    public static func p256(x: [UInt8], y: [UInt8]) -> SignatureKey? {
        guard x.count == 32, y.count == 32 else { return nil }
        // SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING { 04 ‖ x ‖ y } }
        let prefix: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
                               0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04]
        return SignatureKey(spki: prefix + x + y, algorithm: .es256)
    }

    /// An Ed25519 public key (32 bytes).
    public static func ed25519(_ x: [UInt8]) -> SignatureKey? {
        guard x.count == 32 else { return nil }
        // SEQUENCE { SEQUENCE { id-Ed25519 }, BIT STRING { x } }
        let prefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]
        return SignatureKey(spki: prefix + x, algorithm: .eddsa)
    }

    /// An RSA public key from its modulus and exponent (big-endian, leading zeros allowed).
    public static func rsa(n: [UInt8], e: [UInt8]) -> SignatureKey? {
        let n = Array(n.drop { $0 == 0 }), e = Array(e.drop { $0 == 0 })
        guard !n.isEmpty, n.count <= 1024, !e.isEmpty, e.count <= 8 else { return nil }
        let rsaEncryption: [UInt8] = [0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00]
        let numbers = DER.element(0x30, DER.unsignedInteger(n) + DER.unsignedInteger(e))
        let spki = DER.element(0x30, rsaEncryption + DER.element(0x03, [0x00] + numbers))
        guard let key = SignatureKey(spki: spki, algorithm: .rs256), EVP_PKEY_get_bits(key.handle.pointer) >= minimumRSABits else { return nil }
        return key
    }

    init(handle: PKeyHandle, algorithm: Algorithm) {
        self.handle = handle
        self.algorithm = algorithm
    }

    init?(spki der: [UInt8], algorithm: Algorithm) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buf in
            var p = buf.baseAddress
            return d2i_PUBKEY(nil, &p, buf.count)
        }
        guard let parsed else { ERR_clear_error(); return nil }
        self.handle = PKeyHandle(parsed)
        self.algorithm = algorithm
    }

    /// Whether `signature` is this key's signature of `message` under its algorithm.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        guard !signature.isEmpty, signature.count <= 1024, let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        let digest: OpaquePointer? = algorithm == .eddsa ? nil : EVP_sha256()
        guard EVP_DigestVerifyInit(md, nil, digest, nil, handle.pointer) == 1 else { ERR_clear_error(); return false }
        let ok = signature.withUnsafeBufferPointer { s in message.withUnsafeBufferPointer { m in
            EVP_DigestVerify(md, s.baseAddress, s.count, m.baseAddress, m.count) } } == 1
        if !ok { ERR_clear_error() }
        return ok
    }
}

/// The few DER encodings a public key needs (definite, minimal lengths).
enum DER {
    static func element(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag]
        let n = contents.count
        if n < 0x80 {
            out.append(UInt8(n))
        } else {
            var length: [UInt8] = []
            var v = n
            while v > 0 { length.insert(UInt8(v & 0xFF), at: 0); v >>= 8 }
            out.append(0x80 | UInt8(length.count))
            out += length
        }
        return out + contents
    }

    /// A positive INTEGER: a zero byte first when the top bit is set.
    static func unsignedInteger(_ v: [UInt8]) -> [UInt8] {
        element(0x02, (v.first.map { $0 & 0x80 != 0 } ?? true) ? [0x00] + v : v)
    }
}
