import HTTP
import JSONValue
import Testing
import TextCoding

@Suite("Query, form and cookie parsing")
struct ParsingTests {
    @Test("query strings decode + as space, %XX as bytes, and keep repeated keys in order")
    func query() {
        let r = Request(method: "get", path: "/x", rawQuery: "a=1&b=hello+world&c=%E2%9C%93&a=2&flag&bad=%zz")
        #expect(r.method == "GET")
        #expect(r.query("a") == "1")
        #expect(r.queryItems.filter { $0.0 == "a" }.map(\.1) == ["1", "2"])
        #expect(r.query("b") == "hello world")
        #expect(r.query("c") == "✓")
        #expect(r.query("flag") == "")
        #expect(r.query("bad") == "%zz")
        #expect(r.query("missing") == nil)
    }

    @Test("form bodies decode like queries and ignore empty pairs")
    func form() {
        let r = Request(method: "POST", path: "/f", headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
                        body: Array("phone=%2B16505550100&&csrf=a%3Db".utf8))
        #expect(r.contentType == "application/x-www-form-urlencoded")
        #expect(r.formField("phone") == "+16505550100")
        #expect(r.formField("csrf") == "a=b")
        #expect(r.formFields.count == 2)
    }

    @Test("percent-encoding round-trips through decoding")
    func encode() {
        let s = "https://a.example/p?q=1&r=é ü"
        #expect(PercentEncoding.decode(PercentEncoding.encode(s)) == s)
        #expect(!PercentEncoding.encode(s).contains("&"))
    }

    @Test("the Cookie header parses name=value pairs; the first occurrence wins; quotes are stripped")
    func cookies() {
        let c = Cookie.parse(header: "a=1; __Host-gatehouse=tok.en; a=2;junk; q=\"quoted\"; =empty")
        #expect(c["a"] == "1")
        #expect(c["__Host-gatehouse"] == "tok.en")
        #expect(c["q"] == "quoted")
        #expect(c.count == 3)
        let r = Request(method: "GET", path: "/", headers: ["Cookie": "x=y"])
        #expect(r.cookies["x"] == "y")
    }

    @Test("Set-Cookie renders every security attribute")
    func setCookie() {
        let c = Cookie(name: "__Host-gatehouse", value: "abc", maxAge: 60)
        #expect(c.headerValue == "__Host-gatehouse=abc; Path=/; Max-Age=60; Secure; HttpOnly; SameSite=Lax")
        #expect(Cookie.expired("s").headerValue.contains("Max-Age=0"))
    }

    @Test("headers are case-insensitive and Host gives the origin")
    func headers() {
        let r = Request(method: "GET", path: "/", headers: ["X-Firebase-Locale": "fr", "Host": "auth.example.com"], isHTTPS: true)
        #expect(r.header("x-firebase-locale") == "fr")
        #expect(r.origin == "https://auth.example.com")
    }
}

@Suite("JSON with limits")
struct JSONTests {
    let parser = JSONParser(maxBytes: 1024, maxDepth: 4)

    @Test("objects keep key order and values round-trip")
    func roundTrip() throws {
        let text = #"{"b":1,"a":[true,false,null],"c":"x\"y\u00e9\ud83d\ude00","d":-1.5e3}"#
        let v = try parser.parse(text)
        #expect(v["b"]?.int64Value == 1)
        #expect(v["c"]?.stringValue == "x\"yé😀")
        #expect(v["d"]?.doubleValue == -1500)
        #expect(v.objectValue?.map(\.0) == ["b", "a", "c", "d"])
        #expect(try parser.parse(v.serialized()) == v)
    }

    @Test("a body over the size limit is refused before parsing")
    func size() {
        #expect(throws: JSONError.tooLarge(limit: 1024)) { try parser.parse(Array(repeating: UInt8(ascii: " "), count: 1025)) }
    }

    @Test("nesting deeper than the limit is refused")
    func depth() {
        #expect(throws: JSONError.tooDeep(limit: 4)) { try parser.parse("[[[[[[1]]]]]]") }
        #expect(throws: JSONError.tooDeep(limit: 4)) { try parser.parse(#"{"a":{"b":{"c":{"d":{"e":1}}}}}"#) }
    }

    @Test("malformed JSON is a syntax error, never a crash", arguments: [
        "", "{", "{\"a\":}", "[1,]", "{'a':1}", "tru", "\"unterminated", "{\"a\":1}x", "01", "1.", "\"\\ud800\"", "\"\u{01}\"", "[1 2]", "nul",
    ])
    func malformed(_ text: String) {
        #expect(throws: JSONError.self) { try parser.parse(text) }
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        #expect(throws: JSONError.self) { try parser.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test("strings serialise with HTML-sensitive characters escaped")
    func escaping() {
        #expect(JSON.string("<script>&\n").serialized() == #""\u003cscript\u003e\u0026\n""#)
        #expect(JSON.number(3600).serialized() == "3600")
    }

    @Test("int64 fields accept numbers and numeric strings")
    func int64() throws {
        #expect(JSON.string("1767225600").int64Value == 1_767_225_600)
        #expect(JSON.number(12.5).int64Value == nil)
    }
}

@Suite("Router")
struct RouterTests {
    @Test("patterns capture path segments, including segments with a :verb suffix")
    func capture() {
        let p = PathPattern("/identitytoolkit.googleapis.com/v1/projects/{project}:createSessionCookie")
        #expect(p.match("/identitytoolkit.googleapis.com/v1/projects/demo-x:createSessionCookie") == ["project": "demo-x"])
        #expect(p.match("/identitytoolkit.googleapis.com/v1/projects/:createSessionCookie") == nil)
        #expect(PathPattern("/v1/projects/{project}/accounts").match("/v1/projects/p1/accounts") == ["project": "p1"])
        #expect(PathPattern("/v1/projects/{project}/accounts").match("/v1/projects/p1:x/accounts") == ["project": "p1:x"])
    }

    @Test("an unknown path is not found, a known path with another method is 405 with the allowed methods")
    func methods() {
        var r = Router<Int>()
        r.add("GET", "/a", 1)
        r.add("POST", "/a", 2)
        r.add("GET", "/b/{id}", 3)
        if case let .found(h, _) = r.match(method: "POST", path: "/a") { #expect(h == 2) } else { Issue.record("no match") }
        if case let .found(h, params) = r.match(method: "HEAD", path: "/b/9") { #expect(h == 3 && params["id"] == "9") } else { Issue.record("HEAD") }
        if case let .methodNotAllowed(allowed) = r.match(method: "DELETE", path: "/a") { #expect(Set(allowed) == ["GET", "POST"]) } else { Issue.record("405") }
        if case .notFound = r.match(method: "GET", path: "/c") {} else { Issue.record("404") }
    }
}
