import HTTP
#if canImport(Glibc)
import Glibc
#endif

extension FastCGIServer {
    /// Appends the CGI response head to `out`: `Status:` line, headers (CR and LF dropped from
    /// values), `Content-Length` unless a header gives it (none for an empty 204), blank line.
    static func encodeHead(_ r: Response, into out: inout [UInt8]) {
        append("Status: ", to: &out)
        if r.status >= 100 && r.status <= 999 {
            out.append(UInt8(truncatingIfNeeded: 0x30 + r.status / 100))
            out.append(UInt8(truncatingIfNeeded: 0x30 + r.status / 10 % 10))
            out.append(UInt8(truncatingIfNeeded: 0x30 + r.status % 10))
        } else {
            append(String(r.status), to: &out)
        }
        out.append(0x20)
        append(Response.reason(r.status), to: &out)
        append("\r\n", to: &out)
        var hasLength = false
        for (k, v) in r.headers {
            append(k, to: &out)
            append(": ", to: &out)
            // A header value can never carry a line break (response splitting): CR and LF are dropped.
            let start = out.count
            append(v, to: &out)
            let breaks = out.withUnsafeBufferPointer { b -> Bool in
                guard b.count > start, let base = b.baseAddress else { return false }
                return memchr(base + start, 0x0D, b.count - start) != nil || memchr(base + start, 0x0A, b.count - start) != nil
            }
            if breaks {
                out.removeSubrange(start...)
                for c in v.utf8 where c != 0x0D && c != 0x0A { out.append(c) }
            }
            append("\r\n", to: &out)
            if !hasLength, k.utf8.count == 14, k.lowercasedName == "content-length" { hasLength = true }
        }
        if !hasLength, !r.body.isEmpty || r.status != 204 {
            append("Content-Length: ", to: &out)
            append(String(r.body.count), to: &out)
            append("\r\n", to: &out)
        }
        append("\r\n", to: &out)
    }

    /// Appends the UTF-8 bytes of `s` (one copy when the string is stored contiguously).
    @inline(__always)
    static func append(_ s: String, to out: inout [UInt8]) {
        if s.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil { out.append(contentsOf: s.utf8) }
    }
}
