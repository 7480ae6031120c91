import COpenSSL

/// An HMAC-SHA-256 key (RFC 2104) prepared once for many messages: SHA-256 contexts that have
/// already absorbed the key's inner and outer pad blocks. A MAC copies them (no key schedule,
/// no algorithm look-up), so it costs the hash of the message and of the inner digest.
///
/// The prepared contexts are never written after `init`, so any number of threads may use one
/// `HMACKey` at once; each call works on its own copy. The key itself is not kept. Whoever holds
/// the key holds its `HMACKey` (there is no cache keyed by key bytes).
public final class HMACKey: @unchecked Sendable {
    /// After the inner pad block (key ⊕ 0x36) and after the outer one (key ⊕ 0x5c).
    private let inner: OpaquePointer
    private let outer: OpaquePointer

    public init(_ key: [UInt8]) {
        guard let i = EVP_MD_CTX_new(), let o = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed") }
        let ok = HMACKey.withPads(key) { ipad, opad in
            EVP_DigestInit_ex(i, fetchedSHA256, nil) == 1 && EVP_DigestUpdate(i, ipad, 64) == 1
                && EVP_DigestInit_ex(o, fetchedSHA256, nil) == 1 && EVP_DigestUpdate(o, opad, 64) == 1
        }
        precondition(ok, "HMAC(SHA-256) key set-up failed")
        inner = i
        outer = o
    }

    deinit {
        EVP_MD_CTX_free(inner)
        EVP_MD_CTX_free(outer)
    }

    /// HMAC-SHA-256 of `bytes` under this key (32 bytes).
    public func mac(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(ctx) }
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = EVP_MD_CTX_copy_ex(ctx, inner) == 1
            && EVP_DigestUpdate(ctx, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), bytes.count) == 1
            && EVP_DigestFinal_ex(ctx, &digest, nil) == 1
            && EVP_MD_CTX_copy_ex(ctx, outer) == 1
            && EVP_DigestUpdate(ctx, digest, 32) == 1
            && EVP_DigestFinal_ex(ctx, &digest, nil) == 1
        precondition(ok, "HMAC(SHA-256) failed")
        return digest
    }

    public func mac(_ data: [UInt8]) -> [UInt8] { data.withUnsafeBytes { mac($0) } }

    public func mac(_ text: String) -> [UInt8] {
        text.utf8.withContiguousStorageIfAvailable { mac(UnsafeRawBufferPointer($0)) } ?? mac(Array(text.utf8))
    }

    /// The 64-byte inner and outer pads of `key` (a key longer than a block is hashed first),
    /// wiped after `body`.
    static func withPads<R>(_ key: [UInt8], _ body: (UnsafePointer<UInt8>, UnsafePointer<UInt8>) -> R) -> R {
        let k = key.count > 64 ? Digest.sha256(key) : key
        var pads = [UInt8](repeating: 0, count: 128)
        for i in 0..<64 {
            let b = i < k.count ? k[i] : 0
            pads[i] = b ^ 0x36
            pads[64 + i] = b ^ 0x5c
        }
        defer { OPENSSL_cleanse(&pads, 128) }
        return pads.withUnsafeBufferPointer { body($0.baseAddress!, $0.baseAddress! + 64) }
    }
}
