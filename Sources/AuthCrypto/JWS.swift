#if canImport(Glibc)
import Glibc
#endif

/// JWS compact serialisation (RFC 7515 §7.1) for RS256 (and ES256 signing); the claims themselves are the caller's JSON.
public enum JWS {
    /// `base64url(header).base64url(payload).base64url(signature)`.
    public static func signRS256(header: [UInt8], payload: [UInt8], key: RSAPrivateKey) throws(CryptoError) -> String {
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let sig = try key.signRS256(Array(input.utf8))
        return input + "." + Base64URL.encode(sig)
    }

    /// The same for ES256 (APNs provider tokens): the signature is `r ‖ s` (RFC 7518 §3.4).
    public static func signES256(header: [UInt8], payload: [UInt8], key: ES256PrivateKey) throws(CryptoError) -> String {
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
    }

    /// The three decoded parts of a compact JWS; nil unless exactly three valid base64url segments.
    public struct Parts: Sendable {
        public let header: [UInt8]
        public let payload: [UInt8]
        public let signature: [UInt8]
        public let signingInput: [UInt8]
    }

    /// Splits on the byte `.` (compact JWS is ASCII, RFC 7515 §7.1) over the token's UTF-8 bytes.
    public static func parse(_ token: String, maxLength: Int = 16 * 1024) -> Parts? {
        guard token.utf8.count <= maxLength else { return nil }
        var token = token
        return token.withUTF8 { u -> Parts? in
            let dot = UInt8(ascii: ".")
            guard let d1 = u.firstIndex(of: dot), let d2 = u[(d1 + 1)...].firstIndex(of: dot) else { return nil }
            let h64 = u[..<d1], p64 = u[(d1 + 1)..<d2], s64 = u[(d2 + 1)...]
            guard !h64.isEmpty, !p64.isEmpty, !s64.contains(dot),
                  let h = Base64URL.decode(bytes: h64), let p = Base64URL.decode(bytes: p64), let s = Base64URL.decode(bytes: s64) else { return nil }
            return Parts(header: h, payload: p, signature: s, signingInput: Array(u[..<d2]))
        }
    }

    /// Decodes a compact JWS and checks its RS256 signature in place (the signing input is not
    /// copied). `key` gets the decoded header and names the key to check with (nil: refuse).
    /// Returns the decoded header and payload when the signature is valid; nil for any malformed
    /// token or bad signature. Errors thrown by `key` pass through.
    public static func verifiedRS256(_ token: String, maxLength: Int = 16 * 1024,
                                     key: ([UInt8]) throws -> RSAPublicKey?) rethrows -> (header: [UInt8], payload: [UInt8])? {
        guard token.utf8.count <= maxLength else { return nil }
        if let result = try token.utf8.withContiguousStorageIfAvailable({ try verifiedRS256(bytes: $0, key: key) }) { return result }
        return try Array(token.utf8).withUnsafeBufferPointer { try verifiedRS256(bytes: $0, key: key) }
    }

    static func verifiedRS256(bytes u: UnsafeBufferPointer<UInt8>,
                              key: ([UInt8]) throws -> RSAPublicKey?) rethrows -> (header: [UInt8], payload: [UInt8])? {
        guard let d1 = index(of: UInt8(ascii: "."), in: u, from: 0), let d2 = index(of: UInt8(ascii: "."), in: u, from: d1 + 1) else { return nil }
        let h64 = u[..<d1], p64 = u[(d1 + 1)..<d2], s64 = u[(d2 + 1)...]
        guard !h64.isEmpty, !p64.isEmpty, index(of: UInt8(ascii: "."), in: u, from: d2 + 1) == nil, let header = Base64URL.decode(contiguous: UnsafeBufferPointer(rebasing: h64)),
              let signature = Base64URL.decode(contiguous: UnsafeBufferPointer(rebasing: s64)) else { return nil }
        guard let publicKey = try key(header) else { return nil }
        let input = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: u[..<d2]))
        let valid = signature.withUnsafeBytes { publicKey.verifyRS256(signature: $0, data: input) }
        guard valid, let payload = Base64URL.decode(contiguous: UnsafeBufferPointer(rebasing: p64)) else { return nil }
        return (header, payload)
    }

    /// The first position of `byte` in `u` at or after `from` (memchr).
    static func index(of byte: UInt8, in u: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard from < u.count, let base = u.baseAddress, let hit = memchr(base + from, Int32(byte), u.count - from) else { return nil }
        return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }
}
