import COpenSSL
#if canImport(Glibc)
import Glibc
#endif
import Locking

/// Owns one OpenSSL `EVP_PKEY`; frees it in `deinit`. Safe to share across threads once built.
// @unchecked: an OpenSSL key, immutable once built.
final class PKeyHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ p: OpaquePointer) { pointer = p }
    deinit { EVP_PKEY_free(pointer) }

    /// The private key as PKCS#8 PEM (RSA and EC alike).
    func privatePEM() throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.fromOpenSSL("BIO_new") }
        guard PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else {
            BIO_free(bio)
            throw CryptoError.fromOpenSSL("PEM_write_bio_PrivateKey")
        }
        return drain(bio)
    }

    /// The public half as a SubjectPublicKeyInfo PEM.
    func publicPEM() throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.fromOpenSSL("BIO_new") }
        guard PEM_write_bio_PUBKEY(bio, pointer) == 1 else { BIO_free(bio); throw CryptoError.fromOpenSSL("PEM_write_bio_PUBKEY") }
        return drain(bio)
    }
}

/// Reads a memory BIO's contents as a string and frees the BIO.
func drain(_ bio: OpaquePointer) -> String {
    var ptr: UnsafeMutablePointer<CChar>?
    let len = gh_BIO_get_mem_data(bio, &ptr)
    defer { BIO_free(bio) }
    guard let ptr, len > 0 else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: ptr, count: Int(len)), as: UTF8.self)
}

func bigNumParam(_ key: OpaquePointer, _ name: String) throws(CryptoError) -> [UInt8] {
    var bn: OpaquePointer? = nil
    try check(EVP_PKEY_get_bn_param(key, name, &bn), "EVP_PKEY_get_bn_param(\(name))")
    guard let bn else { throw CryptoError(operation: "EVP_PKEY_get_bn_param", detail: "no \(name)") }
    defer { BN_free(bn) }
    var out = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
    _ = BN_bn2bin(bn, &out)
    return out
}

/// An RSA private key used for RS256 (RFC 7518 §3.3: RSASSA-PKCS1-v1_5 with SHA-256).
// @unchecked: an OpenSSL key and its context pool, immutable or locked.
public final class RSAPrivateKey: @unchecked Sendable {
    let handle: PKeyHandle
    /// Ready signing contexts for this key (see `PKeyContextPool`).
    private let signers: PKeyContextPool

    init(handle: PKeyHandle) {
        self.handle = handle
        signers = PKeyContextPool(key: handle)
    }

