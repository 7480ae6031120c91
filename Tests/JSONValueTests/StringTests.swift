import JSONValue
import Testing

/// RFC 8259 §7–§8: escapes, `\u` escapes and surrogate pairs, raw control characters, UTF-8.
@Suite("JSON strings")
struct StringTests {
    @Test("every two-character escape")
    func escapes() {
        #expect(parsed(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{08}\u{0C}\n\r\t"))
        #expect(parsed(#""a\nb""#) == .string("a\nb"))
        #expect(parsed(#""""#) == .string(""))
    }

    @Test("escapes other than the eight of the grammar are refused", arguments: ["x", "'", "a", "0", "v", "U", "e", " "])
    func badEscape(letter: String) {
        // `"\` + letter + `"`: the offset is just past the letter.
        #expect(refusal("\"\\" + letter + "\"") == .syntax(offset: 3, reason: "Invalid escape"))
    }

    @Test("\\u escapes in either case, NUL and the last BMP code point included", arguments: [
        (#""\u0041""#, "A"), (#""\u00e9""#, "é"), (#""\u00E9""#, "é"), (#""\u20AC""#, "€"), (#""\u0000""#, "\u{0}"),
        (#""\u001F""#, "\u{1F}"), (#""\uFFFF""#, "\u{FFFF}"), (#""x\u0022y""#, "x\"y"), (#""\u005C""#, "\\"),
    ])
    func unicodeEscapes(text: String, value: String) {
        #expect(parsed(text) == .string(value))
    }

    @Test("a surrogate pair is one code point outside the BMP", arguments: [
        (#""\ud83d\ude00""#, "😀"), (#""\uD83D\uDE00""#, "😀"), (#""\uD800\uDC00""#, "\u{10000}"), (#""\uDBFF\uDFFF""#, "\u{10FFFF}"),
        (#""a\uD834\uDD1Eb""#, "a𝄞b"),
    ])
    func surrogatePairs(text: String, value: String) {
        #expect(parsed(text) == .string(value))
    }

    @Test("lone, reversed or mismatched surrogates are refused", arguments: [
        (#""\uD800""#, 7, "Lone surrogate"), (#""\uD800abcdef""#, 7, "Lone surrogate"), (#""\uD800\n\u0041""#, 7, "Lone surrogate"),
        (#""\uDC00""#, 7, "Lone surrogate"), (#""\uDFFF""#, 7, "Lone surrogate"), (#""\uDE00\uD83D""#, 7, "Lone surrogate"),
        (#""\uD800\u0041""#, 13, "Invalid surrogate pair"), (#""\uD800\uD800""#, 13, "Invalid surrogate pair"),
        (#""\uD800\uE000""#, 13, "Invalid surrogate pair"), (#""\uD800\uDC0""#, 12, "Invalid \\u escape"),
        (#""\uD800\uDC""#, 7, "Lone surrogate"),
    ])
    func badSurrogates(text: String, offset: Int, reason: String) {
        #expect(refusal(text) == .syntax(offset: offset, reason: reason), "\(text)")
    }

    @Test("short or non-hex \\u escapes are refused", arguments: [
        (#""\u12""#, 3, "Truncated \\u escape"), (#""\u""#, 3, "Truncated \\u escape"), (#""\u12G4""#, 5, "Invalid \\u escape"),
        (#""\u-123""#, 3, "Invalid \\u escape"), (#""\u 123""#, 3, "Invalid \\u escape"), (#""\ug000""#, 3, "Invalid \\u escape"),
    ])
    func badUnicodeEscapes(text: String, offset: Int, reason: String) {
        #expect(refusal(text) == .syntax(offset: offset, reason: reason), "\(text)")
    }

    @Test("a raw control character (U+0000…U+001F) in a string is refused", arguments: 0..<0x20)
    func controlCharacters(byte: Int) {
        #expect(refusal([0x22, UInt8(byte), 0x22]) == .syntax(offset: 1, reason: "Control character in string"))
        // In a key too.
        #expect(refusal([0x7B, 0x22, UInt8(byte), 0x22, 0x3A, 0x31, 0x7D]) == .syntax(offset: 2, reason: "Control character in string"))
    }

    @Test("DEL and every other printable byte may appear raw")
    func rawPrintable() {
        #expect(parsed([0x22, 0x7F, 0x22]) == .string("\u{7F}"))
        let printable = (0x20...0x7E).map(UInt8.init).filter { $0 != 0x22 && $0 != 0x5C }
        #expect(parsed([0x22] + printable + [0x22]) == .string(String(decoding: printable, as: UTF8.self)))
    }

    @Test("unterminated strings and escapes are refused")
    func unterminated() {
        #expect(refusal(#""abc"#) == .syntax(offset: 4, reason: "Unterminated string"))
        #expect(refusal(#""abc\"#) == .syntax(offset: 5, reason: "Unterminated escape"))
        #expect(refusal(#"{"a"#) == .syntax(offset: 3, reason: "Unterminated string"))
    }

    @Test("valid UTF-8 of every length passes through")
    func utf8() {
        #expect(parsed("\"é€😀\u{10FFFF}\"") == .string("é€😀\u{10FFFF}"))
        #expect(parsed("{\"ключ\":\"値\"}")?["ключ"] == .string("値"))
    }

    @Test("invalid UTF-8 in a string is refused", arguments: [
        [0xFF], [0x80], [0xC3, 0x28], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
        [0xF8, 0x88, 0x80, 0x80, 0x80], [0x61, 0xFE, 0x62],
    ] as [[UInt8]])
    func invalidUTF8(bytes: [UInt8]) {
        // The check runs on the whole string, so the offset is just past its closing quote.
        let text = [0x22] + bytes + [0x22]
        #expect(refusal(text) == .syntax(offset: text.count, reason: "Invalid UTF-8 in string"))
    }

    @Test("escapes decode in keys as in values")
    func keys() {
        let v = parsed(#"{"\u0061":1,"b\"c":2}"#)
        #expect(v?.objectValue?.map(\.0) == ["a", "b\"c"])
    }
}
