/// Decoding of `application/x-www-form-urlencoded` text and URL query strings (WHATWG rules:
/// `+` is a space, `%XX` is a byte, invalid escapes are kept literally).
public enum FormDecoding {
    public static func pairs(_ text: Substring) -> [(String, String)] {
        guard !text.isEmpty else { return [] }
        let u = text.utf8
        var out: [(String, String)] = []
        var i = u.startIndex
        while i < u.endIndex {
            var end = i
            while end < u.endIndex, u[end] != UInt8(ascii: "&") { u.formIndex(after: &end) }
            let part = u[i..<end]
            i = end < u.endIndex ? u.index(after: end) : end
            guard !part.isEmpty else { continue }
            if let eq = part.firstIndex(of: UInt8(ascii: "=")) {
                out.append((percentDecode(Substring(part[part.startIndex..<eq])), percentDecode(Substring(part[part.index(after: eq)...]))))
            } else {
                out.append((percentDecode(Substring(part)), ""))
            }
        }
        return out
    }

    public static func pairs(_ text: String) -> [(String, String)] { pairs(Substring(text)) }

    public static func percentDecode<S: StringProtocol>(_ s: S, plusAsSpace: Bool = true) -> String {
        // Nothing to decode (the usual case): the text as it is, without a copy through an array.
        if let plain = s.utf8.withContiguousStorageIfAvailable({ u in
            u.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusAsSpace) }) ? nil : String(decoding: u, as: UTF8.self)
        }), let plain { return plain }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        var it = Array(s.utf8)[...]
        while let c = it.popFirst() {
            if c == UInt8(ascii: "+"), plusAsSpace { out.append(0x20); continue }
            if c == UInt8(ascii: "%"), it.count >= 2,
               let h = hexValue(it[it.startIndex]), let l = hexValue(it[it.startIndex + 1]) {
                out.append(h << 4 | l)
                it = it.dropFirst(2)
                continue
            }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Characters left bare in a query component (RFC 3986 unreserved).
    static let unreserved: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))

    /// Percent-encodes everything but RFC 3986 unreserved characters (safe for any URL component).
    public static func percentEncode(_ s: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(s.utf8.count * 3)
        for b in s.utf8 {
            if unreserved.contains(b) {
                out.append(b)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes pairs as a query string / form body.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }
}
