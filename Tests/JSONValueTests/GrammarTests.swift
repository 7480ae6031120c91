import JSONValue
import Testing

/// RFC 8259 §2–§6: literals, numbers, whitespace, structure and what may follow a value. The
/// refusals name the byte offset and reason, since the error text reaches API clients.
@Suite("JSON grammar")
struct GrammarTests {
    @Test("the three literals, and any value at the top level (RFC 8259 allows scalars there)")
    func literals() {
        #expect(parsed("true") == .bool(true))
        #expect(parsed("false") == .bool(false))
        #expect(parsed("null") == .null)
        #expect(parsed("7") == .number(7))
        #expect(parsed(#""s""#) == .string("s"))
        #expect(parsed("[]") == .array([]))
        #expect(parsed("{}") == .object([]))
    }

    @Test("misspelt, truncated or capitalised literals are refused where they go wrong", arguments: [
        ("tru", 3, "Invalid literal"), ("trUe", 2, "Invalid literal"), ("fals", 4, "Invalid literal"), ("nul", 3, "Invalid literal"),
        ("nulL", 3, "Invalid literal"), ("True", 0, "Unexpected character"), ("NULL", 0, "Unexpected character"),
        ("NaN", 0, "Unexpected character"), ("Infinity", 0, "Unexpected character"), ("undefined", 0, "Unexpected character"),
        ("nulls", 4, "Unexpected trailing data"), ("truefalse", 4, "Unexpected trailing data"),
    ])
    func badLiterals(text: String, offset: Int, reason: String) {
        #expect(refusal(text) == .syntax(offset: offset, reason: reason), "\(text)")
    }

    @Test("every number form of the grammar: sign, zero, fraction, exponent with either case and sign", arguments: [
        ("0", 0.0), ("-0", -0.0), ("1", 1), ("-1", -1), ("1234567890", 1_234_567_890), ("0.5", 0.5), ("-0.5", -0.5), ("1.25", 1.25),
        ("1e3", 1000), ("1E3", 1000), ("1e+3", 1000), ("1e-3", 0.001), ("1.5e2", 150), ("-1.5E-2", -0.015), ("0e0", 0),
        ("0.0", 0), ("10e00", 10), ("1.7976931348623157e308", .greatestFiniteMagnitude), ("5e-324", .leastNonzeroMagnitude),
        ("9007199254740993", 0x1p53),
    ] as [(String, Double)])
    func numbers(text: String, value: Double) {
        let n = parsed(text)?.doubleValue
        #expect(n == value, "\(text) → \(String(describing: n))")
        #expect(n?.sign == value.sign, "\(text) keeps its sign")
    }

    @Test("a number whose magnitude is below Double's smallest is read as zero, not refused")
    func underflow() {
        #expect(parsed("1e-400") == .number(0))
        #expect(parsed("-1e-400")?.doubleValue?.sign == .minus)
    }

    @Test("number forms outside the grammar are refused where they go wrong", arguments: [
        // Leading zeros: the zero is a whole number, the rest is trailing data.
        ("01", 1, "Unexpected trailing data"), ("00", 1, "Unexpected trailing data"), ("-01", 2, "Unexpected trailing data"),
        ("0x10", 1, "Unexpected trailing data"), ("1.5.", 3, "Unexpected trailing data"), ("1 000", 2, "Unexpected trailing data"),
        // A sign needs digits, a point needs digits after it, an exponent needs digits.
        ("-", 1, "Invalid number"), ("- 1", 1, "Invalid number"), ("-.5", 1, "Invalid number"), ("-a", 1, "Invalid number"),
        ("1.", 2, "Invalid number"), ("1.e3", 2, "Invalid number"), ("1e", 2, "Invalid number"), ("1e+", 3, "Invalid number"),
        ("1E-", 3, "Invalid number"), ("1ee3", 2, "Invalid number"), ("[1.]", 3, "Invalid number"),
        // Forms other languages accept.
        (".5", 0, "Unexpected character"), ("+1", 0, "Unexpected character"), ("-Infinity", 1, "Invalid number"),
    ])
    func badNumbers(text: String, offset: Int, reason: String) {
        #expect(refusal(text) == .syntax(offset: offset, reason: reason), "\(text)")
    }

    @Test("numbers beyond Double's range are refused rather than read as infinity", arguments: [
        "1e309", "-1e309", "1.8e308", "1E+400", "9999e90919", "1" + String(repeating: "0", count: 309), "[-2E+400]",
    ])
    func outOfRange(text: String) {
        // The offset is the end of the number, whatever its length.
        let end = text.utf8.count - (text.hasPrefix("[") ? 1 : 0)
        #expect(refusal(text) == .syntax(offset: end, reason: "Number out of range"), "\(text)")
    }

