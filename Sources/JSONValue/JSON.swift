

/// A JSON value with object keys kept in order, so responses are byte-stable (golden fixtures).
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public subscript(key: String) -> JSON? {
        guard case let .object(pairs) = self else { return nil }
        return pairs.last(where: { $0.0 == key })?.1
    }

    public var stringValue: String? { if case let .string(s) = self { return s }; return nil }
    public var boolValue: Bool? { if case let .bool(b) = self { return b }; return nil }
    public var doubleValue: Double? { if case let .number(n) = self { return n }; return nil }
    public var arrayValue: [JSON]? { if case let .array(a) = self { return a }; return nil }
    public var objectValue: [(String, JSON)]? { if case let .object(o) = self { return o }; return nil }
    public var isNull: Bool { if case .null = self { return true }; return false }

    /// Integer value of a number, or of a string holding an integer (int64 fields arrive both ways).
    public var int64Value: Int64? {
        switch self {
        case let .number(n) where n.rounded() == n && abs(n) < 9.2e18: return Int64(n)
        case let .string(s): return Int64(s)
        default: return nil
        }
    }
}

/// Builds a JSON object from pairs, dropping nil values: `.make(("a", "x"), ("b", nil))`.
extension JSON {
    public static func obj(_ pairs: (String, (any JSONConvertible)?)...) -> JSON {
        .object(pairs.compactMap { k, v in v.map { (k, $0.json) } })
    }
    public static func obj(_ pairs: [(String, (any JSONConvertible)?)]) -> JSON {
        .object(pairs.compactMap { k, v in v.map { (k, $0.json) } })
    }
}

/// Anything that renders as JSON.
public protocol JSONConvertible { var json: JSON { get } }
extension JSON: JSONConvertible { public var json: JSON { self } }
extension String: JSONConvertible { public var json: JSON { .string(self) } }
extension Bool: JSONConvertible { public var json: JSON { .bool(self) } }
extension Int: JSONConvertible { public var json: JSON { .number(Double(self)) } }
extension Int64: JSONConvertible { public var json: JSON { .number(Double(self)) } }
extension Double: JSONConvertible { public var json: JSON { .number(self) } }
extension Array: JSONConvertible where Element: JSONConvertible { public var json: JSON { .array(map(\.json)) } }

/// Why a JSON text was refused.
public enum JSONError: Error, Equatable, CustomStringConvertible {
    case tooLarge(limit: Int)
    case tooDeep(limit: Int)
    case syntax(offset: Int, reason: String)

    public var description: String {
        switch self {
        case let .tooLarge(limit): return "JSON payload larger than \(limit) bytes"
        case let .tooDeep(limit): return "JSON nested deeper than \(limit) levels"
        case let .syntax(offset, reason): return "\(reason) at byte \(offset)"
        }
    }
}

/// A strict RFC 8259 parser with size and depth limits; never traps on hostile input.
public struct JSONParser: Sendable {
    public var maxBytes: Int
    public var maxDepth: Int

