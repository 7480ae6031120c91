#if canImport(Glibc)
import Glibc
#endif

/// HTTP cookies: parsing the `Cookie` request header (RFC 6265 §5.4) and rendering `Set-Cookie`.
public struct Cookie: Equatable, Sendable {
    public enum SameSite: String, Sendable { case strict = "Strict", lax = "Lax", none = "None" }

    public var name: String
    public var value: String
    public var path: String? = "/"
    public var domain: String? = nil
    public var maxAge: Int? = nil
    public var secure = true
    public var httpOnly = true
    public var sameSite: SameSite? = .lax

    public init(name: String, value: String, path: String? = "/", domain: String? = nil, maxAge: Int? = nil,
                secure: Bool = true, httpOnly: Bool = true, sameSite: SameSite? = .lax) {
        self.name = name; self.value = value; self.path = path; self.domain = domain
        self.maxAge = maxAge; self.secure = secure; self.httpOnly = httpOnly; self.sameSite = sameSite
    }

    /// A cookie that deletes `name` (same attributes, empty value, Max-Age=0).
    public static func expired(_ name: String, domain: String? = nil, sameSite: SameSite? = .lax) -> Cookie {
        Cookie(name: name, value: "", domain: domain, maxAge: 0, sameSite: sameSite)
    }

    /// The `Set-Cookie` header value. Values are restricted to cookie-octets; anything else is a bug.
    public var headerValue: String {
        precondition(Cookie.isToken(name) && value.utf8.allSatisfy(Cookie.isCookieOctet), "invalid cookie \(name)")
        var parts = ["\(name)=\(value)"]
        if let path { parts.append("Path=\(path)") }
        if let domain { parts.append("Domain=\(domain)") }
        if let maxAge { parts.append("Max-Age=\(maxAge)") }
        if secure { parts.append("Secure") }
        if httpOnly { parts.append("HttpOnly") }
        if let sameSite { parts.append("SameSite=\(sameSite.rawValue)") }
        return parts.joined(separator: "; ")
    }

    /// Parses a `Cookie` header into name → value (the first occurrence of a name wins).
    /// Works on UTF-8 bytes: the separators `;`, `=`, space, tab and `"` are ASCII (RFC 6265 §4.2.1).
    public static func parse(header: String) -> [String: String] {
        var out: [String: String] = [:]
        forEachPair(header) { name, value in
            let n = String(decoding: name, as: UTF8.self)
            if out[n] == nil { out[n] = String(decoding: value, as: UTF8.self) }
            return true
        }
        return out
    }

    /// The value of the first cookie called `name` in a `Cookie` header, without building a map.
    public static func value(named name: String, inHeader header: String) -> String? {
        var found: String?
        let wanted = name.utf8
        forEachPair(header) { n, v in
            guard n.elementsEqual(wanted) else { return true }
            found = String(decoding: v, as: UTF8.self)
            return false
        }
        return found
    }

    /// Calls `body` with each non-empty name and its value (spaces trimmed, one pair of double
    /// quotes removed) until it returns false.
    static func forEachPair(_ header: String, _ body: (Slice<UnsafeBufferPointer<UInt8>>, Slice<UnsafeBufferPointer<UInt8>>) -> Bool) {
        var header = header
        header.withUTF8 { u in
            var i = 0
            while i < u.count {
                let end = Cookie.index(of: UInt8(ascii: ";"), in: u, from: i, to: u.count) ?? u.count
                let part = u[i..<end]
                i = end + 1
                guard let eq = Cookie.index(of: UInt8(ascii: "="), in: u, from: part.startIndex, to: end) else { continue }
                let name = trimmed(part[..<eq])
                var value = trimmed(part[(eq + 1)...])
                if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") {
                    value = value[(value.startIndex + 1)..<(value.endIndex - 1)]
                }
                guard !name.isEmpty else { continue }
                if !body(name, value) { return }
            }
        }
    }

    /// The first position of `byte` in `u[from..<to]` (memchr).
    @inline(__always)
    static func index(of byte: UInt8, in u: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let base = u.baseAddress, let hit = memchr(base + from, Int32(byte), to - from) else { return nil }
        return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }

    static func trimmed(_ s: Slice<UnsafeBufferPointer<UInt8>>) -> Slice<UnsafeBufferPointer<UInt8>> {
        var lo = s.startIndex, hi = s.endIndex
        while lo < hi, s[lo] == 0x20 || s[lo] == 0x09 { lo += 1 }
        while hi > lo, s[hi - 1] == 0x20 || s[hi - 1] == 0x09 { hi -= 1 }
        return s[lo..<hi]
    }

    public static func isToken(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { c in c > 0x20 && c < 0x7F && !"()<>@,;:\\\"/[]?={}".utf8.contains(c) }
    }

    static func isCookieOctet(_ c: UInt8) -> Bool {
        c == 0x21 || (0x23...0x2B).contains(c) || (0x2D...0x3A).contains(c) || (0x3C...0x5B).contains(c) || (0x5D...0x7E).contains(c)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    public var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
