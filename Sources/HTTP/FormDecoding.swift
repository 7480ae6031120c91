import TextCoding

/// Decoding of `application/x-www-form-urlencoded` text and URL query strings into name-value pairs
/// (WHATWG rules, `PercentEncoding.decode`).
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

    static func percentDecode(_ s: Substring) -> String { PercentEncoding.decode(s) }
}
