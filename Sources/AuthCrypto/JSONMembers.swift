#if canImport(Glibc)
import Glibc
#endif

/// A validating scan of one JSON object (RFC 8259) that reports each top-level member's name and
/// raw value as byte ranges, without building values: what verifying a token needs from its JWS
/// header and claims. It accepts a subset of what `JSONParser` accepts and answers nil for the
/// rest (malformed text, nesting deeper than `maxDepth`, a member name with an escape, a `\u`
/// escape of a surrogate, a number beyond Double's range, invalid UTF-8), so a caller can leave those to the full parser.
public enum JSONMembers {
    /// Calls `member(name, value)` for every top-level member in order; nil (see above) or true.
    public static func scan(_ b: UnsafeBufferPointer<UInt8>, maxBytes: Int, maxDepth: Int,
                            _ member: (_ name: Range<Int>, _ value: Range<Int>) -> Void) -> Bool? {
        guard b.count <= maxBytes else { return nil }
        var s = JSONScanner(b: b, maxDepth: maxDepth)
        s.space()
        guard s.byte == UInt8(ascii: "{") else { return nil }
        s.pos += 1
        s.space()
        if s.byte == UInt8(ascii: "}") {
            s.pos += 1
        } else {
            while true {
                guard s.byte == UInt8(ascii: "\""), let name = s.string(allowEscapes: false) else { return nil }
                s.space()
                guard s.byte == UInt8(ascii: ":") else { return nil }
                s.pos += 1
                s.space()
                let start = s.pos
                guard s.value(depth: 2) else { return nil }
                member(name.lowerBound + 1..<name.upperBound - 1, start..<s.pos)
                s.space()
                if s.byte == UInt8(ascii: ",") { s.pos += 1; s.space(); continue }
                guard s.byte == UInt8(ascii: "}") else { return nil }
                s.pos += 1
                break
            }
        }
        s.space()
        guard s.pos == b.count else { return nil }
        if s.sawNonASCII, String(validating: b, as: UTF8.self) == nil { return nil }
        return true
    }

    /// The bytes of `range` equal `name` (a member name as `scan` reports it).
    public static func equals(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let n = name.utf8Start
        for i in 0..<range.count where b[range.lowerBound + i] != n[i] { return false }
        return true
    }

    /// The value at `range` as a string when it is one without escapes; nil otherwise.
    public static func plainString(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        guard range.count >= 2, b[range.lowerBound] == UInt8(ascii: "\""), b[range.upperBound - 1] == UInt8(ascii: "\"") else { return nil }
        let inner = UnsafeBufferPointer(rebasing: b[range.lowerBound + 1..<range.upperBound - 1])
        guard !inner.contains(UInt8(ascii: "\\")) else { return nil }
        return String(decoding: inner, as: UTF8.self)
    }

    /// Whether the string at `range` is `prefix + rest`, compared as bytes; nil when it has escapes
    /// or non-ASCII bytes (String equality is canonical equivalence, not byte equality), or is not
    /// a string.
    public static func plainStringEquals(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ prefix: String, _ rest: String) -> Bool? {
        guard range.count >= 2, b[range.lowerBound] == UInt8(ascii: "\""), b[range.upperBound - 1] == UInt8(ascii: "\"") else { return nil }
        let inner = UnsafeBufferPointer(rebasing: b[range.lowerBound + 1..<range.upperBound - 1])
        guard !inner.contains(where: { $0 == UInt8(ascii: "\\") || $0 >= 0x80 }) else { return nil }
        var prefix = prefix, rest = rest
        return prefix.withUTF8 { p in
            rest.withUTF8 { r -> Bool? in
                guard !r.contains(where: { $0 >= 0x80 }) else { return nil }
                guard inner.count == p.count + r.count else { return false }
                return (p.isEmpty || memcmp(inner.baseAddress!, p.baseAddress!, p.count) == 0)
                    && (r.isEmpty || memcmp(inner.baseAddress! + p.count, r.baseAddress!, r.count) == 0)
            }
        }
    }

    /// Whether the value at `range` is a string (escaped or not).
    public static func isString(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        !range.isEmpty && b[range.lowerBound] == UInt8(ascii: "\"")
    }

    /// The value at `range` as an integer when it is written as one (`-?digits`, at most 15
    /// digits, so exact as a Double too); nil otherwise.
    public static func plainInteger(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64? {
        var i = range.lowerBound
        let negative = i < range.upperBound && b[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < range.upperBound, range.upperBound - i <= 15 else { return nil }
        var n: Int64 = 0
        while i < range.upperBound {
            let d = b[i] &- UInt8(ascii: "0")
            guard d <= 9 else { return nil }
            n = n * 10 + Int64(d)
            i += 1
        }
        return negative ? -n : n
    }
}
