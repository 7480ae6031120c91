#if canImport(Glibc)
import Glibc
#endif

/// The CGI meta-variables (RFC 3875 §4.1) a request is built from, read once from `envp`: the
/// ones Gatehouse uses kept by position, the `HTTP_*` ones kept apart as lower-case header names
/// (`HTTP_X_REQUEST_ID` → `x-request-id`); every other variable is skipped. Entries are split on
/// the byte `=`.
struct CGIParams {
    /// The meta-variables read, in `names` order.
    enum Meta: Int, CaseIterable {
        case requestMethod, contentType, contentLength, requestURI, documentURI, scriptName, pathInfo, queryString,
             https, requestScheme, serverName, remoteAddr, requestID
    }

    static let names: [StaticString] = ["REQUEST_METHOD", "CONTENT_TYPE", "CONTENT_LENGTH", "REQUEST_URI", "DOCUMENT_URI", "SCRIPT_NAME",
                                        "PATH_INFO", "QUERY_STRING", "HTTPS", "REQUEST_SCHEME", "SERVER_NAME", "REMOTE_ADDR", "REQUEST_ID"]

    /// Candidate positions in `names` by name length (most variables match no candidate).
    static let byLength: [[Int]] = (0...16).map { n in names.indices.filter { names[$0].utf8CodeUnitCount == n } }

    private var meta = [String?](repeating: nil, count: Meta.allCases.count)
    var headers: [String: String] = [:]

    subscript(_ m: Meta) -> String? { meta[m.rawValue] }

    init(envp: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
        headers.reserveCapacity(8)
        CGIParams.forEach(envp) { name, value in add(name: name, value: value) }
    }

    init(_ params: [String: String]) {
        for (k, v) in params {
            var name = k, value = v
            name.withUTF8 { n in value.withUTF8 { add(name: n, value: $0) } }
        }
    }

    private mutating func add(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard let base = name.baseAddress else { return }
        if name.count >= 5, memcmp(base, "HTTP_", 5) == 0 {
            let header = String(unsafeUninitializedCapacity: name.count - 5) { out in
                for (i, c) in name.dropFirst(5).enumerated() {
                    out[i] = c == UInt8(ascii: "_") ? UInt8(ascii: "-") : (c >= 0x41 && c <= 0x5A ? c | 0x20 : c)
                }
                return name.count - 5
            }
            headers[header.utf8.contains(where: { $0 >= 0x80 }) ? header.lowercased() : header] = String(decoding: value, as: UTF8.self)
            return
        }
        guard name.count < CGIParams.byLength.count else { return }
        for i in CGIParams.byLength[name.count] where memcmp(base, CGIParams.names[i].utf8Start, name.count) == 0 {
            meta[i] = String(decoding: value, as: UTF8.self)
            return
        }
    }

    /// Calls `body` with the name and value bytes of every `NAME=value` entry of `envp`.
    static func forEach(_ envp: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        var p = envp
        while let entry = p?.pointee {
            let len = strlen(entry)
            entry.withMemoryRebound(to: UInt8.self, capacity: len) { bytes in
                if let eq = memchr(bytes, Int32(UInt8(ascii: "=")), len) {
                    let n = bytes.distance(to: eq.assumingMemoryBound(to: UInt8.self))
                    body(UnsafeBufferPointer(start: bytes, count: n), UnsafeBufferPointer(start: bytes + n + 1, count: len - n - 1))
                }
            }
            p = p?.advanced(by: 1)
        }
    }
}
