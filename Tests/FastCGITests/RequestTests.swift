@testable import FastCGI
import HTTP
import Testing

/// How a `Request` is derived from the params nginx sends (RFC 3875 meta-variables).
@Suite("Request from params")
struct RequestTests {
    func request(_ params: [String: String], body: [UInt8] = []) -> Request { FastCGIServer.request(params: params, body: body) }

    @Test("what nginx sends for a POST becomes the request handlers see")
    func nginxPost() {
        let r = request([
            "REQUEST_METHOD": "POST", "REQUEST_URI": "/v1/accounts:sendOobCode?key=k", "DOCUMENT_URI": "/v1/accounts:sendOobCode",
            "QUERY_STRING": "key=k", "CONTENT_TYPE": "application/json; charset=utf-8", "CONTENT_LENGTH": "2",
            "REMOTE_ADDR": "203.0.113.9", "HTTPS": "on", "SERVER_NAME": "_", "HTTP_HOST": "auth.example.com",
            "HTTP_X_FIREBASE_LOCALE": "fr", "REQUEST_ID": "5f0c1a2b3c4d5e6f708192a3b4c5d6e7",
        ], body: Array("{}".utf8))
        #expect(r.method == "POST")
        #expect(r.path == "/v1/accounts:sendOobCode")
        #expect(r.rawQuery == "key=k" && r.query("key") == "k")
        #expect(r.contentType == "application/json")
        #expect(r.headers == ["content-type": "application/json; charset=utf-8", "content-length": "2", "host": "auth.example.com",
                              "x-firebase-locale": "fr"])
        #expect(r.header("X-Firebase-Locale") == "fr")
        #expect(r.remoteAddress == "203.0.113.9")
        #expect(r.isHTTPS && r.host == "auth.example.com" && r.origin == "https://auth.example.com")
        #expect(r.requestID == "5f0c1a2b3c4d5e6f708192a3b4c5d6e7")
        #expect(r.body == Array("{}".utf8))
    }

    @Test("with no params at all: GET /, no query, no headers, plain HTTP on localhost, request id -")
    func defaults() {
        let r = request([:])
        #expect(r.method == "GET" && r.path == "/" && r.rawQuery == "" && r.headers.isEmpty)
        #expect(r.remoteAddress == "" && !r.isHTTPS && r.host == "localhost" && r.requestID == "-")
    }

    @Test("the method is upper-cased")
    func method() {
        #expect(request(["REQUEST_METHOD": "delete"]).method == "DELETE")
    }

    @Test("the path: DOCUMENT_URI, else SCRIPT_NAME + PATH_INFO, else REQUEST_URI's path percent-decoded", arguments: [
        (["DOCUMENT_URI": "/d", "SCRIPT_NAME": "/s", "REQUEST_URI": "/r"], "/d"),
        (["SCRIPT_NAME": "/s", "PATH_INFO": "/p", "REQUEST_URI": "/r"], "/s/p"),
        (["PATH_INFO": "/p"], "/p"),
        (["REQUEST_URI": "/a%20b+c/%E2%9C%93?x=1"], "/a b+c/✓"),
        (["DOCUMENT_URI": "", "REQUEST_URI": "/r?q"], "/r"),
    ] as [([String: String], String)])
    func path(params: [String: String], expected: String) {
        #expect(request(params).path == expected)
    }

    @Test("the query: QUERY_STRING, else what follows ? in REQUEST_URI", arguments: [
        (["QUERY_STRING": "a=1", "REQUEST_URI": "/x?b=2"], "a=1"),
        (["REQUEST_URI": "/x?b=2&c=%20"], "b=2&c=%20"),
        (["REQUEST_URI": "/x?"], ""),
        (["REQUEST_URI": "/x?a?b"], "a?b"),
        (["QUERY_STRING": "", "REQUEST_URI": "/x?b=2"], ""),
    ] as [([String: String], String)])
    func query(params: [String: String], expected: String) {
        #expect(request(params).rawQuery == expected)
    }

    @Test("HTTPS: HTTPS=on in any case, or REQUEST_SCHEME=https", arguments: [
        (["HTTPS": "on"], true), (["HTTPS": "ON"], true), (["REQUEST_SCHEME": "https"], true), (["HTTPS": "off"], false),
        (["HTTPS": ""], false), (["HTTPS": "1"], false), (["REQUEST_SCHEME": "http"], false), ([:], false),
    ] as [([String: String], Bool)])
    func https(params: [String: String], expected: Bool) {
        #expect(request(params).isHTTPS == expected)
    }

    @Test("the host: the Host header, else SERVER_NAME, else localhost")
    func host() {
        #expect(request(["HTTP_HOST": "a.example", "SERVER_NAME": "b.example"]).host == "a.example")
        #expect(request(["SERVER_NAME": "b.example"]).host == "b.example")
        #expect(request(["SERVER_NAME": "b.example"]).origin == "http://b.example")
    }

    @Test("empty CONTENT_TYPE and CONTENT_LENGTH add no header")
    func emptyContentHeaders() {
        #expect(request(["CONTENT_TYPE": "", "CONTENT_LENGTH": ""]).headers.isEmpty)
    }

    @Test("the request id is nginx's REQUEST_ID made loggable, never the client's X-Request-Id")
    func requestID() {
        #expect(request(["HTTP_X_REQUEST_ID": "client"]).requestID == "-")
        #expect(request(["REQUEST_ID": "a b\nc"]).requestID == "a?b?c")
        #expect(request(["REQUEST_ID": String(repeating: "x", count: 80)]).requestID == String(repeating: "x", count: 64))
        let r = request(["REQUEST_ID": "abc", "HTTP_X_REQUEST_ID": "mine"])
        #expect(r.logID == "abc client-id=mine")
    }
}
