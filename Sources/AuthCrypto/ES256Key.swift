import COpenSSL

/// A P-256 private key for ES256 (RFC 7518 §3.4: ECDSA with SHA-256): what an APNs auth key
/// (Apple's `.p8` file, an unencrypted PKCS#8 PEM) is. Signing is rare (a provider token lasts
/// tens of minutes), so each signature takes a fresh digest context.
// @unchecked: an immutable OpenSSL key, safe for concurrent use once built.
public final class ES256PrivateKey: @unchecked Sendable {
    let handle: PKeyHandle

    init(handle: PKeyHandle) { self.handle = handle }

    /// The curve ES256 is defined on, as OpenSSL names it.
    static let curve = "prime256v1"

    /// Loads a PKCS#8 PEM private key; refuses a key that is not EC on P-256.
    public init(pem: String) throws(CryptoError) {
        guard let key = try withPEM(pem, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            throw CryptoError.fromOpenSSL("PEM_read_bio_PrivateKey")
        }
        let h = PKeyHandle(key)
        try ES256PrivateKey.checkCurve(h)
        handle = h
    }

    /// A fresh key from OpenSSL's CSPRNG (tests, and the probe's own checks).
    public static func generate() throws(CryptoError) -> ES256PrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw CryptoError.fromOpenSSL("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_keygen_init(ctx), "EVP_PKEY_keygen_init")
        try check(EVP_PKEY_CTX_set_group_name(ctx, "P-256"), "EVP_PKEY_CTX_set_group_name")
        var key: OpaquePointer? = nil
        try check(EVP_PKEY_generate(ctx, &key), "EVP_PKEY_generate")
        guard let key else { throw CryptoError.fromOpenSSL("EVP_PKEY_generate") }
        return ES256PrivateKey(handle: PKeyHandle(key))
    }

    static func checkCurve(_ h: PKeyHandle) throws(CryptoError) {
        guard EVP_PKEY_get_base_id(h.pointer) == EVP_PKEY_EC else {
            throw CryptoError(operation: "ES256 key", detail: "not an elliptic-curve key (an APNs auth key is EC on P-256)")
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(h.pointer, &name, name.count, &length) == 1 else {
            throw CryptoError.fromOpenSSL("EVP_PKEY_get_group_name")
        }
        let group = String(decoding: name.prefix(min(length, name.count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard group == curve else {
            throw CryptoError(operation: "ES256 key", detail: "the key is on curve \(group), ES256 needs P-256 (\(curve))")
        }
    }

    /// PKCS#8 PEM. Secret: never log it.
    public func pem() throws(CryptoError) -> String { try handle.privatePEM() }

    /// The public half, as a SubjectPublicKeyInfo PEM.
    public func publicKeyPEM() throws(CryptoError) -> String { try handle.publicPEM() }

    /// The JWS form of an ES256 signature: `r ‖ s`, each 32 bytes big-endian (RFC 7518 §3.4),
    /// converted from the DER `ECDSA-Sig-Value` OpenSSL produces.
    public func sign(_ data: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let md = EVP_MD_CTX_new() else { throw CryptoError.fromOpenSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(md) }
        try check(EVP_DigestSignInit(md, nil, EVP_sha256(), nil, handle.pointer), "EVP_DigestSignInit")
        var length = 0
        try check(data.withUnsafeBufferPointer { EVP_DigestSign(md, nil, &length, $0.baseAddress, $0.count) }, "EVP_DigestSign")
        var der = [UInt8](repeating: 0, count: length)
        try check(data.withUnsafeBufferPointer { d in der.withUnsafeMutableBufferPointer { EVP_DigestSign(md, $0.baseAddress, &length, d.baseAddress, d.count) } },
                  "EVP_DigestSign")
        return try ES256Signature.raw(fromDER: Array(der.prefix(length)))
    }
}

/// A P-256 public key that checks ES256 signatures (the provider tokens' tests; a gateway's view).
// @unchecked: an immutable OpenSSL key, safe for concurrent use once built.
public final class ES256PublicKey: @unchecked Sendable {
    let handle: PKeyHandle

    public init(pem: String) throws(CryptoError) {
        guard let key = try withPEM(pem, { PEM_read_bio_PUBKEY($0, nil, nil, nil) }) else {
            throw CryptoError.fromOpenSSL("PEM_read_bio_PUBKEY")
        }
        let h = PKeyHandle(key)
        try ES256PrivateKey.checkCurve(h)
        handle = h
    }

    /// Whether `signature` (`r ‖ s`, 64 bytes) is a valid ES256 signature of `data`.
    public func verify(signature: [UInt8], data: [UInt8]) -> Bool {
        guard let der = ES256Signature.der(fromRaw: signature), let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestVerifyInit(md, nil, EVP_sha256(), nil, handle.pointer) == 1 else { ERR_clear_error(); return false }
        let ok = der.withUnsafeBufferPointer { s in data.withUnsafeBufferPointer { d in
            EVP_DigestVerify(md, s.baseAddress, s.count, d.baseAddress, d.count) } } == 1
        if !ok { ERR_clear_error() }
        return ok
    }
}

/// Conversions between the DER and the raw (`r ‖ s`) forms of a P-256 ECDSA signature.
enum ES256Signature {
    static let half = 32

    static func raw(fromDER der: [UInt8]) throws(CryptoError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buf in
            var p = buf.baseAddress
            return d2i_ECDSA_SIG(nil, &p, buf.count)
        }
        guard let sig = parsed else { throw CryptoError.fromOpenSSL("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(sig) }
        var r: OpaquePointer? = nil, s: OpaquePointer? = nil
        ECDSA_SIG_get0(sig, &r, &s)
        guard let r, let s else { throw CryptoError(operation: "ECDSA_SIG_get0", detail: "no r or s") }
        var out = [UInt8](repeating: 0, count: 2 * half)
        let ok = out.withUnsafeMutableBufferPointer { o -> Bool in
            guard let base = o.baseAddress else { return false }
            return BN_bn2binpad(r, base, Int32(half)) == Int32(half) && BN_bn2binpad(s, base + half, Int32(half)) == Int32(half)
        }
        guard ok else { throw CryptoError(operation: "BN_bn2binpad", detail: "r or s longer than 32 bytes") }
        return out
    }

    /// nil unless `raw` is 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 2 * half, let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress.map { $0 + half }, Int32(half), nil) }
        guard let r, let s else { BN_free(r); BN_free(s); return nil }
        guard ECDSA_SIG_set0(sig, r, s) == 1 else { BN_free(r); BN_free(s); return nil }
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buf -> Int32 in
            var p = buf.baseAddress
            return i2d_ECDSA_SIG(sig, &p)
        }
        return written == length ? out : nil
    }
}
