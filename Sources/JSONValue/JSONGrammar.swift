/// RFC 8259's lexical rules, the one copy that both readers of JSON text use: `JSONParser`, which
/// builds values, and `JSONMembers`, the verify hot path's scan that builds none. Sharing them is
/// what keeps the scan a subset of the parser (the fuzz target `json-members` checks it).
enum JSONGrammar {
    static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

    /// The index of the first byte at or after `pos` that is not JSON white space.
    static func skipSpace(_ b: UnsafeBufferPointer<UInt8>, from pos: Int) -> Int {
        var p = pos
        while p < b.count, b[p] == 0x20 || b[p] == 0x09 || b[p] == 0x0A || b[p] == 0x0D { p += 1 }
        return p
    }

    /// Per byte inside a string: 0 plain ASCII, 1 a stop (`"`, `\`, a control character), 2 the
    /// byte of a multi-byte UTF-8 sequence (validated once for the whole text).
    static let stringBytes: [UInt8] = (0..<256).map { c in c < 0x20 || c == 0x22 || c == 0x5C ? 1 : (c >= 0x80 ? 2 : 0) }

    /// The first index at or after `pos` holding a stop byte (or the end); `sawNonASCII` is set
    /// when a byte of 0x80 or above was passed.
    static func skipStringRun(_ b: UnsafeBufferPointer<UInt8>, from pos: Int, sawNonASCII: inout Bool) -> Int {
        stringBytes.withUnsafeBufferPointer { kinds in
            var p = pos
            while p < b.count {
                let kind = kinds[Int(b[p])]
                if kind == 1 { break }
                if kind == 2 { sawNonASCII = true }
                p += 1
            }
            return p
        }
    }

    /// The byte a one-character escape stands for (`\n` → 0x0A); nil for `\u` and invalid ones.
    static func simpleEscape(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "\""): return 0x22
        case UInt8(ascii: "\\"): return 0x5C
        case UInt8(ascii: "/"): return 0x2F
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        default: return nil
        }
    }

    /// The value of one hexadecimal digit, either case.
    static func hexDigit(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// The four hexadecimal digits of a `\u` escape at `pos`: their value, or the index of the
    /// first byte that is not one (the end when cut short).
    static func hex4(_ b: UnsafeBufferPointer<UInt8>, at pos: Int) -> Result<UInt32, HexStop> {
        var v: UInt32 = 0
        for k in pos..<pos + 4 {
            guard k >= 0, k < b.count, let d = hexDigit(b[k]) else { return .failure(HexStop(index: k)) }
            v = v << 4 | d
        }
        return .success(v)
    }

    struct HexStop: Error { let index: Int }

    static func isHighSurrogate(_ v: UInt32) -> Bool { v >= 0xD800 && v <= 0xDBFF }
    static func isLowSurrogate(_ v: UInt32) -> Bool { v >= 0xDC00 && v <= 0xDFFF }

    /// How many bytes of `word` (`true`, `false`, `null`) are written at `pos`: all of them, or
    /// where the text goes wrong.
    static func literal(_ b: UnsafeBufferPointer<UInt8>, at pos: Int, _ word: StaticString) -> Int {
        let w = word.utf8Start
        var i = 0
        while i < word.utf8CodeUnitCount, pos + i < b.count, b[pos + i] == w[i] { i += 1 }
        return i
    }

    /// The end of a number's grammar (`-? int frac? exp?`) starting at `pos` and whether it has an
    /// exponent; when the text there is not a number, `valid` is false and `end` is where it
    /// went wrong.
    static func number(_ b: UnsafeBufferPointer<UInt8>, from pos: Int) -> (end: Int, exponent: Bool, valid: Bool) {
        var p = pos
        func byte() -> UInt8 { p < b.count ? b[p] : 0 }
        func digits() -> Int {
            let s = p
            while p < b.count, b[p] >= UInt8(ascii: "0"), b[p] <= UInt8(ascii: "9") { p += 1 }
            return p - s
        }
        if byte() == UInt8(ascii: "-") { p += 1 }
        if byte() == UInt8(ascii: "0") { p += 1 } else if digits() == 0 { return (p, false, false) }
        if byte() == UInt8(ascii: ".") {
            p += 1
            guard digits() > 0 else { return (p, false, false) }
        }
        var exponent = false
        if byte() == UInt8(ascii: "e") || byte() == UInt8(ascii: "E") {
            exponent = true
            p += 1
            if byte() == UInt8(ascii: "+") || byte() == UInt8(ascii: "-") { p += 1 }
            guard digits() > 0 else { return (p, true, false) }
        }
        return (p, exponent, true)
    }

    /// A number's value when it is within Double's range; nil beyond it (`1e999`), which both
    /// readers refuse.
    static func finiteValue(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        guard let d = Double(String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self)), d.isFinite else { return nil }
        return d
    }
}

/// What a reader of JSON text accepts at most: the text's length in bytes, and how deeply
/// containers nest (a top-level object or array is level 1). Both readers apply them alike.
public struct JSONLimits: Sendable, Equatable {
    public var maxBytes: Int
    public var maxDepth: Int
    public init(maxBytes: Int, maxDepth: Int) { self.maxBytes = maxBytes; self.maxDepth = maxDepth }
}
