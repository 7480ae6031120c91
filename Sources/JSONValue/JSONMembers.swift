/// A validating scan of one JSON object (RFC 8259) that reports each top-level member's name and
/// raw value as byte ranges, without building values: what verifying a token needs from its JWS
/// header and claims. It reads with `JSONParser`'s grammar (`JSONGrammar`) and limits and accepts
/// a subset of what the parser accepts, answering nil for the rest (malformed text, text or
/// nesting past the limits, a member name with an escape, a `\u` escape of a surrogate, a number
/// beyond Double's range, invalid UTF-8), so a caller can leave those to the full parser.
public enum JSONMembers {
    /// Calls `member(name, value)` for every top-level member in order; nil (see above) or true.
    public static func scan(_ b: UnsafeBufferPointer<UInt8>, limits: JSONLimits,
                            _ member: (_ name: Range<Int>, _ value: Range<Int>) -> Void) -> Bool? {
        guard b.count <= limits.maxBytes, limits.maxDepth >= 1 else { return nil }
        var s = MemberScanner(b: b, maxDepth: limits.maxDepth)
        s.space()
        guard s.byte == UInt8(ascii: "{") else { return nil }
        s.pos += 1
        s.space()
        if s.byte == UInt8(ascii: "}") {
            s.pos += 1
        } else {
            while true {
                guard s.byte == JSONGrammar.quote, let name = s.string(allowEscapes: false) else { return nil }
                s.space()
                guard s.byte == UInt8(ascii: ":") else { return nil }
                s.pos += 1
                s.space()
                let start = s.pos
                // Members of the top-level object (level 1) hold containers of level 2.
                guard s.value(level: 2) else { return nil }
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
                return inner.prefix(p.count).elementsEqual(p) && inner.dropFirst(p.count).elementsEqual(r)
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

/// The cursor of `JSONMembers.scan`: it passes over values, checking them by `JSONGrammar` as `JSONParser` does.
struct MemberScanner {
    let b: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var pos = 0
    var sawNonASCII = false

    init(b: UnsafeBufferPointer<UInt8>, maxDepth: Int) { self.b = b; self.maxDepth = maxDepth }

    /// The current byte, 0 at the end (0 is never valid where a byte is tested).
    var byte: UInt8 { pos < b.count ? b[pos] : 0 }

    mutating func space() { pos = JSONGrammar.skipSpace(b, from: pos) }

    /// Skips a string starting at its quote; its range including both quotes, or nil.
    mutating func string(allowEscapes: Bool) -> Range<Int>? {
        let start = pos
        pos += 1
        while true {
            pos = JSONGrammar.skipStringRun(b, from: pos, sawNonASCII: &sawNonASCII)
            guard pos < b.count else { return nil }
            let c = b[pos]
            if c == JSONGrammar.quote { pos += 1; return start..<pos }
            guard c == JSONGrammar.backslash, allowEscapes, pos + 1 < b.count else { return nil }
            let e = b[pos + 1]
            if JSONGrammar.simpleEscape(e) != nil { pos += 2; continue }
            // A surrogate escape (paired or lone) is left to the parser.
            guard e == UInt8(ascii: "u"), case let .success(v) = JSONGrammar.hex4(b, at: pos + 2),
                  !JSONGrammar.isHighSurrogate(v), !JSONGrammar.isLowSurrogate(v) else { return nil }
            pos += 6
        }
    }

    /// Skips one value; a container there would be at nesting `level`.
    mutating func value(level: Int) -> Bool {
        switch byte {
        case JSONGrammar.quote: return string(allowEscapes: true) != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["): return container(level: level)
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return false
        }
    }

    mutating func container(level: Int) -> Bool {
        guard level <= maxDepth else { return false }
        let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
        let isObject = close == UInt8(ascii: "}")
        pos += 1
        space()
        if byte == close { pos += 1; return true }
        while true {
            if isObject {
                guard byte == JSONGrammar.quote, string(allowEscapes: true) != nil else { return false }
                space()
                guard byte == UInt8(ascii: ":") else { return false }
                pos += 1
                space()
            }
            guard value(level: level + 1) else { return false }
            space()
            if byte == UInt8(ascii: ",") { pos += 1; space(); continue }
            guard byte == close else { return false }
            pos += 1
            return true
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        guard JSONGrammar.literal(b, at: pos, word) == word.utf8CodeUnitCount else { return false }
        pos += word.utf8CodeUnitCount
        return true
    }

    mutating func number() -> Bool {
        let start = pos
        let (end, exponent, valid) = JSONGrammar.number(b, from: pos)
        guard valid else { return false }
        pos = end
        // Only an exponent or some 300 digits reach past Double's range, never the plain
        // integers of a token, so the value is computed only then.
        if exponent || end - start > 300 { return JSONGrammar.finiteValue(b, start..<end) != nil }
        return true
    }
}
