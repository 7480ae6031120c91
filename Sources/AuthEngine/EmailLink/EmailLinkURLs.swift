import TextCoding
/// Email addresses as Gatehouse accepts them: ASCII, one `@`, a dotted domain (firebase-wire.md
/// §2.3 `INVALID_EMAIL`). Matching is on the lower-cased form; mail goes to the address as typed.
public enum EmailAddress {
    static let localSpecials = Set("!#$%&'*+-/=?^_`{|}~.")

    /// The trimmed address when it is a plausible mailbox, else nil.
    public static func validated(_ raw: String) -> String? {
        let s = trimmed(raw)
        guard s.utf8.count <= 254, let at = s.lastIndex(of: "@") else { return nil }
        let local = s[..<at], domain = s[s.index(after: at)...]
        guard !local.isEmpty, local.utf8.count <= 64, !local.hasPrefix("."), !local.hasSuffix("."), !local.contains(".."),
              local.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || localSpecials.contains($0)) }) else { return nil }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }) else { return nil }
        return s
    }

    static func trimmed(_ s: String) -> String {
        var sub = Substring(s)
        while let f = sub.first, f == " " || f == "\t" || f == "\r" || f == "\n" { sub = sub.dropFirst() }
        while let l = sub.last, l == " " || l == "\t" || l == "\r" || l == "\n" { sub = sub.dropLast() }
        return String(sub)
    }

    public static func canonical(_ s: String) -> String { trimmed(s).lowercased() }

    /// The mailbox a send limit counts: canonical, with a `+tag` cut from the local part, since
    /// `ana+1@`, `ana+2@`… all reach `ana@`. For counting only: mail goes to the address as typed.
    public static func mailbox(_ s: String) -> String {
        let c = canonical(s)
        guard let at = c.lastIndex(of: "@"), let plus = c[..<at].firstIndex(of: "+"), plus > c.startIndex else { return c }
        return String(c[..<plus]) + String(c[at...])
    }
}

/// Continue URLs, link domains and the shapes of emailed links (firebase-wire.md §4.1,
/// gatehouse.md "Email-link sign-in").
public enum EmailLinkURLs {
    /// (scheme, host) of an absolute URL, lower-cased; nil when malformed (no `scheme://host`,
    /// user info, backslashes, spaces or control characters).
    public static func parts(_ url: String) -> (scheme: String, host: String)? {
        guard url.utf8.count <= 2048, url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }),
              let sep = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<sep.lowerBound].lowercased()
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        let authority = url[sep.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@"), !url.contains("\\") else { return nil }
        var host = String(authority)
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy({ $0.isNumber })) else { return nil }
            host = String(host[...close])
        } else if let colon = host.lastIndex(of: ":") {
            guard host[host.index(after: colon)...].allSatisfy({ $0.isNumber }) else { return nil }
            host = String(host[..<colon])
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.[]:".contains($0)) }) else { return nil }
        return (scheme, host.lowercased())
    }

    /// Every custom URL scheme a registered app of `project` may be called back on.
    public static func registeredSchemes(_ project: ProjectSettings) -> Set<String> {
        Set(project.iosApps.flatMap(\.schemes) + project.androidApps.flatMap { $0.extraSchemes.map { $0.lowercased() } })
    }

    /// Checks a continue URL: absolute; http(s) on an authorized domain, or a registered app scheme.
    public static func checkContinueURL(_ raw: String, project: ProjectSettings) throws {
        guard let (scheme, host) = parts(raw) else {
            throw AuthError(.invalidContinueURI, "The continue URL must be an absolute URL with a scheme and a host.")
        }
        if scheme == "http" || scheme == "https" {
            guard project.isAuthorized(host: host) else { throw AuthError(.unauthorizedDomain, "Domain not allowlisted by project") }
        } else if !registeredSchemes(project).contains(scheme) {
            throw AuthError(.unauthorizedDomain, "Scheme not registered for an app of this project")
        }
    }

    /// Whether `raw` may be redirected to (the same rule, without the error).
    public static func isAllowedContinueURL(_ raw: String?, project: ProjectSettings) -> Bool {
        guard let raw, !raw.isEmpty else { return false }
        return (try? checkContinueURL(raw, project: project)) != nil
    }

    /// The host (with port) of an origin such as `https://auth.example.com:8443`.
    public static func authority(ofOrigin origin: String) -> String {
        guard let sep = origin.firstRange(of: "://") else { return origin }
        return String(origin[sep.upperBound...].prefix { $0 != "/" }).lowercased()
    }

    /// A bare host name (optionally `:port`) usable as a link domain.
    static func isBareHost(_ s: String) -> Bool {
        guard !s.isEmpty, s.utf8.count <= 253 else { return false }
        return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.:".contains($0)) } && !s.hasPrefix(".") && !s.hasPrefix("-")
    }

    /// A link domain is acceptable when it is Gatehouse's own host or an authorized domain.
    static func isAcceptableLinkDomain(_ domain: String, origin: String, project: ProjectSettings) -> Bool {
        let d = domain.lowercased()
        guard isBareHost(d) else { return false }
        if d == authority(ofOrigin: origin) { return true }
        let hostOnly = d.split(separator: ":").first.map(String.init) ?? d
        return project.isAuthorized(host: hostOnly)
    }

    /// `<origin>/__/auth/action?apiKey=…&mode=…&oobCode=…[&continueUrl=…]&lang=…`. `apiKey` comes
    /// first so that, inside a `link=` wrapper decoded once, `mode` and `oobCode` are pairs of their own.
    public static func actionURL(origin: String, mode: String, oobCode: String, apiKey: String, continueURL: String?, lang: String) -> String {
        var pairs = [("apiKey", apiKey), ("mode", mode), ("oobCode", oobCode)]
        if let c = continueURL, !c.isEmpty { pairs.append(("continueUrl", c)) }
        pairs.append(("lang", lang))
        return origin + "/__/auth/action?" + pairs.map { $0.0 + "=" + PercentEncoding.encode($0.1) }.joined(separator: "&")
    }

    /// The app-link wrapper `<link origin>/__/auth/links?link=<action URL encoded once>`.
    public static func wrapperURL(linkOrigin: String, actionURL: String) -> String {
        linkOrigin + "/__/auth/links?link=" + PercentEncoding.encode(actionURL)
    }
}
