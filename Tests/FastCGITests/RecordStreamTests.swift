@testable import FastCGI
import HTTP
import Testing
import Locking

/// Record streams driven through the real responder loop over a socket pair, as nginx writes
/// them and as a broken or hostile writer of the socket might: each ends in a clean answer or a
/// closed connection, never a crash or a hang (every wait in `serve` is bounded).
@Suite("FastCGI record streams", .serialized)
struct RecordStreamTests {
    @Test("a well-formed request is answered with its head and body, then END_REQUEST complete")
    func wellFormed() throws {
        let s = serve(Stream.request(uri: "/a/b?x=1"))
        #expect(s.count == 1)
        #expect(s.requests.map(\.path) == ["/a/b"])
        let reply = try #require(s.reply)
        let answer = try #require(reply.answer())
        #expect(answer.status == "200 OK")
        #expect(answer.headers == ["Content-Type: text/plain", "Content-Length: 10"])
        #expect(answer.text == "GET /a/b 0")
        #expect(reply.ends.map(\.id) == [1] && reply.ends.map(\.appStatus) == [0] && reply.ends.map(\.protocolStatus) == [0])
    }

    @Test("a kept connection serves its requests in turn")
    func keptConnection() throws {
        let s = serve(steps: [Stream.request(id: 1, keep: true, uri: "/one"),
                              Stream.request(id: 2, keep: true, method: "POST", uri: "/two", body: Array("hello".utf8))])
        #expect(s.count == 2)
        #expect(s.requests.map(\.path) == ["/one", "/two"])
        let reply = try #require(s.reply)
        #expect(reply.answer(1)?.text == "GET /one 0")
        #expect(reply.answer(2)?.text == "POST /two 5")
        #expect(reply.ends.map(\.id) == [1, 2])
    }

    @Test("without keep-conn the responder closes after one request and reads no further")
    func notKept() throws {
        let s = serve(steps: [Stream.request(id: 1, uri: "/one"), Stream.request(id: 2, uri: "/two")])
        #expect(s.count == 1)
        #expect(s.requests.map(\.path) == ["/one"])
    }

    @Test("PARAMS and STDIN records with padding (nginx pads to 8 bytes) are read as the protocol says")
    func padding() throws {
        // Padded content records only: libfcgi does not skip the padding of a BEGIN_REQUEST or of
        // the empty record ending PARAMS (it reads it as the next header); nginx pads neither.
        let stream = Stream.begin()
            + Record(.params, id: 1, Stream.pair("REQUEST_METHOD", "PUT") + Stream.pair("DOCUMENT_URI", "/p") + Stream.pair("CONTENT_LENGTH", "2"), padding: 255).bytes
            + Record(.params, id: 1).bytes + Record(.stdin, id: 1, [1, 2], padding: 6).bytes + Record(.stdin, id: 1, padding: 1).bytes
        let s = serve(stream)
        #expect(s.count == 1)
        #expect(s.reply?.answer()?.text == "PUT /p 2")
    }

