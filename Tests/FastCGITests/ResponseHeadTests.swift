@testable import FastCGI
import HTTP
import Testing

/// `encode` / `encodeHead`: the CGI response nginx turns into the HTTP response.
@Suite("Response head encoding")
struct ResponseHeadTests {
    func text(_ r: Response, includeBody: Bool = true) -> String {
        String(decoding: FastCGIServer.encode(r, includeBody: includeBody), as: UTF8.self)
    }

    @Test("Status line with the reason, headers in order, Content-Length, blank line, body")
    func basic() {
        let r = Response(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body: Array("{}".utf8))
        #expect(text(r) == "Status: 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nContent-Length: 2\r\n\r\n{}")
    }

    @Test("without the body (HEAD) the head is the same, Content-Length included")
    func headOnly() {
        let r = Response.text("hello")
        #expect(text(r, includeBody: false) == "Status: 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\n")
    }

    @Test("statuses with and without a known reason, and out of the three-digit range", arguments: [
        (303, "Status: 303 See Other"), (413, "Status: 413 Payload Too Large"), (418, "Status: 418 Status 418"),
        (99, "Status: 99 Status 99"), (1000, "Status: 1000 Status 1000"), (-1, "Status: -1 Status -1"),
    ])
    func statusLine(status: Int, line: String) {
        #expect(text(Response(status: status)).hasPrefix(line + "\r\n"))
    }

    @Test("every Set-Cookie is its own header line, in order")
    func cookies() {
        var r = Response.redirect(to: "/next")
        r.addCookie(Cookie(name: "__Host-a", value: "1", maxAge: 60))
        r.addCookie(Cookie.expired("b"))
        #expect(text(r) == "Status: 303 See Other\r\nLocation: /next\r\nCache-Control: no-store\r\n"
            + "Set-Cookie: __Host-a=1; Path=/; Max-Age=60; Secure; HttpOnly; SameSite=Lax\r\n"
            + "Set-Cookie: \(Cookie.expired("b").headerValue)\r\nContent-Length: 0\r\n\r\n")
    }

    @Test("CR and LF are dropped from header values, so no header or body can be injected")
    func splitting() {
        let r = Response(status: 302, headers: [("Location", "/x\r\nSet-Cookie: evil=1\r\n\r\n<html>"), ("X-A", "\n"), ("X-B", "a\rb")])
        #expect(text(r) == "Status: 302 Found\r\nLocation: /xSet-Cookie: evil=1<html>\r\nX-A: \r\nX-B: ab\r\nContent-Length: 0\r\n\r\n")
    }

    @Test("a Content-Length the handler set is kept and not repeated, whatever its case")
    func ownLength() {
        #expect(text(Response(status: 200, headers: [("content-LENGTH", "5")], body: [])) == "Status: 200 OK\r\ncontent-LENGTH: 5\r\n\r\n")
    }

    @Test("an empty 204 has no Content-Length; an empty 200 has Content-Length: 0")
    func emptyBodies() {
        #expect(text(Response(status: 204)) == "Status: 204 No Content\r\n\r\n")
        #expect(text(Response(status: 200)) == "Status: 200 OK\r\nContent-Length: 0\r\n\r\n")
    }

    @Test("non-ASCII header values and binary bodies pass through byte for byte")
    func bytes() {
        let body: [UInt8] = [0, 0xFF, 0x0D, 0x0A]
        let out = FastCGIServer.encode(Response(status: 200, headers: [("X-Name", "Zoë")], body: body), includeBody: true)
        #expect(out == Array("Status: 200 OK\r\nX-Name: Zoë\r\nContent-Length: 4\r\n\r\n".utf8) + body)
    }

    @Test("encodeHead appends to what the buffer holds, as the worker reuses it")
    func appends() {
        var out: [UInt8] = Array("x".utf8)
        FastCGIServer.encodeHead(Response(status: 204), into: &out)
        #expect(out == Array("xStatus: 204 No Content\r\n\r\n".utf8))
    }
}
