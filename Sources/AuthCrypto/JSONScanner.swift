/// The cursor of `JSONMembers.scan`.
struct JSONScanner {
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
        return JSONScanner.stops.withUnsafeBufferPointer { stops -> Range<Int>? in
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
        let start = pos
        if byte == UInt8(ascii: "-") { pos += 1 }
        if byte == UInt8(ascii: "0") { pos += 1 } else if digits() == 0 { return false }
        if byte == UInt8(ascii: ".") { pos += 1; guard digits() > 0 else { return false } }
        var exponent = false
        if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            exponent = true
            pos += 1
            if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") { pos += 1 }
            guard digits() > 0 else { return false }
        }
        // The parser refuses a number beyond Double's range (`1e999`), so the scan does too; only
        // an exponent or some 300 digits get there, never the plain integers of a token.
        if exponent || pos - start > 300 {
            guard let d = Double(String(decoding: UnsafeBufferPointer(rebasing: b[start..<pos]), as: UTF8.self)), d.isFinite else {
                return false
            }
        }
        return true
    }

    mutating func digits() -> Int {
        let start = pos
        while pos < b.count, b[pos] >= UInt8(ascii: "0"), b[pos] <= UInt8(ascii: "9") { pos += 1 }
        return pos - start
    }
}
