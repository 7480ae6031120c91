import COpenSSL

/// SHA-256 (FIPS 180-4, OpenSSL's SHA-256 functions) and HMAC-SHA-256 (RFC 2104 / RFC 4231, over
/// the fetched EVP SHA-256 so its contexts can be prepared and copied, see `HMACKey`).
public enum Digest {
    public static func sha256(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { sha256(bytes: $0) }
    }

    public static func sha256(_ text: String) -> [UInt8] {
        text.utf8.withContiguousStorageIfAvailable { sha256(bytes: UnsafeRawBufferPointer($0)) } ?? sha256(Array(text.utf8))
    }

    /// SHA-256 of raw bytes (no provider is loaded for a hash).
    public static func sha256(bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            precondition(AuthCrypto.sha256(bytes, into: out.baseAddress!), "SHA-256 failed")
            count = 32
        }
    }

    /// HMAC-SHA-256 under a key used once (see `HMACKey` for a key used again and again).
    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { hmacSHA256(key: key, bytes: $0) }
    }

    /// HMAC-SHA-256 of raw bytes: RFC 2104 over the fetched SHA-256 (one digest context, no
    /// per-call algorithm look-up, which OpenSSL's one-shot `HMAC()` does on every call).
    public static func hmacSHA256(key: [UInt8], bytes: UnsafeRawBufferPointer) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(ctx) }
        var inner = [UInt8](repeating: 0, count: 32)
        var out = [UInt8](repeating: 0, count: 32)
        let ok = HMACKey.withPads(key) { ipad, opad in
            EVP_DigestInit_ex(ctx, fetchedSHA256, nil) == 1
                && EVP_DigestUpdate(ctx, ipad, 64) == 1
                && EVP_DigestUpdate(ctx, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), bytes.count) == 1
                && EVP_DigestFinal_ex(ctx, &inner, nil) == 1
                && EVP_DigestInit_ex(ctx, fetchedSHA256, nil) == 1
                && EVP_DigestUpdate(ctx, opad, 64) == 1
                && EVP_DigestUpdate(ctx, inner, 32) == 1
                && EVP_DigestFinal_ex(ctx, &out, nil) == 1
        }
        precondition(ok, "HMAC(SHA-256) failed")
        return out
    }

    public static func hmacSHA256(key: [UInt8], _ text: String) -> [UInt8] { hmacSHA256(key: key, data: Array(text.utf8)) }

    /// Constant-time equality (`CRYPTO_memcmp`); lengths are not secret.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 } }
    }

    /// The same over two strings' UTF-8 bytes, without copying them.
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in
                pa.count == pb.count && (pa.isEmpty || CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, pa.count) == 0)
            }
        }
    }
}

/// Lower-case hexadecimal.
public enum Hex {
    public static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let h = nibble(u[i]), let l = nibble(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}