    /// Generates a fresh key (default 2048 bits) from OpenSSL's CSPRNG.
    public static func generate(bits: Int = 2048) throws(CryptoError) -> RSAPrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw CryptoError.fromOpenSSL("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_keygen_init(ctx), "EVP_PKEY_keygen_init")
        guard gh_EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) > 0 else { throw CryptoError.fromOpenSSL("set_rsa_keygen_bits") }
        var key: OpaquePointer? = nil
        try check(EVP_PKEY_generate(ctx, &key), "EVP_PKEY_generate")
        guard let key else { throw CryptoError.fromOpenSSL("EVP_PKEY_generate") }
        return RSAPrivateKey(handle: PKeyHandle(key))
    }

    /// Loads a PKCS#8 or PKCS#1 PEM private key.
    public init(pem: String) throws(CryptoError) {
        guard let key = try withPEM(pem, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            throw CryptoError.fromOpenSSL("PEM_read_bio_PrivateKey")
        }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            EVP_PKEY_free(key)
            throw CryptoError(operation: "PEM_read_bio_PrivateKey", detail: "not an RSA key")
        }
        handle = PKeyHandle(key)
        signers = PKeyContextPool(key: handle)
    }

    /// Builds a key from its JWK components (RFC 7518 §6.3), big-endian unsigned integers.
    public init(n: [UInt8], e: [UInt8], d: [UInt8], p: [UInt8], q: [UInt8], dp: [UInt8], dq: [UInt8], qi: [UInt8]) throws(CryptoError) {
        handle = try fromData(selection: GH_EVP_PKEY_KEYPAIR, [
            ("n", n), ("e", e), ("d", d), ("rsa-factor1", p), ("rsa-factor2", q),
            ("rsa-exponent1", dp), ("rsa-exponent2", dq), ("rsa-coefficient1", qi),
        ])
        signers = PKeyContextPool(key: handle)
    }

    /// PKCS#8 PEM. Secret: store it, never log it.
    public func pem() throws(CryptoError) -> String { try handle.privatePEM() }

    public var publicKey: RSAPublicKey { RSAPublicKey(handle: handle) }

    /// RS256 signature over `data` (RSASSA-PKCS1-v1_5 over its SHA-256 digest; deterministic).
    public func signRS256(_ data: [UInt8]) throws(CryptoError) -> [UInt8] {
        let result: Result<[UInt8], CryptoError> = data.withUnsafeBytes { d in
            do throws(CryptoError) { return .success(try signRS256(bytes: d)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// RS256 signature over the bytes of `data`.
    public func signRS256(bytes data: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let hashed = withUnsafeMutableBytes(of: &digest) { sha256(data, into: $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        guard hashed else { throw CryptoError.fromOpenSSL("SHA256") }
        let pool = signers
        var sig = [UInt8](repeating: 0, count: Int(EVP_PKEY_get_size(handle.pointer)))
        let len = withUnsafeBytes(of: &digest) { d in
            pool.withContext { ctx -> Int in
                var len = sig.count
                let rc = sig.withUnsafeMutableBufferPointer {
                    EVP_PKEY_sign(ctx, $0.baseAddress, &len, d.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
                }
                return rc == 1 ? len : -1
            }
        }
        guard let len, len > 0 else { throw CryptoError.fromOpenSSL("EVP_PKEY_sign") }
        if len < sig.count { sig.removeLast(sig.count - len) }
        return sig
    }

    /// A self-signed X.509 certificate for this key (the shape Google's x509 key endpoint serves).
    public func selfSignedCertificatePEM(commonName: String, notBefore: Int64, validSeconds: Int64, serial: Int) throws(CryptoError) -> String {
        guard let cert = X509_new() else { throw CryptoError.fromOpenSSL("X509_new") }
        defer { X509_free(cert) }
        try check(X509_set_version(cert, 2), "X509_set_version")
        try check(ASN1_INTEGER_set(X509_get_serialNumber(cert), serial), "ASN1_INTEGER_set")
        guard ASN1_TIME_set(X509_getm_notBefore(cert), time_t(notBefore)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(cert), time_t(notBefore + validSeconds)) != nil else {
            throw CryptoError.fromOpenSSL("ASN1_TIME_set")
        }
        try check(X509_set_pubkey(cert, handle.pointer), "X509_set_pubkey")
        guard let name = X509_get_subject_name(cert) else { throw CryptoError.fromOpenSSL("X509_get_subject_name") }
        let cn = Array(commonName.utf8)
        try check(X509_NAME_add_entry_by_txt(name, "CN", 0x1001 /* MBSTRING_ASC */, cn, Int32(cn.count), -1, 0), "X509_NAME_add_entry_by_txt")
        try check(X509_set_issuer_name(cert, name), "X509_set_issuer_name")
        guard X509_sign(cert, handle.pointer, EVP_sha256()) > 0 else { throw CryptoError.fromOpenSSL("X509_sign") }
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.fromOpenSSL("BIO_new") }
        guard PEM_write_bio_X509(bio, cert) == 1 else { BIO_free(bio); throw CryptoError.fromOpenSSL("PEM_write_bio_X509") }
        return drain(bio)
    }
}

/// An RSA public key for RS256 verification; exposes the JWK `n`/`e` (RFC 7517).
///
/// Holds `n` and `e` (read from the stored PEM without OpenSSL's decoder framework, see
/// `PublicKeyDER`); OpenSSL objects are made on first use: an `RSA` for verifying (OpenSSL's
/// PKCS#1 v1.5 check, the same the EVP interface ends in, without loading a provider) and an
/// `EVP_PKEY` only to write the PEM. Publishing the numbers (JWKS) builds neither.
// @unchecked: OpenSSL objects made once, under `lock`.
public final class RSAPublicKey: @unchecked Sendable {
    private let n: [UInt8], e: [UInt8]
    private let lock = Lock()
    private var rsa: OpaquePointer?
    private var pkey: PKeyHandle?

    private init(n: [UInt8], e: [UInt8], pkey: PKeyHandle?) {
        self.n = Array(n.drop(while: { $0 == 0 }))
        self.e = Array(e.drop(while: { $0 == 0 }))
        self.pkey = pkey
    }

    deinit {
        if let rsa { gh_rsa_free(rsa) }
    }

    /// The public half of an OpenSSL key (a private key's).
    convenience init(handle: PKeyHandle) {
        self.init(n: (try? bigNumParam(handle.pointer, "n")) ?? [], e: (try? bigNumParam(handle.pointer, "e")) ?? [], pkey: handle)
    }

    public convenience init(n: [UInt8], e: [UInt8]) throws(CryptoError) {
        guard n.contains(where: { $0 != 0 }), e.contains(where: { $0 != 0 }) else {
            throw CryptoError(operation: "RSAPublicKey", detail: "empty modulus or exponent")
        }
        self.init(n: n, e: e, pkey: nil)
    }

    /// SubjectPublicKeyInfo PEM: read directly when it is the plain RSA form Gatehouse writes,
    /// else by OpenSSL's decoder (any other encoding of an RSA key it accepts).
    public convenience init(pem: String) throws(CryptoError) {
        if let (n, e) = PublicKeyDER.rsaNumbers(pem: pem), !n.isEmpty, !e.isEmpty {
            self.init(n: n, e: e, pkey: nil)
            return
        }
        guard let key = try withPEM(pem, { PEM_read_bio_PUBKEY($0, nil, nil, nil) }) else {
            throw CryptoError.fromOpenSSL("PEM_read_bio_PUBKEY")
        }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            EVP_PKEY_free(key)
            throw CryptoError(operation: "PEM_read_bio_PUBKEY", detail: "not an RSA key")
        }
        self.init(handle: PKeyHandle(key))
    }

    /// The RSA key of an X.509 certificate PEM (as Google publishes service accounts' keys).
    public convenience init(certificatePEM pem: String) throws(CryptoError) {
        guard let cert = try withPEM(pem, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            throw CryptoError.fromOpenSSL("PEM_read_bio_X509")
        }
        defer { X509_free(cert) }
        guard let key = X509_get_pubkey(cert) else { throw CryptoError.fromOpenSSL("X509_get_pubkey") }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            EVP_PKEY_free(key)
            throw CryptoError(operation: "X509_get_pubkey", detail: "not an RSA key")
        }
        self.init(handle: PKeyHandle(key))
    }

    public func pem() throws(CryptoError) -> String { try evpKey().publicPEM() }

    public func modulus() throws(CryptoError) -> [UInt8] { n }
    public func exponent() throws(CryptoError) -> [UInt8] { e }

    public var bits: Int { n.isEmpty ? 0 : (n.count - 1) * 8 + (8 - n[0].leadingZeroBitCount) }

    /// The `EVP_PKEY`, made from `n` and `e` on first use.
    private func evpKey() throws(CryptoError) -> PKeyHandle {
        lock.lock()
        defer { lock.unlock() }
        if let pkey { return pkey }
        let made = try fromData(selection: GH_EVP_PKEY_PUBLIC_KEY, [("n", n), ("e", e)])
        pkey = made
        return made
    }

    /// The `RSA` used to verify, made on first use; nil if OpenSSL cannot (out of memory).
    private func verifier() -> OpaquePointer? {
        lock.lock()
        defer { lock.unlock() }
        if rsa == nil, !n.isEmpty, !e.isEmpty {
            rsa = n.withUnsafeBufferPointer { nb in
                e.withUnsafeBufferPointer { eb in gh_rsa_public_new(nb.baseAddress, Int32(nb.count), eb.baseAddress, Int32(eb.count)) }
            }
            if rsa == nil { ERR_clear_error() }
        }
        return rsa
    }

    /// Checks an RS256 signature; false for any mismatch or malformed signature.
    public func verifyRS256(signature: [UInt8], data: [UInt8]) -> Bool {
        signature.withUnsafeBytes { s in data.withUnsafeBytes { d in verifyRS256(signature: s, data: d) } }
    }

    /// Checks an RS256 signature over the bytes of `data` (no copies: a JWS signing input can
    /// be checked in place). OpenSSL's `RSA_verify` compares the whole PKCS#1 v1.5 encoding of
    /// the SHA-256 DigestInfo; an `RSA` may verify on several threads at once.
    public func verifyRS256(signature: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer) -> Bool {
        guard !signature.isEmpty, signature.count <= 2048, let rsa = verifier() else { return false }
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &digest) { d in
            let out = d.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard sha256(data, into: out) else { return false }
            let ok = gh_rsa_verify_sha256(rsa, out, signature.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(signature.count)) == 1
            if !ok { ERR_clear_error() }
            return ok
        }
    }
}

/// Runs `read` over a read-only memory BIO holding `pem`. The BIO borrows the bytes without
/// copying them, so it is created, read and freed inside the one closure that keeps them alive.
func withPEM(_ pem: String, _ read: (OpaquePointer) -> OpaquePointer?) throws(CryptoError) -> OpaquePointer? {
    let bytes = Array(pem.utf8)
    var bioFailed = false
    let key = bytes.withUnsafeBufferPointer { buf -> OpaquePointer? in
        guard let bio = BIO_new_mem_buf(buf.baseAddress, Int32(buf.count)) else { bioFailed = true; return nil }
        defer { BIO_free(bio) }
        return read(bio)
    }
    if bioFailed { throw CryptoError.fromOpenSSL("BIO_new_mem_buf") }
    return key
}

/// Builds an EVP_PKEY from named big-number parameters (OpenSSL 3 `EVP_PKEY_fromdata`).
private func fromData(selection: Int32, _ params: [(String, [UInt8])]) throws(CryptoError) -> PKeyHandle {
    guard let bld = OSSL_PARAM_BLD_new() else { throw CryptoError.fromOpenSSL("OSSL_PARAM_BLD_new") }
    defer { OSSL_PARAM_BLD_free(bld) }
    var bns: [OpaquePointer] = []
    defer { bns.forEach { BN_free($0) } }
    // The builder keeps the key-name pointers until OSSL_PARAM_BLD_to_param: they must outlive it.
    let names = params.map { strdup($0.0)! }
    defer { names.forEach { free($0) } }
    for (i, (_, bytes)) in params.enumerated() {
        let name = names[i]
        guard let bn = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            throw CryptoError.fromOpenSSL("BN_bin2bn")
        }
        bns.append(bn)
        try check(OSSL_PARAM_BLD_push_BN(bld, name, bn), "OSSL_PARAM_BLD_push_BN(\(params[i].0))")
    }
    guard let osslParams = OSSL_PARAM_BLD_to_param(bld) else { throw CryptoError.fromOpenSSL("OSSL_PARAM_BLD_to_param") }
    defer { OSSL_PARAM_free(osslParams) }
    guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw CryptoError.fromOpenSSL("EVP_PKEY_CTX_new_from_name") }
    defer { EVP_PKEY_CTX_free(ctx) }
    try check(EVP_PKEY_fromdata_init(ctx), "EVP_PKEY_fromdata_init")
    var key: OpaquePointer? = nil
    try check(EVP_PKEY_fromdata(ctx, &key, selection, osslParams), "EVP_PKEY_fromdata")
    guard let key else { throw CryptoError.fromOpenSSL("EVP_PKEY_fromdata") }
    return PKeyHandle(key)
}
