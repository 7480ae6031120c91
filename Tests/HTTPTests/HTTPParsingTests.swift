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
        #expect(PercentEncoding.encode(s) == "https%3A%2F%2Fa.example%2Fp%3Fq%3D1%26r%3D%C3%A9%20%C3%BC")
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
        #expect(Cookie.expired("s").headerValue == "s=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax")
    }

    @Test("headers are case-insensitive and Host gives the origin")
    func headers() {
        let r = Request(method: "GET", path: "/", headers: ["X-Firebase-Locale": "fr", "Host": "auth.example.com"], isHTTPS: true)
        #expect(r.header("x-firebase-locale") == "fr")
        #expect(r.origin == "https://auth.example.com")
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

    @Test("the literal-path index answers exactly as walking the table does")
    func indexedAsWalked() {
        var walked = Router<Int>()
        let table = [("GET", "/a/{id}"), ("GET", "/a/b"), ("POST", "/a/b"), ("*", "/a/{x}"), ("GET", "/c"), ("GET", "/c/{x}:go"),
                     ("POST", "/c/y:go"), ("GET", "/{any}"), ("DELETE", "/a/b"), ("GET", "relative")]
        for (i, (m, p)) in table.enumerated() { walked.add(m, p, i) }
        var indexed = walked
        indexed.indexLiterals()
        for path in ["/a/b", "/a/c", "/c", "/c/y:go", "/c/z:go", "/q", "/", "relative", "/a/b/c", ""] {
            for method in ["GET", "HEAD", "POST", "DELETE", "PUT"] {
                #expect(indexed.match(method: method, path: path) == walked.match(method: method, path: path), "\(method) \(path)")
            }
        }
    }
}
