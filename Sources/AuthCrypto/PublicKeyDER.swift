/// Reads an RSA public key in the one shape Gatehouse stores (`PUBLIC KEY` PEM: an RSA
/// SubjectPublicKeyInfo, RFC 5280 §4.1.2.7, RFC 3279 §2.3.1, RFC 8017 A.1.1) without OpenSSL 3's
/// decoder framework, whose first use costs a CGI request several million instructions.
/// Strict: anything else (another label, PEM headers, other algorithms, non-minimal DER) gives
/// nil, and the caller hands the text to OpenSSL's general decoder instead.
enum PublicKeyDER {
    /// `(n, e)` as big-endian unsigned integers without leading zero bytes.
    static func rsaNumbers(pem: String) -> (n: [UInt8], e: [UInt8])? {
        guard let der = body(pem: Array(pem.utf8)) else { return nil }
        return rsaNumbers(spki: der)
    }

    /// The base64 body of a single `-----BEGIN PUBLIC KEY-----` block, decoded.
    static func body(pem: [UInt8]) -> [UInt8]? {
        let begin = Array("-----BEGIN PUBLIC KEY-----".utf8), end = Array("-----END PUBLIC KEY-----".utf8)
        var lo = 0, hi = pem.count
        while lo < hi, isSpace(pem[lo]) { lo += 1 }
        while hi > lo, isSpace(pem[hi - 1]) { hi -= 1 }
        guard hi - lo > begin.count + end.count, pem[lo..<(lo + begin.count)].elementsEqual(begin),
              pem[(hi - end.count)..<hi].elementsEqual(end) else { return nil }
        return Base64URL.decodeStandard(lines: pem[(lo + begin.count)..<(hi - end.count)])
    }

    /// `SEQUENCE { SEQUENCE { rsaEncryption, NULL }, BIT STRING { SEQUENCE { INTEGER n, INTEGER e } } }`.
    static func rsaNumbers(spki der: [UInt8]) -> (n: [UInt8], e: [UInt8])? {
        let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00]
        var r = Reader(bytes: der[...])
        guard var spki = r.element(tag: 0x30), r.atEnd,
              let algorithm = spki.element(tag: 0x30), algorithm.bytes.elementsEqual(rsaEncryption),
              var bits = spki.element(tag: 0x03), spki.atEnd,
              bits.bytes.first == 0 else { return nil }
        bits.bytes = bits.bytes.dropFirst()
        guard var key = bits.element(tag: 0x30), bits.atEnd,
              let n = key.unsignedInteger(), let e = key.unsignedInteger(), key.atEnd else { return nil }
        return (n, e)
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    /// A cursor over DER elements (definite, minimal lengths only).
    struct Reader {
        var bytes: ArraySlice<UInt8>
        var atEnd: Bool { bytes.isEmpty }

        /// The contents of the next element if it has this tag.
        mutating func element(tag: UInt8) -> Reader? {
            var b = bytes
            guard b.popFirst() == tag, let first = b.popFirst() else { return nil }
            var length = 0
            if first < 0x80 {
                length = Int(first)
            } else {
                let count = Int(first & 0x7F)
                guard count >= 1, count <= 3, b.count >= count, b.first != 0 else { return nil }
                for _ in 0..<count { length = length << 8 | Int(b.popFirst()!) }
                guard length >= 0x80 else { return nil }
            }
            guard b.count >= length else { return nil }
            let contents = b.prefix(length)
            bytes = b.dropFirst(length)
            return Reader(bytes: contents)
        }

        /// A positive INTEGER in minimal encoding, without its sign byte.
        mutating func unsignedInteger() -> [UInt8]? {
            guard var v = element(tag: 0x02)?.bytes, let first = v.first, first & 0x80 == 0 else { return nil }
            if first == 0 {
                guard v.count > 1, v[v.startIndex + 1] & 0x80 != 0 else { return nil }
                v = v.dropFirst()
            }
            return Array(v)
        }
    }
}
