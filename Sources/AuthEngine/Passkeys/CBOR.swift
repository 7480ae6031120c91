/// The CBOR (RFC 8949) a relying party reads: an attestation object, its statement, and COSE
/// keys. Strict and bounded, in the spirit of CTAP2's canonical form: definite lengths only,
/// every integer and length in its shortest form, no tags, no floating point, no simple values
/// but false, true and null, text that is valid UTF-8, map keys that are integers or text and
/// never repeated, integers within Int64, nesting at most `maxDepth` deep and at most
/// `maxItems` items in all. Anything else is refused with where it was found; nothing is read
/// past the input.
public indirect enum CBOR: Sendable, Equatable {
    case int(Int64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([Pair])
    case bool(Bool)
    case null

    public struct Pair: Sendable, Equatable {
        public let key: CBOR
        public let value: CBOR
    }

    public static let maxDepth = 8
    public static let maxItems = 1024

    public struct Malformed: Error, Equatable, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "CBOR at byte \(offset): \(reason)" }
    }

    /// Decodes exactly one item that fills `bytes`.
    public static func decode(_ bytes: [UInt8]) throws(Malformed) -> CBOR {
        let (value, end) = try decodePrefix(bytes[...])
        guard end == bytes.endIndex else { throw Malformed(offset: end, reason: "bytes after the item") }
        return value
    }

    /// Decodes the one item at the start of `bytes`; returns it and the index just after it (a
    /// credential's COSE key is followed by the authenticator's extensions).
    public static func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> (CBOR, Int) {
        var reader = Reader(bytes: bytes, position: bytes.startIndex)
        let value = try reader.item(depth: 0)
        return (value, reader.position)
    }

    /// The value under `key` in a map (nil for a missing key or a value that is not a map).
    public subscript(key: CBOR) -> CBOR? {
        guard case let .map(pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }
    public subscript(text: String) -> CBOR? { self[.text(text)] }
    public subscript(int: Int64) -> CBOR? { self[.int(int)] }

    /// Keys compare as RFC 8949 does: integers by value, text by its bytes (Swift's `==` on
    /// strings would take two canonically equivalent spellings for one key).
    static func sameKey(_ a: CBOR, _ b: CBOR) -> Bool {
        switch (a, b) {
        case let (.int(x), .int(y)): return x == y
        case let (.text(x), .text(y)): return x.utf8.elementsEqual(y.utf8)
        default: return false
        }
    }

    public var bytesValue: [UInt8]? { if case let .bytes(b) = self { return b }; return nil }
    public var textValue: String? { if case let .text(t) = self { return t }; return nil }
    public var intValue: Int64? { if case let .int(i) = self { return i }; return nil }

    struct Reader {
        let bytes: ArraySlice<UInt8>
        var position: Int
        var items = 0

        mutating func fail(_ reason: String) -> Malformed { Malformed(offset: position, reason: reason) }

        mutating func byte() throws(Malformed) -> UInt8 {
            guard position < bytes.endIndex else { throw fail("unexpected end") }
            defer { position += 1 }
            return bytes[position]
        }

        /// The argument of a head with additional information `info`, in its shortest form.
        mutating func argument(_ info: UInt8) throws(Malformed) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                let count = 1 << Int(info - 24)
                var v: UInt64 = 0
                for _ in 0..<count { v = v << 8 | UInt64(try byte()) }
                let smallest: UInt64 = info == 24 ? 24 : 1 << (4 << Int(info - 24))
                guard v >= smallest else { throw fail("an integer or length not in its shortest form") }
                return v
            case 31: throw fail("an indefinite length")
            default: throw fail("a reserved additional information value")
            }
        }

        mutating func length(_ info: UInt8) throws(Malformed) -> Int {
            let v = try argument(info)
            // Within what is left of the input, so it fits an Int (and nothing is read past the end).
            guard v <= UInt64(bytes.endIndex - position) else { throw fail("a length past the end of the input") }
            return Int(v)
        }

        mutating func item(depth: Int) throws(Malformed) -> CBOR {
            items += 1
            guard items <= CBOR.maxItems else { throw fail("more than \(CBOR.maxItems) items") }
            let head = try byte()
            let major = head >> 5, info = head & 0x1F
            switch major {
            case 0:
                let v = try argument(info)
                guard v <= UInt64(Int64.max) else { throw fail("an integer beyond 64-bit range") }
                return .int(Int64(v))
            case 1:
                let v = try argument(info)
                // v ≤ Int64.max, so -1 - v ≥ Int64.min: no overflow.
                guard v <= UInt64(Int64.max) else { throw fail("an integer beyond 64-bit range") }
                return .int(-1 - Int64(v))
            case 2:
                let n = try length(info)
                defer { position += n }
                return .bytes(Array(bytes[position..<(position + n)]))
            case 3:
                let n = try length(info)
                guard let text = String(validating: bytes[position..<(position + n)], as: UTF8.self) else { throw fail("text that is not UTF-8") }
                position += n
                return .text(text)
            case 4:
                guard depth < CBOR.maxDepth else { throw fail("nested deeper than \(CBOR.maxDepth)") }
                let n = try length(info)
                var out: [CBOR] = []
                out.reserveCapacity(min(n, 64))
                for _ in 0..<n { out.append(try item(depth: depth + 1)) }
                return .array(out)
            case 5:
                guard depth < CBOR.maxDepth else { throw fail("nested deeper than \(CBOR.maxDepth)") }
                let n = try length(info)
                var pairs: [Pair] = []
                pairs.reserveCapacity(min(n, 64))
                for _ in 0..<n {
                    let at = position
                    let key = try item(depth: depth + 1)
                    switch key {
                    case .int, .text: break
                    default: throw Malformed(offset: at, reason: "a map key that is not an integer or text")
                    }
                    guard !pairs.contains(where: { CBOR.sameKey($0.key, key) }) else { throw Malformed(offset: at, reason: "a repeated map key") }
                    pairs.append(Pair(key: key, value: try item(depth: depth + 1)))
                }
                return .map(pairs)
            case 6:
                throw fail("a tag")
            default:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw fail("a simple value or float other than false, true and null")
                }
            }
        }
    }
}
