/// One HTTP request as the responder sees it (from FastCGI params, CGI environment or a test).
public struct Request: Sendable {
    public var method: String
    /// The decoded path without the query, e.g. `/identitytoolkit.googleapis.com/v1/accounts:lookup`.
    public var path: String
    /// The raw query string (without `?`).
    public var rawQuery: String
    /// Header names are lower-case (`content-type`, `x-firebase-locale`, …).
    public var headers: [String: String]
    public var body: [UInt8]
    public var remoteAddress: String
    public var isHTTPS: Bool
    /// Host as the client addressed it (`Host` header, else server name).
    public var host: String
    /// Request-id for logs: nginx's `$request_id` (`REQUEST_ID`), never the client's header, so a
    /// client cannot pose as another request in the logs.
    public var requestID: String

    public let queryItems: [(String, String)]
    /// Every cookie of the `Cookie` header (parsed on each use; prefer `cookie(_:)` for one).
    public var cookies: [String: String] { headers["cookie"].map(Cookie.parse(header:)) ?? [:] }

    /// The first cookie called `name`, read straight from the `Cookie` header.
    public func cookie(_ name: String) -> String? {
        headers["cookie"].flatMap { Cookie.value(named: name, inHeader: $0) }
    }

    public init(method: String, path: String, rawQuery: String = "", headers: [String: String] = [:],
                body: [UInt8] = [], remoteAddress: String = "127.0.0.1", isHTTPS: Bool = false,
                host: String? = nil, requestID: String = "-") {
        var lower: [String: String] = [:]
        for (k, v) in headers { lower[k.lowercasedName] = v }
        self.init(method: method, path: path, rawQuery: rawQuery, lowercasedHeaders: lower, body: body, remoteAddress: remoteAddress,
                  isHTTPS: isHTTPS, host: host, requestID: requestID)
    }

    /// The same from header names already in lower case (the FastCGI server's own parsing).
    public init(method: String, path: String, rawQuery: String, lowercasedHeaders lower: [String: String],
                body: [UInt8], remoteAddress: String, isHTTPS: Bool, host: String?, requestID: String) {
        self.method = method.utf8.contains(where: { $0 >= 0x61 && $0 <= 0x7A || $0 >= 0x80 }) ? method.uppercased() : method
        self.path = path
        self.rawQuery = rawQuery
        self.headers = lower
        self.body = body
        self.remoteAddress = remoteAddress
        self.isHTTPS = isHTTPS
        self.host = host ?? lower["host"] ?? "localhost"
        self.requestID = requestID
        self.queryItems = rawQuery.isEmpty ? [] : FormDecoding.pairs(rawQuery)
    }

    /// What log lines name the request by: nginx's id, and the client's own `X-Request-Id` as a
    /// separate field when it sent one (printable ASCII only, at most 64 characters).
    public var logID: String {
        guard let own = headers["x-request-id"], !own.isEmpty else { return requestID }
        return requestID + " client-id=" + Request.loggable(own)
    }

    /// `s` cut to 64 printable ASCII characters (no spaces), so it cannot forge or break a log line.
    public static func loggable(_ s: String) -> String {
        // nginx's ids (32 hex digits) pass as they are: no copy on every request.
        if s.utf8.count <= 64, s.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) { return s }
        return String(String.UnicodeScalarView(s.unicodeScalars.prefix(64).map { $0.value > 0x20 && $0.value < 0x7F ? $0 : "?" }))
    }

    /// First value of a query parameter.
    public func query(_ name: String) -> String? { queryItems.first(where: { $0.0 == name })?.1 }

    public func header(_ name: String) -> String? { headers[name.lowercasedName] }

    public var contentType: String {
        (headers["content-type"] ?? "").split(separator: ";").first.map { $0.trimmingSpaces.lowercased() } ?? ""
    }

    /// Form fields of an urlencoded body.
    public var formFields: [(String, String)] {
        FormDecoding.pairs(String(decoding: body, as: UTF8.self))
    }

    public func formField(_ name: String) -> String? { formFields.first(where: { $0.0 == name })?.1 }

    /// Origin of this request as the client sees it, e.g. `https://auth.example.com`.
    public var origin: String { (isHTTPS ? "https://" : "http://") + host }
}

extension String {
    /// `lowercased()`, skipped when there is nothing to lower (ASCII without capitals, as header
    /// names from FastCGI and in code are).
    public var lowercasedName: String {
        let hasUpper = utf8.withContiguousStorageIfAvailable { u -> Bool in
            for c in u where c &- 0x41 < 26 || c >= 0x80 { return true }
            return false
        } ?? utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 })
        return hasUpper ? lowercased() : self
    }
}
