import COpenSSL

/// The roots an operator trusts for passkey attestation (docs/passkeys.md "Attestation"): a PEM
/// bundle of CA certificates. A packed attestation's certificate chain (leaf first, then the
/// intermediates the authenticator sent) is verified against them by OpenSSL, at the current time.
// @unchecked: an OpenSSL certificate store, only read (verification) once built.
public final class AttestationRoots: @unchecked Sendable, Equatable {
    let store: OpaquePointer
    public let count: Int

    /// Every certificate of `pem`; throws when it holds none or one does not read.
    public init(pem: String) throws(CryptoError) {
        guard let store = X509_STORE_new() else { throw CryptoError.fromOpenSSL("X509_STORE_new") }
        self.store = store
        var read = 0
        let bytes = Array(pem.utf8)
        guard let bio = bytes.withUnsafeBufferPointer({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw CryptoError.fromOpenSSL("BIO_new_mem_buf")
        }
        defer { BIO_free(bio) }
        while let cert = PEM_read_bio_X509(bio, nil, nil, nil) {
            defer { X509_free(cert) }
            guard X509_STORE_add_cert(store, cert) == 1 else { throw CryptoError.fromOpenSSL("X509_STORE_add_cert") }
            read += 1
        }
        ERR_clear_error()  // the end of the bundle reads as an error
        guard read > 0 else { throw CryptoError(operation: "attestation roots", detail: "no certificate in the bundle") }
        count = read
    }

    deinit { X509_STORE_free(store) }

    public static func == (a: AttestationRoots, b: AttestationRoots) -> Bool { a === b }

    /// What a relying party reads from a verified attestation certificate.
    public struct Leaf: Sendable {
        public let key: SignatureKey
        /// The subject's organizational unit (`Authenticator Attestation` for packed, §8.2.1).
        public let organizationalUnit: String?
        public let isCA: Bool
        /// The AAGUID extension's (1.3.6.1.4.1.45724.1.1.4) 16 bytes, when the certificate has one.
        public let aaguid: [UInt8]?
    }

    /// The leaf of `chain` (DER certificates, leaf first) when the chain ends in one of these roots,
    /// its key taken for `algorithm`; nil otherwise (unreadable, untrusted, expired, wrong key).
    public func verifiedLeaf(_ chain: [[UInt8]], algorithm: SignatureKey.Algorithm) -> Leaf? {
        guard !chain.isEmpty, chain.count <= 8, chain.allSatisfy({ !$0.isEmpty && $0.count <= 8192 }) else { return nil }
        var certs: [OpaquePointer] = []
        defer { certs.forEach { X509_free($0) } }
        for der in chain {
            let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buf in
                var p = buf.baseAddress
                return d2i_X509(nil, &p, buf.count)
            }
            guard let parsed else { ERR_clear_error(); return nil }
            certs.append(parsed)
        }
        var intermediates: [OpaquePointer?] = Array(certs.dropFirst())
        let trusted = intermediates.withUnsafeMutableBufferPointer {
            gh_x509_verify_chain(store, certs[0], $0.baseAddress, Int32($0.count))
        } == 1
        guard trusted, let pkey = X509_get_pubkey(certs[0]) else { ERR_clear_error(); return nil }
        let key = SignatureKey(handle: PKeyHandle(pkey), algorithm: algorithm)
        var ou = [CChar](repeating: 0, count: 256)
        let ouLength = gh_x509_subject_ou(certs[0], &ou, Int32(ou.count))
        // An Int32 widens to Int; OpenSSL truncates to the buffer, and prefix stops at its end.
        let unit = ouLength > 0 ? String(decoding: ou.prefix(Int(ouLength)).map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        var ext = [UInt8](repeating: 0, count: 64)
        let extLength = gh_x509_extension(certs[0], "1.3.6.1.4.1.45724.1.1.4", &ext, Int32(ext.count))
        // The extension's value is a DER OCTET STRING of 16 bytes.
        var aaguid: [UInt8]? = nil
        if extLength == 18, ext[0] == 0x04, ext[1] == 16 { aaguid = Array(ext[2..<18]) }
        ERR_clear_error()
        return Leaf(key: key, organizationalUnit: unit, isCA: X509_check_ca(certs[0]) != 0,
                    aaguid: extLength == 0 ? nil : (aaguid ?? []))
    }
}
