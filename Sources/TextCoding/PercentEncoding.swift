/// Percent-encoding of URL text (RFC 3986 §2.1) and its decoding as forms and queries carry it
/// (WHATWG `application/x-www-form-urlencoded`: `+` is a space, an invalid escape stays as it is).
/// Every component Gatehouse writes into a URL, a form body or a query goes through `encode`.
public enum PercentEncoding {
    /// RFC 3986 unreserved characters: ALPHA, DIGIT, `-`, `.`, `_`, `~`.
    @inline(__always)
    public static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    static let upperHex: StaticString = "0123456789ABCDEF"

    /// Every byte but the unreserved ones as `%XX` (upper-case hex): safe in any URL component,
    /// a form body, a fragment or a custom scheme's query.
    public static func encode(_ s: String) -> String {
        let u = s.utf8
        var escaped = 0
        for b in u where !isUnreserved(b) { escaped += 1 }
        if escaped == 0 { return s }
        let length = u.count + 2 * escaped
        return String(unsafeUninitializedCapacity: length) { dst in
            upperHex.withUTF8Buffer { hex in
                var o = 0
                for b in u {
                    if isUnreserved(b) {
                        dst[o] = b
                        o += 1
                    } else {
                        dst[o] = UInt8(ascii: "%")
                        dst[o + 1] = hex[Int(b >> 4)]
                        dst[o + 2] = hex[Int(b & 0xF)]
                        o += 3
                    }
                }
                return o
            }
        }
    }

    /// `name=value&…`, both sides encoded: a query string or a form body.
    public static func query(_ pairs: [(String, String)]) -> String {
        pairs.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }

    /// `%XX` as the byte it names (either case of hex), `+` as a space when `plusAsSpace`; an
    /// invalid or cut escape is kept as written. Invalid UTF-8 that results is repaired (U+FFFD).
    public static func decode<S: StringProtocol>(_ s: S, plusAsSpace: Bool = true) -> String {
        // Nothing to decode (the usual case): the text as it is, without a copy through an array.
        if let plain = s.utf8.withContiguousStorageIfAvailable({ u in
            u.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusAsSpace) }) ? nil : String(decoding: u, as: UTF8.self)
        }), let plain { return plain }
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "+"), plusAsSpace {
                out.append(0x20)
                i += 1
            } else if c == UInt8(ascii: "%"), i + 2 < bytes.count, let h = hexValue(bytes[i + 1]), let l = hexValue(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(c)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hexadecimal digit, either case.
    public static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
