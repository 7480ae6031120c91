import COpenSSL

/// An HMAC-SHA-256 key (RFC 2104) prepared once for many messages: SHA-256 states that have
/// already absorbed the key's inner and outer pad blocks. A MAC copies them (no key schedule,
/// no algorithm look-up), so it costs the hash of the message and of the inner digest. The
/// states are OpenSSL's SHA-256 block functions' (`gh_hmac_sha256*`), not EVP's: EVP would fetch
/// SHA-256 from the default provider first, which in a process that computes one MAC (a CGI
/// page's CSRF token) costs more than everything else the page does.
///
/// The prepared states are never written after `init`, so any number of threads may use one
/// `HMACKey` at once; each call works on its own copy. The key itself is not kept. Whoever holds
/// the key holds its `HMACKey` (there is no cache keyed by key bytes).
// @unchecked: two OpenSSL digest contexts never written after set-up; each MAC copies them.
public final class HMACKey: @unchecked Sendable {
    private let key: UnsafeMutablePointer<gh_hmac_sha256_key>

    public init(_ bytes: [UInt8]) {
        key = .allocate(capacity: 1)
        let ok = HMACKey.withPads(bytes) { ipad, opad in gh_hmac_sha256_prepare(key, ipad, opad) == 1 }
        precondition(ok, "HMAC(SHA-256) key set-up failed")
    }

    deinit {
        OPENSSL_cleanse(key, MemoryLayout<gh_hmac_sha256_key>.size)
        key.deallocate()
    }

    /// HMAC-SHA-256 of `bytes` under this key (32 bytes).
    public func mac(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = gh_hmac_sha256(key, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), bytes.count, &digest)
        precondition(ok == 1, "HMAC(SHA-256) failed")
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
