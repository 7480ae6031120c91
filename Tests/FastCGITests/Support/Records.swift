/// FastCGI 1.0 records as a web server writes them and the responder answers them, built and
/// read byte by byte here so that the tests do not trust libfcgi's view of the protocol.
enum RecordType: UInt8 {
    case beginRequest = 1, abortRequest, endRequest, params, stdin, stdout, stderr, data, getValues, getValuesResult, unknownType
}

struct Record: Equatable {
    var version: UInt8 = 1
    var type: UInt8
    var requestID: UInt16
    var content: [UInt8]
    var padding = 0

    init(_ type: RecordType, id: UInt16, _ content: [UInt8] = [], padding: Int = 0) {
        self.type = type.rawValue; requestID = id; self.content = content; self.padding = padding
    }

    init(rawType: UInt8, id: UInt16, _ content: [UInt8] = []) {
        type = rawType; requestID = id; self.content = content
    }

    var bytes: [UInt8] {
        [version, type, UInt8(requestID >> 8), UInt8(requestID & 0xFF), UInt8(content.count >> 8), UInt8(content.count & 0xFF),
         UInt8(padding), 0] + content + [UInt8](repeating: 0, count: padding)
    }

    /// Splits a stream into records; nil when it ends inside one.
    static func split(_ bytes: [UInt8]) -> [Record]? {
        var out: [Record] = []
        var i = 0
        while i < bytes.count {
            guard i + 8 <= bytes.count else { return nil }
            let length = Int(bytes[i + 4]) << 8 | Int(bytes[i + 5]), padding = Int(bytes[i + 6])
            guard i + 8 + length + padding <= bytes.count else { return nil }
            var r = Record(rawType: bytes[i + 1], id: UInt16(bytes[i + 2]) << 8 | UInt16(bytes[i + 3]), Array(bytes[(i + 8)..<(i + 8 + length)]))
            r.version = bytes[i]
            r.padding = padding
            out.append(r)
            i += 8 + length + padding
        }
        return out
    }
}

/// The pieces of a request stream.
enum Stream {
    static let keepConnection: UInt8 = 1

    static func begin(id: UInt16 = 1, role: UInt16 = 1, flags: UInt8 = 0) -> [UInt8] {
        Record(.beginRequest, id: id, [UInt8(role >> 8), UInt8(role & 0xFF), flags, 0, 0, 0, 0, 0]).bytes
    }

    /// One name-value pair: each length in one byte below 128, else in four with the high bit set.
    static func pair(_ name: String, _ value: String) -> [UInt8] {
        func length(_ n: Int) -> [UInt8] {
            n < 128 ? [UInt8(n)] : [UInt8(0x80 | (n >> 24)), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        }
        return length(name.utf8.count) + length(value.utf8.count) + Array(name.utf8) + Array(value.utf8)
    }

    /// A PARAMS stream: the pairs in one record, then the empty record that ends the stream.
    static func params(id: UInt16 = 1, _ pairs: [(String, String)]) -> [UInt8] {
        Record(.params, id: id, pairs.flatMap { pair($0.0, $0.1) }).bytes + Record(.params, id: id).bytes
    }

    /// A STDIN stream: the body in records of at most 65,535 bytes, then the empty record.
    static func stdin(id: UInt16 = 1, _ body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < body.count {
            let n = min(65_535, body.count - i)
            out += Record(.stdin, id: id, Array(body[i..<(i + n)])).bytes
            i += n
        }
        return out + Record(.stdin, id: id).bytes
    }

    /// A whole request as nginx sends it.
    static func request(id: UInt16 = 1, keep: Bool = false, method: String = "GET", uri: String = "/", body: [UInt8] = [],
                        extra: [(String, String)] = []) -> [UInt8] {
        let path = String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        var params = [("REQUEST_METHOD", method), ("REQUEST_URI", uri), ("DOCUMENT_URI", path)]
        if !body.isEmpty { params.append(("CONTENT_LENGTH", String(body.count))) }
        return begin(id: id, flags: keep ? keepConnection : 0) + Stream.params(id: id, params + extra) + stdin(id: id, body)
    }
}

/// What the responder wrote back, by request.
struct Reply {
    let records: [Record]

    /// The STDOUT content of request `id`, joined.
    func stdout(_ id: UInt16 = 1) -> [UInt8] {
        records.filter { $0.type == RecordType.stdout.rawValue && $0.requestID == id }.flatMap(\.content)
    }

    /// END_REQUEST records: the request, the application status and the protocol status.
    var ends: [(id: UInt16, appStatus: UInt32, protocolStatus: UInt8)] {
        records.filter { $0.type == RecordType.endRequest.rawValue && $0.content.count == 8 }.map { r in
            let c = r.content
            return (r.requestID, UInt32(c[0]) << 24 | UInt32(c[1]) << 16 | UInt32(c[2]) << 8 | UInt32(c[3]), c[4])
        }
    }

    /// The CGI answer of request `id`, split into status, headers and body.
    func answer(_ id: UInt16 = 1) -> CGIAnswer? { CGIAnswer(stdout(id)) }
}

/// A CGI response: `Status:` header, other headers in order, body.
struct CGIAnswer: Equatable {
    var status: String
    var headers: [String]
    var body: [UInt8]

    init?(_ bytes: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator }) else {
            return nil
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.first, first.hasPrefix("Status: ") else { return nil }
        status = String(first.dropFirst("Status: ".count))
        headers = Array(lines.dropFirst())
        body = Array(bytes[(end + 4)...])
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}
