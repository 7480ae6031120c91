import JSONValue
import Testing

/// `maxBytes` and `maxDepth`: hostile bodies are refused before they cost memory or stack.
@Suite("JSON size and depth limits")
struct LimitTests {
    /// Request bodies are parsed with the web layer's own limit; the default is for stored text.
    @Test("the defaults are 1 MiB and 32 levels")
    func defaults() {
        #expect(JSONParser().maxBytes == 1 << 20)
        #expect(JSONParser().maxDepth == 32)
    }

    @Test("a text of exactly maxBytes parses; one byte more is refused before parsing")
    func size() {
        let p = JSONParser(maxBytes: 16, maxDepth: 4)
        let at = "\"" + String(repeating: "x", count: 14) + "\""
        #expect(at.utf8.count == 16)
        #expect(parsed(at, p) == .string(String(repeating: "x", count: 14)))
        #expect(refusal(at + " ", p) == .tooLarge(limit: 16))
        // Refused for its size even when it would not parse anyway.
        #expect(refusal(String(repeating: "}", count: 17), p) == .tooLarge(limit: 16))
        #expect(refusal(String(repeating: "}", count: 16), p) == .syntax(offset: 0, reason: "Unexpected character"))
    }

    @Test("the size is counted in bytes, not characters")
    func sizeInBytes() {
        let p = JSONParser(maxBytes: 8, maxDepth: 4)
        #expect(parsed("\"ééé\"", p) == .string("ééé"))  // 8 bytes
        #expect(refusal("\"éééé\"", p) == .tooLarge(limit: 8))  // 5 characters, 10 bytes
    }

    @Test("maxBytes 0 refuses any text")
    func zeroBytes() {
        #expect(refusal("1", JSONParser(maxBytes: 0)) == .tooLarge(limit: 0))
        #expect(refusal("", JSONParser(maxBytes: 0)) == .syntax(offset: 0, reason: "Unexpected end of input"))
    }

    @Test("arrays nested exactly maxDepth deep parse; one level more is refused", arguments: [0, 1, 4, 32])
    func arrayDepth(limit: Int) {
        let p = JSONParser(maxBytes: 1024, maxDepth: limit)
        let at = String(repeating: "[", count: limit) + "1" + String(repeating: "]", count: limit)
        let past = "[" + at + "]"
        #expect(parsed(at, p) != nil)
        #expect(refusal(past, p) == .tooDeep(limit: limit))
    }

    @Test("objects count as arrays do, and mixed nesting counts every level")
    func objectDepth() {
        let p = JSONParser(maxBytes: 1024, maxDepth: 4)
        #expect(parsed(#"{"a":{"b":{"c":{"d":1}}}}"#, p) != nil)
        #expect(refusal(#"{"a":{"b":{"c":{"d":{"e":1}}}}}"#, p) == .tooDeep(limit: 4))
        #expect(parsed(#"[{"a":[{"b":1}]}]"#, p) != nil)
        #expect(refusal(#"[{"a":[{"b":[]}]}]"#, p) == .tooDeep(limit: 4))
        // Empty containers are levels too.
        #expect(refusal(#"[[[[{}]]]]"#, p) == .tooDeep(limit: 4))
    }

    @Test("depth is nesting, not the number of siblings; scalars add no level")
    func siblings() {
        let p = JSONParser(maxBytes: 1024, maxDepth: 2)
        #expect(parsed("[[],[],[1],[\"x\"],{}]", p)?.arrayValue?.count == 5)
        #expect(parsed("\"x\"", JSONParser(maxBytes: 16, maxDepth: 0)) == .string("x"))
    }

    @Test("an unterminated nest deeper than the limit is refused for its depth")
    func deepBeforeEnd() {
        #expect(refusal("[[[[[", JSONParser(maxBytes: 16, maxDepth: 4)) == .tooDeep(limit: 4))
        #expect(refusal("[[[[", JSONParser(maxBytes: 16, maxDepth: 4)) == .syntax(offset: 4, reason: "Unexpected end of input"))
    }

    @Test("a body of nothing but brackets, as large as allowed, is refused without exhausting the stack")
    func hostileDepth() {
        #expect(refusal(String(repeating: "[", count: 65_536)) == .tooDeep(limit: 32))
        #expect(refusal(String(repeating: #"{"a":"#, count: 13_000)) == .tooDeep(limit: 32))
        // Unlimited in size, the depth limit alone still holds.
        #expect(refusal(String(repeating: "[", count: 1_000_000), JSONParser(maxBytes: .max, maxDepth: 32)) == .tooDeep(limit: 32))
    }
}
