import JSONValue

/// An optional per-location rule nginx passes to `/__/auth/verify` (gatehouse.md "Tokens,
/// sessions, nginx": 403 for "signed in but not allowed"):
/// - `X-Gatehouse-Require-Users: uid1,uid2` — only these users;
/// - `X-Gatehouse-Require-Claim: name=value[,name=value…]` — every listed claim must hold.
///   Claims are the user's current custom claims plus `email`, `email_verified`, `phone_number`
///   and `sign_in_provider`; an array claim holds when one of its elements matches.
/// A rule that cannot be parsed allows nobody (fail closed).
public struct SessionRequirements: Sendable, Equatable {
    public var users: Set<String>?
    public var claims: [Claim]
    public var malformed = false

    public struct Claim: Sendable, Equatable {
        public let name: String
        public let value: String
    }

    public init(users: String?, claims: String?) {
        let userList = (users ?? "").split(separator: ",").map { String($0).trimmingWhitespace }.filter { !$0.isEmpty }
        self.users = (users ?? "").trimmingWhitespace.isEmpty ? nil : Set(userList)
        if self.users?.isEmpty == true { malformed = true }
        self.claims = []
        for part in (claims ?? "").split(separator: ",") {
            let text = String(part).trimmingWhitespace
            if text.isEmpty { continue }
            guard let eq = text.firstIndex(of: "=") else { malformed = true; continue }
            let name = String(text[..<eq]).trimmingWhitespace
            let value = String(text[text.index(after: eq)...]).trimmingWhitespace
            if name.isEmpty { malformed = true; continue }
            self.claims.append(Claim(name: name, value: value))
        }
    }

    public var isEmpty: Bool { users == nil && claims.isEmpty && !malformed }

    /// Whether the signed-in `identity` satisfies every rule.
    public func allows(_ identity: SessionIdentity) -> Bool {
        if malformed { return false }
        if let users, !users.contains(identity.uid) { return false }
        if claims.isEmpty { return true }
        let available = SessionRequirements.claims(of: identity)
        return claims.allSatisfy { c in available[c.name].map { SessionRequirements.matches($0, c.value) } ?? false }
    }

    static func claims(of identity: SessionIdentity) -> [String: JSON] {
        var out: [String: JSON] = [:]
        if let text = identity.account.customAttributes, let parsed = try? JSONParser(maxBytes: 4096, maxDepth: 8).parse(text),
           case let .object(pairs) = parsed {
            for (k, v) in pairs { out[k] = v }
        }
        let a = identity.account
        if let e = a.email { out["email"] = .string(e); out["email_verified"] = .bool(a.emailVerified) }
        if let p = a.phoneNumber { out["phone_number"] = .string(p) }
        out["sign_in_provider"] = .string(identity.provider)
        return out
    }

    static func matches(_ v: JSON, _ expected: String) -> Bool {
        switch v {
        case let .string(s): return s == expected
        case let .bool(b): return (b ? "true" : "false") == expected
        case let .number(n):
            if let e = Double(expected) { return e == n }
            return false
        case let .array(items): return items.contains { matches($0, expected) }
        default: return false
        }
    }
}

fileprivate extension String {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
