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
    public static func parse(header: String) -> [String: String] {
        var out: [String: String] = [:]
        for part in header.split(separator: ";") {
            let trimmed = part.trimmingSpaces
            guard let eq = trimmed.firstIndex(of: "=") else { continue }
            let name = String(trimmed[..<eq]).trimmingSpaces
            var value = String(trimmed[trimmed.index(after: eq)...]).trimmingSpaces
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !name.isEmpty, out[name] == nil else { continue }
            out[name] = value
        }
        return out
    }

    static func isToken(_ s: String) -> Bool {
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
