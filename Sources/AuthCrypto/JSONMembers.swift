#if canImport(Glibc)
import Glibc
#endif

/// A validating scan of one JSON object (RFC 8259) that reports each top-level member's name and
/// raw value as byte ranges, without building values: what verifying a token needs from its JWS
/// header and claims. It accepts a subset of what `JSONParser` accepts and answers nil for the
/// rest (malformed text, nesting deeper than `maxDepth`, a member name with an escape, a `\u`
/// escape of a surrogate, invalid UTF-8), so a caller can leave those to the full parser.
public enum JSONMembers {
    /// Calls `member(name, value)` for every top-level member in order; nil (see above) or true.
    public static func scan(_ b: UnsafeBufferPointer<UInt8>, maxBytes: Int, maxDepth: Int,
                            _ member: (_ name: Range<Int>, _ value: Range<Int>) -> Void) -> Bool? {
        guard b.count <= maxBytes else { return nil }
        var s = Scanner(b: b, maxDepth: maxDepth)
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

/// The cursor of `JSONMembers.scan`.
private struct Scanner {
    let b: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var pos = 0
    var sawNonASCII = false

    init(b: UnsafeBufferPointer<UInt8>, maxDepth: Int) { self.b = b; self.maxDepth = maxDepth }

    /// The current byte, 0 at the end (0 is never valid where a byte is tested).
    var byte: UInt8 { pos < b.count ? b[pos] : 0 }

    mutating func space() {
        while pos < b.count, b[pos] == 0x20 || b[pos] == 0x09 || b[pos] == 0x0A || b[pos] == 0x0D { pos += 1 }
    }

    /// Bytes a string scan must stop at: `"`, `\\`, control characters (1) and non-ASCII (2).
    static let stops: [UInt8] = (0..<256).map { c in c < 0x20 || c == 0x22 || c == 0x5C ? 1 : (c >= 0x80 ? 2 : 0) }

    /// Skips a string starting at its quote; its range including both quotes, or nil.
    mutating func string(allowEscapes: Bool) -> Range<Int>? {
        let start = pos
        pos += 1
        return Scanner.stops.withUnsafeBufferPointer { stops -> Range<Int>? in
            while pos < b.count {
                let c = b[pos]
                let kind = stops[Int(c)]
                if kind == 0 { pos += 1; continue }
                if kind == 2 { sawNonASCII = true; pos += 1; continue }
                if c == UInt8(ascii: "\"") { pos += 1; return start..<pos }
                if c < 0x20 { return nil }
                guard escape(allowEscapes) else { return nil }
            }
            return nil
        }
    }

    /// Skips the escape at `pos` (a backslash); false if it is invalid or left to the parser.
    mutating func escape(_ allowed: Bool) -> Bool {
        guard allowed, pos + 1 < b.count else { return false }
        switch b[pos + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
             UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            pos += 2
            return true
        case UInt8(ascii: "u"):
            guard pos + 6 <= b.count else { return false }
            var v: UInt32 = 0
            for k in pos + 2..<pos + 6 {
                let c = b[k]
                let d: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: return false
                }
                v = v << 4 | UInt32(d)
            }
            // A surrogate escape (paired or lone) is left to the full parser.
            if v >= 0xD800 && v <= 0xDFFF { return false }
            pos += 6
            return true
        default:
            return false
        }
    }

    /// Skips one value whose containers would sit at nesting `depth`.
    mutating func value(depth: Int) -> Bool {
        switch byte {
        case UInt8(ascii: "\""): return string(allowEscapes: true) != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["): return container(depth: depth)
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return false
        }
    }

    mutating func container(depth: Int) -> Bool {
        guard depth < maxDepth else { return false }
        let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
        let isObject = close == UInt8(ascii: "}")
        pos += 1
        space()
        if byte == close { pos += 1; return true }
        while true {
            if isObject {
                guard byte == UInt8(ascii: "\""), string(allowEscapes: true) != nil else { return false }
                space()
                guard byte == UInt8(ascii: ":") else { return false }
                pos += 1
                space()
            }
            guard value(depth: depth + 1) else { return false }
            space()
            if byte == UInt8(ascii: ",") { pos += 1; space(); continue }
            guard byte == close else { return false }
            pos += 1
            return true
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard pos + n <= b.count else { return false }
        for i in 0..<n where b[pos + i] != word.utf8Start[i] { return false }
        pos += n
        return true
    }

    mutating func number() -> Bool {
        if byte == UInt8(ascii: "-") { pos += 1 }
        if byte == UInt8(ascii: "0") { pos += 1 } else if digits() == 0 { return false }
        if byte == UInt8(ascii: ".") { pos += 1; guard digits() > 0 else { return false } }
        if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            pos += 1
            if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") { pos += 1 }
            guard digits() > 0 else { return false }
        }
        return true
    }

    mutating func digits() -> Int {
        let start = pos
        while pos < b.count, b[pos] >= UInt8(ascii: "0"), b[pos] <= UInt8(ascii: "9") { pos += 1 }
        return pos - start
    }
}
