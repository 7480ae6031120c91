import AuthCrypto
@testable import AuthEngine

/// A CBOR encoder for the tests (the server only decodes): every head in its shortest form,
/// definite lengths, map pairs in the order given. What the strict decoder accepts is exactly
/// what this writes, so `encode(decode(b)) == b` for every accepted `b`.
enum TestCBOR {
    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        let m = major << 5
        switch value {
        case ..<24: return [m | UInt8(value)]
        case ..<0x100: return [m | 24, UInt8(value)]
        case ..<0x1_0000: return [m | 25] + bigEndian(value, 2)
        case ..<0x1_0000_0000: return [m | 26] + bigEndian(value, 4)
        default: return [m | 27] + bigEndian(value, 8)
        }
    }

    static func bigEndian(_ value: UInt64, _ count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    static func encode(_ value: CBOR) -> [UInt8] {
        switch value {
        case let .int(i): return i >= 0 ? head(0, UInt64(i)) : head(1, UInt64(-1 - i))
        case let .bytes(b): return head(2, UInt64(b.count)) + b
        case let .text(t): return head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case let .array(items): return head(4, UInt64(items.count)) + items.flatMap(encode)
        case let .map(pairs): return head(5, UInt64(pairs.count)) + pairs.flatMap { encode($0.key) + encode($0.value) }
        case let .bool(b): return [b ? 0xF5 : 0xF4]
        case .null: return [0xF6]
        }
    }

    /// A map from pairs in this order.
    static func map(_ pairs: [(CBOR, CBOR)]) -> CBOR { .map(pairs.map { CBOR.Pair(key: $0.0, value: $0.1) }) }
}

/// Bytes from hex text (spaces allowed), for vectors written as the RFCs print them.
func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    guard let bytes = Hex.decode(digits.lowercased()) else { fatalError("bad hex in a test: \(text)") }
    return bytes
}
