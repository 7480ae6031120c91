@testable import FastCGI
import HTTP
import Testing

/// `CGIParams`: which meta-variables are kept, and how `HTTP_*` ones become header names.
@Suite("CGI params")
struct ParamsTests {
    @Test("every meta-variable Gatehouse uses is kept by name")
    func metaVariables() {
        let p = cgiParams([
            "REQUEST_METHOD=POST", "CONTENT_TYPE=application/json", "CONTENT_LENGTH=12", "REQUEST_URI=/a%20b?q=1",
            "DOCUMENT_URI=/a b", "SCRIPT_NAME=/s", "PATH_INFO=/i", "QUERY_STRING=q=1", "HTTPS=on", "REQUEST_SCHEME=https",
            "SERVER_NAME=auth.example.com", "REMOTE_ADDR=203.0.113.9", "REQUEST_ID=0123456789abcdef",
        ])
        let expected: [(CGIParams.Meta, String)] = [
            (.requestMethod, "POST"), (.contentType, "application/json"), (.contentLength, "12"), (.requestURI, "/a%20b?q=1"),
            (.documentURI, "/a b"), (.scriptName, "/s"), (.pathInfo, "/i"), (.queryString, "q=1"), (.https, "on"),
            (.requestScheme, "https"), (.serverName, "auth.example.com"), (.remoteAddr, "203.0.113.9"), (.requestID, "0123456789abcdef"),
        ]
        #expect(expected.count == CGIParams.Meta.allCases.count)
        for (meta, value) in expected { #expect(p[meta] == value, "\(meta)") }
        #expect(p.headers.isEmpty)
    }

    @Test("HTTP_* variables become lower-case header names with - for _")
    func headers() {
        let p = cgiParams(["HTTP_HOST=auth.example.com", "HTTP_X_FIREBASE_LOCALE=fr", "HTTP_COOKIE=a=1; b=2", "HTTP_ACCEPT_LANGUAGE=de-DE,de;q=0.9"])
        #expect(p.headers == ["host": "auth.example.com", "x-firebase-locale": "fr", "cookie": "a=1; b=2", "accept-language": "de-DE,de;q=0.9"])
    }

    @Test("a header name with non-ASCII letters is lower-cased as a whole")
    func nonASCIIHeader() {
        #expect(cgiParams(["HTTP_X_ÉTÉ=1"]).headers == ["x-été": "1"])
    }

    @Test("other variables, other spellings and entries without = are skipped")
    func skipped() {
        let p = cgiParams([
            "SERVER_PORT=443", "GATEWAY_INTERFACE=CGI/1.1", "FCGI_ROLE=RESPONDER", "request_method=POST", "REQUEST_METHODX=POST",
            "REQUEST=POST", "REQUEST_METHOD", "REMOTE_ADDRESS_THAT_IS_LONG=1", "http_host=evil", "HTTP=x",
        ])
        for meta in CGIParams.Meta.allCases { #expect(p[meta] == nil, "\(meta)") }
        #expect(p.headers.isEmpty)
    }

    @Test("a value is everything after the first =, and may be empty")
    func values() {
        let p = cgiParams(["QUERY_STRING=a=b=c&d=", "CONTENT_TYPE=", "HTTP_X_EMPTY="])
        #expect(p[.queryString] == "a=b=c&d=")
        #expect(p[.contentType] == "")
        #expect(p.headers == ["x-empty": ""])
    }

    @Test("the dictionary form reads the same as the envp form")
    func dictionaryForm() {
        let entries = ["REQUEST_METHOD=PUT", "HTTP_X_A_B=1", "REMOTE_ADDR=::1", "OTHER=x"]
        let fromEnvp = cgiParams(entries)
        let dict = withEnvp(entries) { FastCGIServer.params($0) }
        #expect(dict == ["REQUEST_METHOD": "PUT", "HTTP_X_A_B": "1", "REMOTE_ADDR": "::1", "OTHER": "x"])
        let fromDict = CGIParams(dict)
        #expect(fromDict.headers == fromEnvp.headers && fromDict.headers == ["x-a-b": "1"])
        for meta in CGIParams.Meta.allCases { #expect(fromDict[meta] == fromEnvp[meta]) }
    }
}
