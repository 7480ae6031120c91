import JSONValue
import Testing

/// `serialized()` / `bytes`: compact output whose bytes golden fixtures and HTML pages rely on.
@Suite("JSON serialization")
struct SerializerTests {
    @Test("literals and empty containers")
    func literals() {
        #expect(JSON.null.serialized() == "null")
        #expect(JSON.bool(true).serialized() == "true")
        #expect(JSON.bool(false).serialized() == "false")
        #expect(JSON.array([]).serialized() == "[]")
        #expect(JSON.object([]).serialized() == "{}")
        #expect(JSON.string("").serialized() == #""""#)
    }

    @Test("quote, backslash and the short control escapes", arguments: [
        ("\"", #""\"""#), ("\\", #""\\""#), ("\n", #""\n""#), ("\r", #""\r""#), ("\t", #""\t""#), ("a\"b\\c", #""a\"b\\c""#),
    ])
    func shortEscapes(value: String, text: String) {
        #expect(JSON.string(value).serialized() == text)
    }

    @Test("every other control character as \\u00xx in lower-case hex", arguments: (0..<0x20).filter { ![0x09, 0x0A, 0x0D].contains($0) })
    func controlEscapes(code: Int) throws {
        let hex = String(code, radix: 16)
        let expected = "\"\\u00" + (hex.count == 1 ? "0" : "") + hex + "\""
        #expect(JSON.string(String(UnicodeScalar(UInt8(code)))).serialized() == expected)
    }

    @Test("<, > and & are escaped so JSON can sit inside HTML; U+2028 and U+2029 so it can sit inside JavaScript")
    func htmlAndScriptEscapes() {
        #expect(JSON.string("</script><!--&amp;").serialized() == #""\u003c/script\u003e\u003c!--\u0026amp;""#)
        #expect(JSON.string("a\u{2028}b\u{2029}c").serialized() == #""a\u2028b\u2029c""#)
        #expect(JSON.string("\u{2028}").serialized() == #""\u2028""#)
        // Their neighbours, sharing the first two UTF-8 bytes, pass through.
        #expect(JSON.string("\u{2027}\u{202A}\u{2020}").serialized() == "\"\u{2027}\u{202A}\u{2020}\"")
    }

    @Test("everything else passes through: slash, apostrophe, DEL, non-ASCII")
    func passThrough() {
        #expect(JSON.string("/'\u{7F}é€😀").serialized() == "\"/'\u{7F}é€😀\"")
        #expect(JSON.string("plain text").bytes == Array("\"plain text\"".utf8))
    }

    @Test("object keys are escaped as values are")
    func keys() {
        #expect(JSON.object([("<k\"\n", .null)]).serialized() == #"{"\u003ck\"\n":null}"#)
    }

    @Test("integral numbers print without a fraction up to 10^15; others as Swift prints a Double", arguments: [
        (0, "0"), (-0.0, "0"), (1, "1"), (-42, "-42"), (3600, "3600"), (1_767_225_600_000, "1767225600000"),
        (999_999_999_999_999, "999999999999999"), (-999_999_999_999_999, "-999999999999999"),
        (1e15, "1000000000000000.0"), (-1e15, "-1000000000000000.0"), (1e16, "1e+16"), (1.5, "1.5"), (-0.25, "-0.25"), (0.1, "0.1"), (1e-7, "1e-07"), (1.5e300, "1.5e+300"),
        (0x1p53 + 2, "9.007199254740994e+15"),
    ] as [(Double, String)])
    func numbers(value: Double, text: String) {
        #expect(JSON.number(value).serialized() == text)
    }

    @Test("numbers that JSON cannot spell (NaN, ±infinity) serialize as null, never as invalid JSON", arguments: [
        Double.nan, .infinity, -.infinity,
    ])
    func nonFinite(value: Double) {
        #expect(JSON.number(value).serialized() == "null")
        #expect(parsed(JSON.array([.number(value)]).serialized()) == .array([.null]))
    }

    @Test("object members keep their order, duplicates included")
    func keyOrder() {
        let v = JSON.object([("z", .number(1)), ("a", .number(2)), ("m", .array([.null, .bool(false)]))])
        #expect(v.serialized() == #"{"z":1,"a":2,"m":[null,false]}"#)
        #expect(parsed(#"{"b":1,"a":2,"b":3}"#)?.serialized() == #"{"b":1,"a":2,"b":3}"#)
    }

    @Test("a canonical text serializes back to the same bytes", arguments: [
        #"{"a":[1,-2,3.5,true,false,null],"b":{"c":"d"},"e":"","f":[[],{}]}"#,
        #"{"kind":"identitytoolkit#VerifyPasswordResponse","idToken":"x.y.z","expiresIn":"3600","registered":true}"#,
        #""\u003c\u2028\\\"\u0000""#, "-1.5", "1e+300", "[]",
    ])
    func canonicalRoundTrip(text: String) throws {
        let v = try #require(parsed(text))
        #expect(v.serialized() == text)
    }

    @Test("other spellings serialize canonically and parse back to the same value", arguments: [
        (" [ 1 , 2 ] ", "[1,2]"), (#""\u0041\/\u00e9""#, #""A/é""#), ("1E3", "1000"), ("-0.0", "0"), ("1.50", "1.5"),
        (#"{"a" : "\ud83d\ude00"}"#, #"{"a":"😀"}"#), ("[1e-400]", "[0]"), (#""\b\f""#, #""\u0008\u000c""#),
    ])
    func normalizingRoundTrip(text: String, canonical: String) throws {
        let v = try #require(parsed(text))
        #expect(v.serialized() == canonical)
        #expect(parsed(canonical) == v)
    }

    @Test("every code point class survives serialize → parse")
    func stringRoundTrip() {
        var s = String((0..<0x80).map { Character(UnicodeScalar(UInt8($0))) })
        s += "é€😀\u{2028}\u{2029}\u{FFFF}\u{10FFFF}\u{E000}"
        let v = JSON.object([(s, .string(s))])
        #expect(parsed(v.serialized()) == v)
    }
}
