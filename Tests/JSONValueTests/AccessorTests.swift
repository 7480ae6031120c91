import JSONValue
import Testing

/// The typed accessors handlers read requests with, the subscript, equality and the builders.
@Suite("JSON accessors")
struct AccessorTests {
    @Test("int64Value of an integral number within Int64", arguments: [
        (0, 0), (-0.0, 0), (1, 1), (-1, -1), (1_767_225_600, 1_767_225_600), (9.1e18, 9_100_000_000_000_000_000),
        (-9.1e18, -9_100_000_000_000_000_000), (9_007_199_254_740_992, 9_007_199_254_740_992),
    ] as [(Double, Int64)])
    func int64OfNumber(value: Double, expected: Int64) {
        #expect(JSON.number(value).int64Value == expected)
    }

    @Test("int64Value is nil for fractions, non-finite values and magnitudes from 9.2e18 on — never a trap", arguments: [
        12.5, -0.5, 1e-300, 9.2e18, -9.2e18, 0x1p63, -0x1p63, 1e19, -1e19,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, .nan,
    ] as [Double])
    func int64OfNumberNil(value: Double) {
        #expect(JSON.number(value).int64Value == nil)
    }

    @Test("int64Value of a string holding a decimal integer, to the limits of Int64", arguments: [
        ("0", 0), ("-1", -1), ("1767225600", 1_767_225_600), ("9223372036854775807", .max), ("-9223372036854775808", .min),
        ("007", 7),
    ] as [(String, Int64)])
    func int64OfString(value: String, expected: Int64) {
        #expect(JSON.string(value).int64Value == expected)
    }

    @Test("int64Value is nil for strings that are not an Int64", arguments: [
        "", " 1", "1 ", "1.0", "1e3", "0x10", "abc", "9223372036854775808", "-9223372036854775809", "99999999999999999999999", "١",
    ])
    func int64OfStringNil(value: String) {
        #expect(JSON.string(value).int64Value == nil)
    }

    @Test("int64Value of what clients send: a large integer as a number loses precision and is nil, as a string it is exact")
    func int64FromText() {
        #expect(parsed(#"{"n":9223372036854775807}"#)?["n"]?.int64Value == nil)
        #expect(parsed(#"{"n":"9223372036854775807"}"#)?["n"]?.int64Value == .max)
        #expect(parsed(#"{"n":1700000000}"#)?["n"]?.int64Value == 1_700_000_000)
        #expect(JSON.bool(true).int64Value == nil && JSON.null.int64Value == nil && JSON.array([.number(1)]).int64Value == nil)
    }

    @Test("the subscript takes the last of duplicate keys; objectValue keeps them all")
    func duplicateKeys() throws {
        let v = try #require(parsed(#"{"a":1,"b":2,"a":3}"#))
        #expect(v["a"] == .number(3))
        #expect(v["b"] == .number(2))
        #expect(v["c"] == nil)
        #expect(v.objectValue?.map(\.0) == ["a", "b", "a"])
    }

    @Test("the subscript of anything but an object is nil")
    func subscriptOfNonObject() {
        #expect(JSON.array([.object([("a", .null)])])["a"] == nil)
        #expect(JSON.string("a")["a"] == nil)
        #expect(JSON.null["a"] == nil)
    }

    @Test("each typed accessor answers only for its own case")
    func typedAccessors() {
        let all: [JSON] = [.null, .bool(true), .number(1), .string("s"), .array([]), .object([])]
        #expect(all.map { $0.isNull } == [true, false, false, false, false, false])
        #expect(all.map { $0.boolValue != nil } == [false, true, false, false, false, false])
        #expect(all.map { $0.doubleValue != nil } == [false, false, true, false, false, false])
        #expect(all.map { $0.stringValue != nil } == [false, false, false, true, false, false])
        #expect(all.map { $0.arrayValue != nil } == [false, false, false, false, true, false])
        #expect(all.map { $0.objectValue != nil } == [false, false, false, false, false, true])
    }

    @Test("objects are equal only with the same members in the same order")
    func equality() {
        let ab = JSON.object([("a", .number(1)), ("b", .number(2))])
        #expect(ab == .object([("a", .number(1)), ("b", .number(2))]))
        #expect(ab != .object([("b", .number(2)), ("a", .number(1))]))
        #expect(ab != .object([("a", .number(1))]))
        #expect(ab != .object([("a", .number(1)), ("c", .number(2))]))
        #expect(JSON.number(1) != .string("1"))
        #expect(JSON.array([.null]) != .array([.null, .null]))
        #expect(JSON.bool(false) != .null)
    }

    @Test("obj(...) drops nil members and converts Swift values")
    func builder() {
        let missing: String? = nil
        let v = JSON.obj(("s", "x"), ("gone", missing), ("i", 3), ("l", Int64(-4)), ("d", 0.5), ("b", true), ("a", ["p", "q"]))
        #expect(v.serialized() == #"{"s":"x","i":3,"l":-4,"d":0.5,"b":true,"a":["p","q"]}"#)
        #expect(JSON.obj([("n", JSON.null), ("z", nil)]).serialized() == #"{"n":null}"#)
    }
}