    @Test("space, tab, LF and CR are whitespace around and inside values")
    func whitespace() {
        #expect(parsed(" \t\n\r1 \t\n\r") == .number(1))
        #expect(parsed("[ 1 ,\t2\n]") == .array([.number(1), .number(2)]))
        #expect(parsed("{\r\n \"a\" \t:\n1 , \"b\":[ ] }") == .object([("a", .number(1)), ("b", .array([]))]))
        #expect(parsed("[\n]") == .array([]))
        #expect(parsed("{ }") == .object([]))
    }

    @Test("other white characters are not whitespace in JSON, nor is a byte order mark", arguments: [
        ("\u{0C}1", 0, "Unexpected character"), ("\u{0B}1", 0, "Unexpected character"), ("\u{A0}1", 0, "Unexpected character"),
        ("[1,\u{2003}2]", 3, "Unexpected character"), ("\u{FEFF}1", 0, "Unexpected character"), ("1\u{0C}", 1, "Unexpected trailing data"),
    ])
    func notWhitespace(text: String, offset: Int, reason: String) {
        #expect(refusal(text) == .syntax(offset: offset, reason: reason), "\(Array(text.utf8))")
    }

    @Test("empty or blank input is the end of input")
    func empty() {
        #expect(refusal("") == .syntax(offset: 0, reason: "Unexpected end of input"))
        #expect(refusal(" \n\t") == .syntax(offset: 3, reason: "Unexpected end of input"))
    }

    @Test("nested arrays and objects build the value they spell")
    func structure() {
        let v = parsed(#"{"a":[1,{"b":null}],"c":{},"d":[[]],"e":"f"}"#)
        #expect(v == .object([
            ("a", .array([.number(1), .object([("b", .null)])])),
            ("c", .object([])),
            ("d", .array([.array([])])),
            ("e", .string("f")),
        ]))
    }

    @Test("broken arrays and objects are refused where they go wrong", arguments: [
        ("[", 1, "Unexpected end of input"), ("[1", 2, "Unexpected end of input"), ("[1,", 3, "Unexpected end of input"),
        ("[1,]", 3, "Unexpected character"), ("[,1]", 1, "Unexpected character"), ("[1 2]", 3, "Expected ',' or ']'"),
        ("[1:2]", 2, "Expected ',' or ']'"), ("[1}", 2, "Expected ',' or ']'"),
        ("{", 1, "Expected a string key"), (#"{"a"}"#, 4, "Expected ':'"), (#"{"a" 1}"#, 5, "Expected ':'"),
        (#"{"a":}"#, 5, "Unexpected character"), (#"{"a":1,}"#, 7, "Expected a string key"),
        (#"{"a":1 "b":2}"#, 7, "Expected ',' or '}'"), (#"{"a":1]"#, 6, "Expected ',' or '}'"), (#"{"a":1"#, 6, "Unexpected end of input"),
        ("{'a':1}", 1, "Expected a string key"), ("{a:1}", 1, "Expected a string key"), ("{1:1}", 1, "Expected a string key"),
        ("{,}", 1, "Expected a string key"), ("]", 0, "Unexpected character"), ("}", 0, "Unexpected character"),
        (":", 0, "Unexpected character"), (",", 0, "Unexpected character"),
    ])
    func badStructure(text: String, offset: Int, reason: String) {
        #expect(refusal(text) == .syntax(offset: offset, reason: reason), "\(text)")
    }

    @Test("nothing but whitespace may follow the value", arguments: [
        ("[1]]", 3), ("{}{}", 2), ("1 2", 2), ("null x", 5), (#""a""b""#, 3), ("[1]//", 3), ("{} ,", 3), ("0\u{0}", 1),
    ])
    func trailingData(text: String, offset: Int) {
        #expect(refusal(text) == .syntax(offset: offset, reason: "Unexpected trailing data"), "\(text)")
    }

    @Test("comments are not JSON")
    func comments() {
        #expect(refusal("/* x */ 1") == .syntax(offset: 0, reason: "Unexpected character"))
        #expect(refusal("[1, // x\n2]") == .syntax(offset: 4, reason: "Unexpected character"))
    }

    @Test("bytes that are not ASCII outside strings are refused, not decoded")
    func rawBytesOutsideStrings() {
        #expect(refusal([0xC3, 0xA9]) == .syntax(offset: 0, reason: "Unexpected character"))
        #expect(refusal([0x5B, 0xFF, 0x5D]) == .syntax(offset: 1, reason: "Unexpected character"))
    }

    @Test("the error says what and where, as API clients see it")
    func descriptions() {
        #expect(JSONError.syntax(offset: 3, reason: "Unexpected trailing data").description == "Unexpected trailing data at byte 3")
        #expect(JSONError.tooLarge(limit: 10).description == "JSON payload larger than 10 bytes")
        #expect(JSONError.tooDeep(limit: 4).description == "JSON nested deeper than 4 levels")
    }
}