    /// The defaults suit text the process stored or a provider answered; a request body is parsed
    /// with the web layer's own limits.
    public init(maxBytes: Int = 1 << 20, maxDepth: Int = 32) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }

    public init(_ limits: JSONLimits) { self.init(maxBytes: limits.maxBytes, maxDepth: limits.maxDepth) }

    public func parse(_ bytes: [UInt8]) throws(JSONError) -> JSON {
        guard bytes.count <= maxBytes else { throw .tooLarge(limit: maxBytes) }
        let result: Result<JSON, JSONError> = bytes.withUnsafeBufferPointer { b in
            var cursor = Cursor(b: b, maxDepth: maxDepth)
            do throws(JSONError) {
                cursor.pos = JSONGrammar.skipSpace(b, from: 0)
                let value = try cursor.value(depth: 0)
                cursor.pos = JSONGrammar.skipSpace(b, from: cursor.pos)
                guard cursor.pos >= b.count else { throw .syntax(offset: cursor.pos, reason: "Unexpected trailing data") }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    public func parse(_ text: String) throws(JSONError) -> JSON { try parse(Array(text.utf8)) }

    private struct Cursor {
        let b: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        var pos = 0
        init(b: UnsafeBufferPointer<UInt8>, maxDepth: Int) { self.b = b; self.maxDepth = maxDepth }

        func fail(_ reason: String) -> JSONError { .syntax(offset: pos, reason: reason) }
        var byte: UInt8? { pos < b.count ? b[pos] : nil }

        mutating func skipSpace() { pos = JSONGrammar.skipSpace(b, from: pos) }

        mutating func literal(_ word: StaticString, _ value: JSON) throws(JSONError) -> JSON {
            let matched = JSONGrammar.literal(b, at: pos, word)
            pos += matched
            guard matched == word.utf8CodeUnitCount else { throw fail("Invalid literal") }
            return value
        }

        mutating func value(depth: Int) throws(JSONError) -> JSON {
            guard depth <= maxDepth else { throw .tooDeep(limit: maxDepth) }
            guard let c = byte else { throw fail("Unexpected end of input") }
            switch c {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case JSONGrammar.quote: return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw fail("Unexpected character")
            }
        }

        mutating func object(depth: Int) throws(JSONError) -> JSON {
            guard depth <= maxDepth else { throw .tooDeep(limit: maxDepth) }
            pos += 1
            var pairs: [(String, JSON)] = []
            skipSpace()
            if byte == UInt8(ascii: "}") { pos += 1; return .object(pairs) }
            while true {
                skipSpace()
                guard byte == JSONGrammar.quote else { throw fail("Expected a string key") }
                let key = try string()
                skipSpace()
                guard byte == UInt8(ascii: ":") else { throw fail("Expected ':'") }
                pos += 1
                skipSpace()
                pairs.append((key, try value(depth: depth)))
                skipSpace()
                guard let c = byte else { throw fail("Unexpected end of input") }
                if c == UInt8(ascii: ",") { pos += 1; continue }
                if c == UInt8(ascii: "}") { pos += 1; return .object(pairs) }
                throw fail("Expected ',' or '}'")
            }
        }

        mutating func array(depth: Int) throws(JSONError) -> JSON {
            guard depth <= maxDepth else { throw .tooDeep(limit: maxDepth) }
            pos += 1
            var items: [JSON] = []
            skipSpace()
            if byte == UInt8(ascii: "]") { pos += 1; return .array(items) }
            while true {
                skipSpace()
                items.append(try value(depth: depth))
                skipSpace()
                guard let c = byte else { throw fail("Unexpected end of input") }
                if c == UInt8(ascii: ",") { pos += 1; continue }
                if c == UInt8(ascii: "]") { pos += 1; return .array(items) }
                throw fail("Expected ',' or ']'")
            }
        }

        /// A `\u` escape's four digits at `pos`, which it passes.
        mutating func hex4() throws(JSONError) -> UInt32 {
            guard pos + 4 <= b.count else { throw fail("Truncated \\u escape") }
            switch JSONGrammar.hex4(b, at: pos) {
            case let .success(v):
                pos += 4
                return v
            case let .failure(stop):
                pos = stop.index
                throw fail("Invalid \\u escape")
            }
        }

        mutating func string() throws(JSONError) -> String {
            pos += 1
            var out: [UInt8] = []
            var sawNonASCII = false
            while true {
                let run = pos
                pos = JSONGrammar.skipStringRun(b, from: pos, sawNonASCII: &sawNonASCII)
                if pos > run { out.append(contentsOf: UnsafeBufferPointer(rebasing: b[run..<pos])) }
                guard let c = byte else { throw fail("Unterminated string") }
                if c == JSONGrammar.quote { pos += 1; break }
                if c < 0x20 { throw fail("Control character in string") }
                pos += 1
                guard let e = byte else { throw fail("Unterminated escape") }
                pos += 1
                if let plain = JSONGrammar.simpleEscape(e) { out.append(plain); continue }
                guard e == UInt8(ascii: "u") else { throw fail("Invalid escape") }
                var scalar = try hex4()
                if JSONGrammar.isHighSurrogate(scalar) {
                    guard pos + 6 <= b.count, b[pos] == JSONGrammar.backslash, b[pos + 1] == UInt8(ascii: "u") else {
                        throw fail("Lone surrogate")
                    }
                    pos += 2
                    let low = try hex4()
                    guard JSONGrammar.isLowSurrogate(low) else { throw fail("Invalid surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if JSONGrammar.isLowSurrogate(scalar) {
                    throw fail("Lone surrogate")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("Invalid code point") }
                UTF8.encode(u) { out.append($0) }
            }
            // Escapes are encoded here, so only bytes taken from the text can be invalid UTF-8.
            if !sawNonASCII { return String(decoding: out, as: UTF8.self) }
            guard let s = String(validating: out, as: UTF8.self) else { throw fail("Invalid UTF-8 in string") }
            return s
        }

        mutating func number() throws(JSONError) -> JSON {
            let start = pos
            let (end, _, valid) = JSONGrammar.number(b, from: pos)
            pos = end
            guard valid else { throw fail("Invalid number") }
            guard let d = JSONGrammar.finiteValue(b, start..<end) else { throw fail("Number out of range") }
            return .number(d)
        }
    }
}

/// Serialises JSON compactly into UTF-8 bytes; integral numbers print without a fraction.
extension JSON {
    public func serialized() -> String { String(decoding: bytes, as: UTF8.self) }

    public var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case let .bool(b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case let .number(n):
            if n.rounded() == n, abs(n) < 1e15 {
                JSON.writeInteger(Int64(n), to: &out)
            } else if n.isFinite {
                out.append(contentsOf: "\(n)".utf8)
            } else {
                // JSON has no NaN or infinity; "nan" or "inf" would make the whole text unparsable.
                out.append(contentsOf: "null".utf8)
            }
        case let .string(s): JSON.writeString(s, to: &out)
        case let .array(items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let .object(pairs):
            out.append(UInt8(ascii: "{"))
            for (i, (k, v)) in pairs.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(k, to: &out)
                out.append(UInt8(ascii: ":"))
                v.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeInteger(_ v: Int64, to out: inout [UInt8]) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        var m = v.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[n] = UInt8(ascii: "0") + UInt8(m % 10)
                m /= 10
                n += 1
            } while m > 0
            while n > 0 { n -= 1; out.append(d[n]) }
        }
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Escapes `"`, `\\`, control characters, `<`, `>`, `&` (safe inside HTML) and U+2028/U+2029
    /// (safe inside JavaScript); every other UTF-8 byte passes through.
    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { u in
            var i = 0
            var run = 0  // start of the bytes not yet copied
            func flush(_ upTo: Int) { if upTo > run { out.append(contentsOf: UnsafeBufferPointer(rebasing: u[run..<upTo])) } }
            while i < u.count {
                let c = u[i]
                let escape: StaticString?
                var width = 1
                switch c {
                case UInt8(ascii: "\""): escape = "\\\""
                case UInt8(ascii: "\\"): escape = "\\\\"
                case 0x0A: escape = "\\n"
                case 0x0D: escape = "\\r"
                case 0x09: escape = "\\t"
                case UInt8(ascii: "<"): escape = "\\u003c"
                case UInt8(ascii: ">"): escape = "\\u003e"
                case UInt8(ascii: "&"): escape = "\\u0026"
                case 0xE2 where i + 2 < u.count && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9):
                    escape = u[i + 2] == 0xA8 ? "\\u2028" : "\\u2029"
                    width = 3
                case 0..<0x20:
                    flush(i)
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(hexDigits[Int(c >> 4)])
                    out.append(hexDigits[Int(c & 0xF)])
                    i += 1
                    run = i
                    continue
                default: escape = nil
                }
                if let escape {
                    flush(i)
                    escape.withUTF8Buffer { out.append(contentsOf: $0) }
                    i += width
                    run = i
                } else {
                    i += 1
                }
            }
            flush(u.count)
        }
        out.append(UInt8(ascii: "\""))
    }
}
