import Testing
@testable import AuthEngine

/// The strict CBOR reader (RFC 8949) a relying party needs: RFC 8949 Appendix A's examples it
/// must read, those it must refuse (floats, tags, undefined and other simple values, indefinite
/// lengths), and each of its own rules — shortest forms, reserved additional information,
/// 64-bit integers, UTF-8 text, map keys, nesting and item bounds, lengths within the input,
/// one item per `decode`.
@Suite("Passkeys: CBOR")
struct CBORTests {
    /// The reason `decode` refuses `bytes` with (nil when it accepts them).
    func refusal(_ bytes: [UInt8]) -> CBOR.Malformed? {
        do { _ = try CBOR.decode(bytes); return nil } catch { return error }
    }

    static func map(_ pairs: [(CBOR, CBOR)]) -> CBOR { TestCBOR.map(pairs) }

    // MARK: Accepted

    /// RFC 8949 Appendix A: the examples within this profile, with the value each decodes to.
    static let accepted: [(String, CBOR)] = [
        ("00", .int(0)), ("01", .int(1)), ("0a", .int(10)), ("17", .int(23)), ("1818", .int(24)), ("1819", .int(25)),
        ("1864", .int(100)), ("1903e8", .int(1000)), ("1a000f4240", .int(1_000_000)),
        ("1b000000e8d4a51000", .int(1_000_000_000_000)),
        ("20", .int(-1)), ("29", .int(-10)), ("3863", .int(-100)), ("3903e7", .int(-1000)),
        ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null),
        ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])),
        ("60", .text("")), ("6161", .text("a")), ("6449455446", .text("IETF")), ("62225c", .text("\"\\")),
        ("62c3bc", .text("\u{FC}")), ("63e6b0b4", .text("\u{6C34}")), ("64f0908591", .text("\u{10151}")),
        ("80", .array([])), ("83010203", .array([.int(1), .int(2), .int(3)])),
        ("8301820203820405", .array([.int(1), .array([.int(2), .int(3)]), .array([.int(4), .int(5)])])),
        ("98190102030405060708090a0b0c0d0e0f101112131415161718181819", .array((1...25).map { .int(Int64($0)) })),
        ("a0", .map([])),
        ("a201020304", map([(.int(1), .int(2)), (.int(3), .int(4))])),
        ("a26161016162820203", map([(.text("a"), .int(1)), (.text("b"), .array([.int(2), .int(3)]))])),
        ("826161a161626163", .array([.text("a"), map([(.text("b"), .text("c"))])])),
        ("a56161614161626142616361436164614461656145",
         map([(.text("a"), .text("A")), (.text("b"), .text("B")), (.text("c"), .text("C")), (.text("d"), .text("D")),
              (.text("e"), .text("E"))])),
    ]

    @Test("RFC 8949 Appendix A: integers, negative integers, byte and text strings, arrays, maps, false, true, null",
          arguments: accepted.indices)
    func appendixAAccepted(index: Int) throws {
        let (text, value) = Self.accepted[index]
        let bytes = hex(text)
        #expect(try CBOR.decode(bytes) == value, "\(text)")
        // Strict means canonical: the shortest encoding of the value is the input itself.
        #expect(TestCBOR.encode(value) == bytes, "\(text)")
    }

    @Test("the edges of 64-bit integers: Int64.max and Int64.min are read, one past either is refused")
    func int64Edges() throws {
        #expect(try CBOR.decode(hex("1b7fffffffffffffff")) == .int(.max))
        #expect(try CBOR.decode(hex("3b7fffffffffffffff")) == .int(.min))
        for beyond in ["1b8000000000000000", "3b8000000000000000", "1bffffffffffffffff", "3bffffffffffffffff"] {
            #expect(refusal(hex(beyond)) == CBOR.Malformed(offset: 9, reason: "an integer beyond 64-bit range"), "\(beyond)")
        }
    }

    @Test("the shortest forms at each width's lower edge are read")
    func shortestEdges() throws {
        let cases: [(String, Int64)] = [("1818", 24), ("18ff", 255), ("190100", 256), ("19ffff", 65535), ("1a00010000", 65536),
                                        ("1affffffff", 4_294_967_295), ("1b0000000100000000", 4_294_967_296),
                                        ("37", -24), ("3818", -25), ("38ff", -256), ("390100", -257)]
        for (text, value) in cases { #expect(try CBOR.decode(hex(text)) == .int(value), "\(text)") }
        let long = [UInt8](repeating: 0x61, count: 24)
        #expect(try CBOR.decode([0x58, 24] + long) == .bytes(long))
        #expect(try CBOR.decode([0x78, 24] + long) == .text(String(repeating: "a", count: 24)))
    }

    @Test("lookups: a map's value by text or integer key, nil for a missing key or a value that is not a map")
    func lookups() throws {
        let value = try CBOR.decode(hex("a3 01 02 6161 4101 20 f5"))
        #expect(value[1] == .int(2) && value["a"]?.bytesValue == [1] && value[-1] == .bool(true))
        #expect(value[2] == nil && value["b"] == nil && CBOR.int(1)[1] == nil)
        #expect(CBOR.text("x").textValue == "x" && CBOR.int(3).intValue == 3 && CBOR.int(3).bytesValue == nil)
    }

    // MARK: Refused

    /// RFC 8949 Appendix A examples outside the profile, each with the reason it is refused.
    static let refused: [(String, String)] = [
        // Floating point, half, single and double precision, and their special values.
        ("f90000", "float"), ("f98000", "float"), ("f93c00", "float"), ("fb3ff199999999999a", "float"), ("f93e00", "float"),
        ("f97bff", "float"), ("fa47c35000", "float"), ("fa7f7fffff", "float"), ("fb7e37e43c8800759c", "float"),
        ("fa33800000", "float"), ("f90001", "float"), ("f90400", "float"), ("f9c400", "float"), ("fbc010666666666666", "float"),
        ("f97c00", "float"), ("f97e00", "float"), ("f9fc00", "float"), ("fa7f800000", "float"), ("fa7fc00000", "float"),
        ("faff800000", "float"), ("fb7ff0000000000000", "float"), ("fb7ff8000000000000", "float"), ("fbfff0000000000000", "float"),
        // undefined and other simple values.
        ("f7", "float"), ("f0", "float"), ("f8ff", "float"),
        // Tags: bignums, date-time, epoch, expected conversions, an encoded CBOR item, a URI.
        ("c249010000000000000000", "a tag"), ("3bffffffffffffffff", "an integer beyond 64-bit range"),
        ("c349010000000000000000", "a tag"),
        ("c074323031332d30332d32315432303a30343a30305a", "a tag"), ("c11a514b67b0", "a tag"), ("c1fb41d452d9ec200000", "a tag"),
        ("d74401020304", "a tag"), ("d818456449455446", "a tag"), ("d82076687474703a2f2f7777772e6578616d706c652e636f6d", "a tag"),
        ("1bffffffffffffffff", "an integer beyond 64-bit range"),
        // Indefinite lengths.
        ("5f42010243030405ff", "an indefinite length"), ("7f657374726561646d696e67ff", "an indefinite length"),
        ("9fff", "an indefinite length"), ("9f018202039f0405ffff", "an indefinite length"),
        ("9f01820203820405ff", "an indefinite length"), ("83018202039f0405ff", "an indefinite length"),
        ("83019f0203ff820405", "an indefinite length"),
        ("9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff", "an indefinite length"),
        ("bf61610161629f0203ffff", "an indefinite length"), ("826161bf61626163ff", "an indefinite length"),
        ("bf6346756ef563416d7421ff", "an indefinite length"),
    ]

    @Test("RFC 8949 Appendix A: floats, undefined, simple values, tags, bignums and indefinite lengths are refused",
          arguments: refused.indices)
    func appendixARefused(index: Int) {
        let (text, reason) = Self.refused[index]
        let got = refusal(hex(text))
        #expect(got != nil, "\(text) was accepted")
        if reason == "float" {
            #expect(got?.reason == "a simple value or float other than false, true and null", "\(text): \(String(describing: got))")
        } else {
            #expect(got?.reason == reason, "\(text): \(String(describing: got))")
        }
    }

    @Test("a break byte alone, or major type 7 with additional information 28 to 31, is refused")
    func breakAndReservedSimple() {
        for b: UInt8 in [0xFC, 0xFD, 0xFE, 0xFF] {
            #expect(refusal([b]) == CBOR.Malformed(offset: 1, reason: "a simple value or float other than false, true and null"), "\(b)")
        }
    }

    @Test("an integer or a length not in its shortest form is refused, in every major type that has one")
    func nonShortest() {
        let reason = "an integer or length not in its shortest form"
        let cases = [
            "1800", "1817", "190000", "1900ff", "1a00000000", "1a0000ffff", "1b0000000000000000", "1b00000000ffffffff",
            "3800", "3817", "3900ff", "3a0000ffff", "3b00000000ffffffff",
            "580141", "59000141", "5a0000000141", "5b000000000000000141",
            "780161", "79000161",
            "9800", "990001" + "00", "9a0000000100",
            "b800", "b9000101" + "02",
        ]
        for text in cases {
            let got = refusal(hex(text))
            #expect(got?.reason == reason, "\(text): \(String(describing: got))")
        }
        // Inside a structure: where the offending head ends.
        #expect(refusal(hex("82 01 1805")) == CBOR.Malformed(offset: 4, reason: reason))
    }

    @Test("additional information 28, 29 and 30 is reserved in every major type that takes an argument; 31 is an indefinite length")
    func reservedAdditionalInformation() {
        for major: UInt8 in 0...6 {
            for info: UInt8 in 28...30 {
                let got = refusal([major << 5 | info, 0, 0, 0, 0, 0, 0, 0, 0])
                let expected = major == 6 ? "a tag" : "a reserved additional information value"
                #expect(got?.reason == expected, "major \(major) info \(info): \(String(describing: got))")
            }
        }
        for major: UInt8 in [0, 1] { #expect(refusal([major << 5 | 31])?.reason == "an indefinite length") }
    }

    @Test("text that is not UTF-8 is refused: a lone continuation, a truncated sequence, an overlong form, a surrogate, past U+10FFFF")
    func textNotUTF8() throws {
        for text in ["61ff", "6180", "61c3", "62c328", "62c0af", "63e08080", "63eda080", "64f4908080", "65f888808080"] {
            #expect(refusal(hex(text)) == CBOR.Malformed(offset: 1, reason: "text that is not UTF-8"), "\(text)")
        }
        // The same bytes as a byte string are fine.
        #expect(try CBOR.decode(hex("42c328")) == .bytes([0xC3, 0x28]))
    }

    @Test("a repeated map key is refused at the repeated key, integer or text; an integer and a text key of the same look differ")
    func duplicateKeys() throws {
        #expect(refusal(hex("a2 01 02 01 03")) == CBOR.Malformed(offset: 3, reason: "a repeated map key"))
        #expect(refusal(hex("a2 6161 01 6161 02")) == CBOR.Malformed(offset: 4, reason: "a repeated map key"))
        #expect(refusal(hex("a3 01 00 02 00 01 00")) == CBOR.Malformed(offset: 5, reason: "a repeated map key"))
        // Nested maps each have their own keys.
        _ = try CBOR.decode(hex("a2 01 a1 01 00 02 a1 01 00"))
        #expect(try CBOR.decode(hex("a2 01 00 6131 00")) == Self.map([(.int(1), .int(0)), (.text("1"), .int(0))]))
        // -1 and 0 and 1 are three keys.
        _ = try CBOR.decode(hex("a3 20 00 00 00 01 00"))
        // Text keys compare by their bytes: "é" precomposed and "e" + U+0301 are two keys.
        _ = try CBOR.decode(hex("a2 62c3a9 01 6365cc81 02"))
    }

    @Test("a map key that is not an integer or text is refused: bytes, false, true, null, an array, a map")
    func mapKeyTypes() {
        for key in ["40", "4101", "f4", "f5", "f6", "80", "8101", "a0"] {
            #expect(refusal(hex("a1" + key + "00")) == CBOR.Malformed(offset: 1, reason: "a map key that is not an integer or text"), "\(key)")
        }
    }

    /// `depth` arrays, each holding the next, the innermost empty.
    static func nestedArrays(_ depth: Int) -> [UInt8] { [UInt8](repeating: 0x81, count: depth - 1) + [0x80] }

    @Test("nesting: CBOR.maxDepth arrays or maps deep are read, one more is refused where it starts")
    func nesting() throws {
        #expect(CBOR.maxDepth == 8)
        _ = try CBOR.decode(Self.nestedArrays(CBOR.maxDepth))
        #expect(refusal(Self.nestedArrays(CBOR.maxDepth + 1))
                == CBOR.Malformed(offset: CBOR.maxDepth + 1, reason: "nested deeper than \(CBOR.maxDepth)"))
        // Maps: {0: {0: … {}}}.
        let maps = { (depth: Int) -> [UInt8] in Array([[UInt8]](repeating: [0xA1, 0x00], count: depth - 1).joined()) + [0xA0] }
        _ = try CBOR.decode(maps(CBOR.maxDepth))
        #expect(refusal(maps(CBOR.maxDepth + 1))?.reason == "nested deeper than \(CBOR.maxDepth)")
        // Scalars at the deepest level are not containers: fine.
        _ = try CBOR.decode([UInt8](repeating: 0x81, count: CBOR.maxDepth) + [0x01])
        // Mixed: arrays and maps count alike.
        #expect(refusal([UInt8](repeating: 0x81, count: 4) + [0xA1, 0x00] + [UInt8](repeating: 0x81, count: 3) + [0x80])?.reason
                == "nested deeper than \(CBOR.maxDepth)")
        // Deep input far past the limit stops at the limit (no recursion to the end of the input).
        #expect(refusal(Self.nestedArrays(100_000))?.offset == CBOR.maxDepth + 1)
    }

    @Test("items: CBOR.maxItems in all are read (the container and map keys count), one more is refused")
    func itemBound() throws {
        #expect(CBOR.maxItems == 1024)
        let n = CBOR.maxItems - 1
        #expect(try CBOR.decode(TestCBOR.head(4, UInt64(n)) + [UInt8](repeating: 0, count: n)) == .array([CBOR](repeating: .int(0), count: n)))
        let over = TestCBOR.head(4, UInt64(n + 1)) + [UInt8](repeating: 0, count: n + 1)
        #expect(refusal(over) == CBOR.Malformed(offset: 3 + n, reason: "more than \(CBOR.maxItems) items"))
        // A map of 511 pairs is 1 + 1022 items; 512 pairs is one too many.
        func pairs(_ count: Int) -> [UInt8] { TestCBOR.head(5, UInt64(count)) + (0..<count).flatMap { TestCBOR.head(0, UInt64($0)) + [0xF6] } }
        _ = try CBOR.decode(pairs(511))
        #expect(refusal(pairs(512))?.reason == "more than \(CBOR.maxItems) items")
        // Items are counted across nested containers too.
        let nested = [0x82] + TestCBOR.head(4, 600) + [UInt8](repeating: 0, count: 600) + TestCBOR.head(4, 600) + [UInt8](repeating: 0, count: 600)
        #expect(refusal(nested)?.reason == "more than \(CBOR.maxItems) items")
    }

    @Test("a length or count past the end of the input is refused before anything is read or allocated")
    func lengthsPastTheEnd() {
        let past = "a length past the end of the input"
        #expect(refusal(hex("4201")) == CBOR.Malformed(offset: 1, reason: past))
        #expect(refusal(hex("6261")) == CBOR.Malformed(offset: 1, reason: past))
        #expect(refusal(hex("5affffffff00")) == CBOR.Malformed(offset: 5, reason: past))
        #expect(refusal(hex("5bffffffffffffffff")) == CBOR.Malformed(offset: 9, reason: past))
        #expect(refusal(hex("7bffffffffffffffff")) == CBOR.Malformed(offset: 9, reason: past))
        // A count of items larger than the bytes left cannot be met (each item is at least a byte).
        #expect(refusal(hex("9bffffffffffffffff")) == CBOR.Malformed(offset: 9, reason: past))
        #expect(refusal(hex("bbffffffffffffffff")) == CBOR.Malformed(offset: 9, reason: past))
        #expect(refusal(hex("83")) == CBOR.Malformed(offset: 1, reason: past))
        #expect(refusal(hex("830102")) == CBOR.Malformed(offset: 1, reason: past))
        // Within the count but cut short: the missing item is an unexpected end.
        #expect(refusal(hex("a20102")) == CBOR.Malformed(offset: 3, reason: "unexpected end"))
        #expect(refusal(hex("83 01 82 01 01")) == CBOR.Malformed(offset: 5, reason: "unexpected end"))
        // An argument cut short, and nothing at all.
        #expect(refusal(hex("1901")) == CBOR.Malformed(offset: 2, reason: "unexpected end"))
        #expect(refusal(hex("1b00000000")) == CBOR.Malformed(offset: 5, reason: "unexpected end"))
        #expect(refusal([]) == CBOR.Malformed(offset: 0, reason: "unexpected end"))
    }

    // MARK: One item

    @Test("decode refuses bytes after the item at their offset; decodePrefix returns the item and the index after it")
    func trailingBytes() throws {
        #expect(refusal(hex("0000")) == CBOR.Malformed(offset: 1, reason: "bytes after the item"))
        #expect(refusal(hex("a0ff")) == CBOR.Malformed(offset: 1, reason: "bytes after the item"))
        let bytes = hex("a201020304" + "a1616101")
        let (first, end) = try CBOR.decodePrefix(bytes[...])
        #expect(first == Self.map([(.int(1), .int(2)), (.int(3), .int(4))]) && end == 5)
        let (second, last) = try CBOR.decodePrefix(bytes[end...])
        #expect(second == Self.map([(.text("a"), .int(1))]) && last == bytes.endIndex)
        // decodePrefix reads only its item: garbage after it is not looked at.
        #expect(try CBOR.decodePrefix(hex("01ff1c")[...]).1 == 1)
    }

    @Test("a slice that does not start at 0: indices and offsets are the base array's")
    func sliceIndices() throws {
        let base = hex("ffff" + "4401020304" + "f6")
        let (value, end) = try CBOR.decodePrefix(base[2...])
        #expect(value == .bytes([1, 2, 3, 4]) && end == 7)
        #expect(try CBOR.decodePrefix(base[7...]) == (.null, 8))
        do {
            _ = try CBOR.decodePrefix(base[2..<6])
            Issue.record("a cut-short slice was read")
        } catch {
            #expect(error == CBOR.Malformed(offset: 3, reason: "a length past the end of the input"))
        }
        // The slice's end bounds the read, not the array's.
        #expect(throws: CBOR.Malformed.self) { try CBOR.decodePrefix(base[0..<1]) }
    }

    @Test("errors name their byte")
    func description() {
        #expect(CBOR.Malformed(offset: 3, reason: "a tag").description == "CBOR at byte 3: a tag")
    }
}
