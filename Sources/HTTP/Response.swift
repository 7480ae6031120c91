public import JSONValue
/// An HTTP response: status, ordered headers (repeats allowed, e.g. `Set-Cookie`) and body.
public struct Response: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ value: JSON, status: Int = 200, headers: [(String, String)] = []) -> Response {
        Response(status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: value.bytes)
    }

    /// A page. Room is kept for the headers a page gets on its way out (a cookie, the security
    /// headers), so adding them does not regrow the list.
    public static func html(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> Response {
        var all: [(String, String)] = []
        all.reserveCapacity(8 + headers.count)
        all.append(("Content-Type", "text/html; charset=utf-8"))
        all.append(contentsOf: headers)
        return Response(status: status, headers: all, body: Array(text.utf8))
    }

    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> Response {
        Response(status: status, headers: [("Content-Type", contentType)], body: Array(text.utf8))
    }

    public static func redirect(to location: String, status: Int = 303) -> Response {
        Response(status: status, headers: [("Location", location), ("Cache-Control", "no-store")])
    }

    public func header(_ name: String) -> String? {
        headers.first(where: { $0.0.lowercased() == name.lowercased() })?.1
    }

    public mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.0.lowercased() == name.lowercased() }
        headers.append((name, value))
    }

    public mutating func addCookie(_ cookie: Cookie) {
        headers.append(("Set-Cookie", cookie.headerValue))
    }

    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 204: return "No Content"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 411: return "Length Required"
        case 413: return "Payload Too Large"
        case 415: return "Unsupported Media Type"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        default: return "Status \(status)"
        }
    }
}
