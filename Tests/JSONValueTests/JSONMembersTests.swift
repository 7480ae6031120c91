import JSONValue
import Testing

/// `JSONMembers`: the member scan verify uses on JWS headers and claims.
@Suite("JSON member scan")
struct JSONMembersTests {
    /// name → raw value text of every member, or nil when the scan leaves the text to the parser.
    func members(_ text: String, maxDepth: Int = 16) -> [(String, String)]? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { b in
            var out: [(String, String)] = []
            let ok = JSONMembers.scan(b, limits: JSONLimits(maxBytes: 4096, maxDepth: maxDepth)) { n, v in
                out.append((String(decoding: b[n], as: UTF8.self), String(decoding: b[v], as: UTF8.self)))
            }
            return ok == true ? out : nil
        }
    }

    @Test("reports each member's raw value, nested values whole, duplicates in order")
    func scans() {
        let m = members(#" { "iss" : "a", "n": -1.5e3, "o": {"x": [1, {"y": null}], "z": "\"q\u00e9"}, "t": true, "iss": "b" } "#)
        #expect(m?.map(\.0) == ["iss", "n", "o", "t", "iss"])
        #expect(m?[2].1 == #"{"x": [1, {"y": null}], "z": "\"q\u00e9"}"#)
        #expect(members("{}")?.isEmpty == true)
        #expect(members(#"{"é":"ü"}"#)?.first?.1 == #""ü""#)
    }

    @Test("refuses malformed text and leaves unusual text to the parser", arguments: [
        "", "[]", "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1}x"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":tru}"#,
        #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, #"{"\u0061":1}"#, "{\"a\":\"\u{01}\"}", #"{"a":[1,]}"#, #"{"a":{"b":1,}}"#,
        // Beyond Double's range: the parser refuses them, so a token holding one is not valid.
        #"{"":9999e90919 }"#, #"{"a":1e309}"#, #"{"a":[-2E+400]}"#, "{\"a\":1\(String(repeating: "0", count: 309))}",
    ])
    func refuses(text: String) {
        #expect(members(text) == nil)
    }

    @Test("refuses invalid UTF-8 and nesting beyond the limit")
    func limits() {
        let bad: [UInt8] = Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        let ok = bad.withUnsafeBufferPointer { JSONMembers.scan($0, limits: JSONLimits(maxBytes: 100, maxDepth: 4)) { _, _ in } }
        #expect(ok == nil)
        #expect(members(#"{"a":{"b":{"c":1}}}"#, maxDepth: 2) == nil)
        #expect(members(#"{"a":{"b":{"c":1}}}"#, maxDepth: 3) != nil)
        #expect(members(#"{"a":[[]]}"#, maxDepth: 2) == nil)
    }

    @Test("the scan and the parser apply the same limits: a text within them is read by both, past them by neither")
    func sameLimitsAsParser() {
        let texts = [#"{"a":{"b":{"c":1}}}"#, #"{"a":[[[]]]}"#, #"{"a":1}"#, #"{}"#, #"{"a":[{"b":[1]}]}"#]
        for text in texts {
            for depth in 1...5 {
                for maxBytes in [text.utf8.count - 1, text.utf8.count] {
                    let limits = JSONLimits(maxBytes: maxBytes, maxDepth: depth)
                    let scanned = Array(text.utf8).withUnsafeBufferPointer { JSONMembers.scan($0, limits: limits) { _, _ in } }
                    let parsed = (try? JSONParser(limits).parse(text)) != nil
                    #expect((scanned == true) == parsed, "\(text) at \(limits)")
                }
            }
        }
    }

    @Test("plain strings and integers only; escapes and fractions are left to the parser")
    func values() {
        let text = Array(#"{"s":"RS256","e":"a\"b","i":1700000000,"f":1.5,"x":1e3,"n":-42,"q":"7"}"#.utf8)
        text.withUnsafeBufferPointer { b in
            var v: [String: Range<Int>] = [:]
            _ = JSONMembers.scan(b, limits: JSONLimits(maxBytes: 4096, maxDepth: 4)) { n, r in v[String(decoding: b[n], as: UTF8.self)] = r }
            #expect(JSONMembers.plainString(b, v["s"]!) == "RS256")
            #expect(JSONMembers.plainString(b, v["e"]!) == nil && JSONMembers.isString(b, v["e"]!))
            #expect(JSONMembers.plainInteger(b, v["i"]!) == 1_700_000_000)
            #expect(JSONMembers.plainInteger(b, v["f"]!) == nil && JSONMembers.plainInteger(b, v["x"]!) == nil)
            #expect(JSONMembers.plainInteger(b, v["n"]!) == -42 && JSONMembers.plainInteger(b, v["q"]!) == nil)
            #expect(JSONMembers.plainString(b, v["i"]!) == nil && !JSONMembers.isString(b, v["i"]!))
        }
    }
}
