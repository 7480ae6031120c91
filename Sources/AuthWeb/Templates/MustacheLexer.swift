/// The byte-level reading of `MustacheParser`: text up to a tag or a line break, tag names,
/// and the standalone-line test.
extension MustacheParser {
    /// Spaces and tabs at the read position.
    mutating func readBlanks() -> ArraySlice<UInt8> {
        let start = pos
        while pos < bytes.count, bytes[pos] == 0x20 || bytes[pos] == 0x09 { pos += 1 }
        return bytes[start..<pos]
    }

    /// The length of the line break (`\n` or `\r\n`) at `at`, if there is one.
    func lineBreak(at i: Int) -> Int? {
        guard i < bytes.count else { return nil }
        if bytes[i] == 0x0A { return 1 }
        if bytes[i] == 0x0D, i + 1 < bytes.count, bytes[i + 1] == 0x0A { return 2 }
        return nil
    }

    /// Text up to a line break (left unread) or an opening `{{` (consumed), or to the end.
    mutating func readText() -> [UInt8] {
        let start = pos
        while pos < bytes.count {
            if lineBreak(at: pos) != nil { return Array(bytes[start..<pos]) }
            if bytes[pos] == 0x7B, pos + 1 < bytes.count, bytes[pos + 1] == 0x7B {
                let text = Array(bytes[start..<pos])
                pos += 2
                return text
            }
            pos += 1
        }
        return Array(bytes[start..<pos])
    }

    /// Whether the tag just read stands alone on its line (only blanks after it up to a line break
    /// or the end, and nothing but blanks before it); if so the rest of the line is consumed.
    /// Only `\n` and `\r\n` end a line, as in `readText`.
    mutating func standalone(_ newLine: Bool) -> Bool {
        guard newLine else { return false }
        var i = pos
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        if i == bytes.count {
            pos = i
            return true
        }
        guard let n = lineBreak(at: i) else { return false }
        pos = i + n
        return true
    }

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }

    private static func isNameByte(_ b: UInt8, slash: Bool) -> Bool {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "?"), UInt8(ascii: "*"),
             UInt8(ascii: "("), UInt8(ascii: ")"):
            return true
        case UInt8(ascii: "/"): return slash
        default: return false
        }
    }

    private mutating func readName(slash: Bool) throws -> String {
        while pos < bytes.count, Self.isSpace(bytes[pos]) { pos += 1 }
        let start = pos
        while pos < bytes.count, Self.isNameByte(bytes[pos], slash: slash) { pos += 1 }
        let name = String(decoding: bytes[start..<pos], as: UTF8.self)
        while pos < bytes.count, Self.isSpace(bytes[pos]) { pos += 1 }
        guard pos + 1 < bytes.count, bytes[pos] == 0x7D, bytes[pos + 1] == 0x7D else { throw fail("unfinished tag") }
        pos += 2
        if name.contains("(") || name.contains(")") || name.contains("*") { throw fail("transforms and dynamic names are not supported") }
        return name
    }

    /// A variable, section or block name, then `}}`.
    mutating func readName() throws -> String { try readName(slash: false) }

    /// A partial or parent name (may contain `/`), then `}}`.
    mutating func readPartialName() throws -> String { try readName(slash: true) }

    /// Everything up to and including the comment's `}}`.
    mutating func skipComment() throws {
        while pos + 1 < bytes.count {
            if bytes[pos] == 0x7D, bytes[pos + 1] == 0x7D { pos += 2; return }
            pos += 1
        }
        throw fail("unfinished comment")
    }
}