    @Test("a stream cut inside a record header or body is dropped: no answer, connection closed", arguments: [
        Array(Stream.begin().prefix(5)), Array(Stream.begin().prefix(11)),
        Stream.begin() + Array(Record(.params, id: 1, Stream.pair("REQUEST_METHOD", "GET")).bytes.prefix(12)),
        Stream.begin() + Stream.params([("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "4")]) + Array(Record(.stdin, id: 1, [1, 2, 3, 4]).bytes.prefix(10)),
    ])
    func truncated(stream: [UInt8]) {
        let s = serve(stream)
        #expect(s.count != nil, "the responder did not return")
        #expect(s.requests.isEmpty)
    }

    @Test("a name-value pair longer than its params stream is dropped without calling the handler")
    func pairPastStream() {
        // Declares a 100-byte name but the stream ends after 3.
        let s = serve(Stream.begin() + Record(.params, id: 1, [100, 1, 0x41, 0x42, 0x43]).bytes + Record(.params, id: 1).bytes)
        #expect(s.count == 0)
        #expect(s.requests.isEmpty)
    }

    @Test("a BEGIN_REQUEST of another protocol version ends the connection unanswered", arguments: [0, 2, 255] as [UInt8])
    func wrongVersion(version: UInt8) {
        var begin = Record(.beginRequest, id: 1, [0, 1, 0, 0, 0, 0, 0, 0])
        begin.version = version
        let s = serve(begin.bytes + Stream.params([("REQUEST_METHOD", "GET")]) + Stream.stdin([]))
        #expect(s.count == 0 && s.requests.isEmpty)
        #expect(s.reply?.records.isEmpty == true)
    }

    @Test("a management record of an unknown type gets UNKNOWN_TYPE back, and the request after it is served")
    func unknownManagementType() throws {
        let s = serve(Record(rawType: 42, id: 0).bytes + Stream.request(uri: "/after"))
        #expect(s.count == 1)
        let reply = try #require(s.reply)
        let unknown = reply.records.filter { $0.type == RecordType.unknownType.rawValue }
        #expect(unknown.map(\.requestID) == [0] && unknown.map(\.content) == [[42, 0, 0, 0, 0, 0, 0, 0]])
        #expect(reply.answer()?.text == "GET /after 0")
    }

    @Test("an unknown management record with content: libfcgi answers UNKNOWN_TYPE, then loses its place and closes")
    func unknownManagementTypeWithContent() throws {
        // libfcgi does not skip the content of a management record it does not know, and reads
        // it as the next header; nginx never sends one.
        let s = serve(Record(rawType: 42, id: 0, [1, 2, 3]).bytes + Stream.request(uri: "/after"))
        #expect(s.count == 0 && s.requests.isEmpty)
        #expect(s.reply?.records.map(\.type) == [RecordType.unknownType.rawValue])
    }

    @Test("GET_VALUES is answered with the responder's limits, and the request after it is served")
    func getValues() throws {
        let query = Record(.getValues, id: 0, Stream.pair("FCGI_MAX_CONNS", "") + Stream.pair("FCGI_MPXS_CONNS", "")).bytes
        let s = serve(query + Stream.request(uri: "/after"))
        let reply = try #require(s.reply)
        #expect(reply.records.first?.type == RecordType.getValuesResult.rawValue)
        #expect(reply.answer()?.text == "GET /after 0")
    }

    @Test("an unknown role is refused with END_REQUEST UNKNOWN_ROLE and no handler call")
    func unknownRole() throws {
        let s = serve(Stream.begin(role: 9) + Stream.params([("REQUEST_METHOD", "GET")]) + Stream.stdin([]))
        #expect(s.requests.isEmpty)
        // libfcgi closes the connection rather than answering END_REQUEST UNKNOWN_ROLE.
        #expect(s.count == 0)
        #expect(s.reply?.records.isEmpty == true)
    }

    @Test("stream records before any BEGIN_REQUEST end the connection unanswered")
    func strayRecords() throws {
        // libfcgi skips them but stays in its skipping state and misreads the BEGIN_REQUEST.
        let s = serve(Stream.stdin(id: 7, [1, 2]) + Stream.request(uri: "/x"))
        #expect(s.count == 0 && s.requests.isEmpty)
    }

    @Test("a second BEGIN_REQUEST while a request is open is refused with END_REQUEST CANT_MPX_CONN")
    func multiplexing() throws {
        let s = serve(Stream.begin(id: 1) + Stream.begin(id: 2) + Stream.params(id: 1, [("DOCUMENT_URI", "/m")]) + Stream.stdin(id: 1, []))
        let reply = try #require(s.reply)
        #expect(reply.ends.filter { $0.id == 2 }.map(\.protocolStatus) == [1])
        #expect(s.requests.map(\.path) == ["/m"])
    }

    @Test("a body over maxBodyBytes is answered 413 without calling the handler")
    func oversizeBody() throws {
        let body = [UInt8](repeating: 0x61, count: 200)
        let s = serve(Stream.request(method: "POST", uri: "/big", body: body), maxBodyBytes: 64)
        #expect(s.requests.isEmpty)
        let answer = try #require(s.reply?.answer())
        #expect(answer.status == "413 Payload Too Large")
        #expect(answer.text.contains("PAYLOAD_TOO_LARGE : Request body larger than 64 bytes"))
    }

    @Test("a route with a larger limit of its own reads a body past the default; other routes still refuse it; past its own, 413 naming it")
    func routeLimit() throws {
        let asked = Locked<[String]>([])
        let limit: FastCGIServer.RouteBodyLimit = { method, path in
            asked.with { $0.append(method + " " + path) }
            return path == "/import" ? 256 : 64
        }
        let body = [UInt8](repeating: 0x61, count: 200)
        let imported = serve(Stream.request(method: "POST", uri: "/import?x=1", body: body), maxBodyBytes: 64, routeBodyLimit: limit)
        #expect(imported.requests.map(\.body.count) == [200])
        #expect(imported.reply?.answer()?.text == "POST /import 200")
        let other = serve(Stream.request(method: "POST", uri: "/big", body: body), maxBodyBytes: 64, routeBodyLimit: limit)
        #expect(other.requests.isEmpty)
        #expect(other.reply?.answer()?.text.contains("larger than 64 bytes") == true)
        let past = serve(Stream.request(method: "POST", uri: "/import", body: body + body), maxBodyBytes: 64, routeBodyLimit: limit)
        #expect(past.requests.isEmpty)
        #expect(past.reply?.answer()?.status == "413 Payload Too Large")
        #expect(past.reply?.answer()?.text.contains("larger than 256 bytes") == true)
        // A body within the default limit is read without asking for the route's.
        let small = serve(Stream.request(method: "POST", uri: "/import", body: [UInt8](repeating: 0x61, count: 64)), maxBodyBytes: 64,
                          routeBodyLimit: limit)
        #expect(small.requests.map(\.body.count) == [64])
        #expect(asked.with { $0 } == ["POST /import", "POST /big", "POST /import"])
    }

    @Test("a CONTENT_LENGTH that is not a number is answered 413 without calling the handler")
    func unparsableLength() throws {
        let s = serve(Stream.begin() + Stream.params([("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "12abc"), ("DOCUMENT_URI", "/p")])
                      + Stream.stdin(Array("hello".utf8)))
        #expect(s.requests.isEmpty)
        #expect(s.reply?.answer()?.status == "413 Payload Too Large")
    }

    @Test("a body of exactly maxBodyBytes is read whole")
    func bodyAtLimit() throws {
        let s = serve(Stream.request(method: "POST", uri: "/b", body: [UInt8](repeating: 0x61, count: 64)), maxBodyBytes: 64)
        #expect(s.requests.map(\.body.count) == [64])
        #expect(s.reply?.answer()?.text == "POST /b 64")
    }

    @Test("a body spread over many STDIN records is joined")
    func bodyInPieces() throws {
        let body = Array("0123456789".utf8)
        let stdin = stride(from: 0, to: body.count, by: 3).flatMap { Record(.stdin, id: 1, Array(body[$0..<min($0 + 3, body.count)])).bytes }
        let s = serve(Stream.begin() + Stream.params([("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "10"), ("DOCUMENT_URI", "/p")])
                      + stdin + Record(.stdin, id: 1).bytes)
        #expect(s.requests.map(\.body) == [body])
    }

    @Test("a body shorter than CONTENT_LENGTH is answered 502 without calling the handler")
    func shortBody() throws {
        let s = serve(Stream.begin() + Stream.params([("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "10"), ("DOCUMENT_URI", "/p")])
                      + Stream.stdin(Array("abc".utf8)))
        #expect(s.requests.isEmpty)
        let answer = try #require(s.reply?.answer())
        #expect(answer.status == "502 Bad Gateway")
        #expect(answer.text == "502 Bad Gateway: Gatehouse failed while reading the request body.\n")
    }

    @Test("a body cut short by the end of the connection is answered 502 or dropped, never waited for")
    func bodyCutByClose() throws {
        let s = serve(Stream.begin() + Stream.params([("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "10"), ("DOCUMENT_URI", "/p")])
                      + Record(.stdin, id: 1, Array("abc".utf8)).bytes)
        #expect(s.count != nil)
        #expect(s.requests.isEmpty)
    }

    @Test("ABORT_REQUEST in place of the body ends the request without calling the handler")
    func abort() throws {
        let s = serve(Stream.begin() + Stream.params([("REQUEST_METHOD", "POST"), ("CONTENT_LENGTH", "10"), ("DOCUMENT_URI", "/p")])
                      + Record(.abortRequest, id: 1).bytes)
        #expect(s.count != nil)
        #expect(s.requests.isEmpty)
    }

    @Test("a handler that throws is answered 502")
    func handlerThrows() throws {
        struct Failure: Error {}
        let s = serve(Stream.request(uri: "/t"), handler: { _ in throw Failure() })
        let answer = try #require(s.reply?.answer())
        #expect(answer.status == "502 Bad Gateway")
        #expect(answer.text == "502 Bad Gateway: Gatehouse failed while handling the request.\n")
    }

    @Test("HEAD is answered with the head only")
    func head() throws {
        let s = serve(Stream.request(method: "HEAD", uri: "/h"))
        let answer = try #require(s.reply?.answer())
        #expect(answer.headers == ["Content-Type: text/plain", "Content-Length: 9"])
        #expect(answer.body.isEmpty)
    }

    @Test("an empty stream, or garbage, ends at once", arguments: [[], [0xFF], Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)] as [[UInt8]])
    func garbage(stream: [UInt8]) {
        let s = serve(stream)
        #expect(s.count == 0)
        #expect(s.requests.isEmpty)
    }

    // MARK: - Params streams that break off

    /// The answer to a request whose params stream broke off: the handler never runs.
    func expectBrokenParams(_ s: Served, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(s.count != nil, "the responder did not return", sourceLocation: sourceLocation)
        #expect(s.requests.isEmpty, sourceLocation: sourceLocation)
        #expect(s.reply?.answer()?.status == "502 Bad Gateway", sourceLocation: sourceLocation)
        #expect(s.reply?.answer()?.text == "502 Bad Gateway: Gatehouse failed while reading the request parameters.\n",
                sourceLocation: sourceLocation)
    }

    @Test("a params stream cut short (no empty PARAMS record) is answered 502 without calling the handler")
    func paramsCutShort() {
        expectBrokenParams(serve(Stream.begin() + Record(.params, id: 1, Stream.pair("REQUEST_METHOD", "GET")).bytes))
    }

    @Test("a PARAMS record of another protocol version is answered 502 without calling the handler", arguments: [0, 2, 255] as [UInt8])
    func wrongVersionInParams(version: UInt8) {
        var params = Record(.params, id: 1, Stream.pair("REQUEST_METHOD", "GET"))
        params.version = version
        expectBrokenParams(serve(Stream.begin() + params.bytes + Record(.params, id: 1).bytes + Stream.stdin([])))
    }

    @Test("a record of an unknown or unexpected type among the params is answered 502 without calling the handler", arguments: [
        42, RecordType.data.rawValue, RecordType.stdin.rawValue, RecordType.stdout.rawValue, RecordType.endRequest.rawValue,
    ] as [UInt8])
    func unexpectedTypeInParams(type: UInt8) {
        expectBrokenParams(serve(Stream.begin() + Record(.params, id: 1, Stream.pair("DOCUMENT_URI", "/x")).bytes
                                 + Record(rawType: type, id: 1, [1, 2, 3]).bytes + Stream.params([("REQUEST_METHOD", "GET")])
                                 + Stream.stdin([])))
    }

    @Test("padding after BEGIN_REQUEST, which libfcgi reads as a header, is answered 502 without calling the handler")
    func paddedBegin() {
        expectBrokenParams(serve(Record(.beginRequest, id: 1, [0, 1, 0, 0, 0, 0, 0, 0], padding: 8).bytes
                                 + Stream.params([("REQUEST_METHOD", "GET")]) + Stream.stdin([])))
    }
}
