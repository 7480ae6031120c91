/// JWS compact serialisation (RFC 7515 §7.1) for RS256; the claims themselves are the caller's JSON.
public enum JWS {
    /// `base64url(header).base64url(payload).base64url(signature)`.
    public static func signRS256(header: [UInt8], payload: [UInt8], key: RSAPrivateKey) throws(CryptoError) -> String {
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let sig = try key.signRS256(Array(input.utf8))
        return input + "." + Base64URL.encode(sig)
    }

    /// The three decoded parts of a compact JWS; nil unless exactly three valid base64url segments.
    public struct Parts: Sendable {
        public let header: [UInt8]
        public let payload: [UInt8]
        public let signature: [UInt8]
        public let signingInput: [UInt8]
    }

    public static func parse(_ token: String, maxLength: Int = 16 * 1024) -> Parts? {
        guard token.utf8.count <= maxLength else { return nil }
        let segs = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segs.count == 3, !segs[0].isEmpty, !segs[1].isEmpty,
              let h = Base64URL.decode(segs[0]), let p = Base64URL.decode(segs[1]), let s = Base64URL.decode(segs[2]) else { return nil }
        return Parts(header: h, payload: p, signature: s, signingInput: Array((segs[0] + "." + segs[1]).utf8))
    }
}
