import AuthEngine
import HTTP

/// Cross-origin calls to the client API (docs/clients.md "CORS"): a Firebase web app lives on its
/// own origin and its SDK's JSON requests (`Content-Type: application/json`, `X-Client-Version`)
/// are preflighted. Routes marked `.cors` answer the preflight here, from the settings alone
/// (no store, no flow), and add `Access-Control-Allow-Origin` to every answer — errors too, so
/// the SDK can read them — when the `Origin` is allowed:
/// - dev mode: any origin, reflected (as the emulator does);
/// - production: the origins the request's API key lists (`api_key_origins`) when it has a list,
///   else an `https://` origin on one of the project's authorized domains (or `http://` on a
///   loopback name the project authorizes, for a developer's own machine).
/// Never `Access-Control-Allow-Credentials`: the client API takes no cookies. A refused origin
/// gets no CORS header at all (the browser then keeps the answer from the page) and a log line.
enum CORS {
    static let maxAge = "7200"
    /// How many request headers a preflight may name, and how long their list may be.
    static let maxRequestHeaders = 32
    static let maxRequestHeadersLength = 2048

    /// Whether `origin` may call the client API of the project the request's API key names (or,
    /// without a key, of any project served).
    static func allows(origin: String, request: Request, settings: WebSettings) -> Bool {
        guard let parsed = Origin(origin) else { return false }
        let key = request.query("key") ?? request.header("x-goog-api-key")
        let projects: [ProjectSettings]
        if let key, !key.isEmpty, let p = settings.project(apiKey: key) {
            if let listed = p.apiKeyOrigins[key] { return listed.contains { $0.lowercased() == parsed.text } }
            projects = [p]
        } else {
            projects = settings.projects
        }
        return projects.contains { p in
            if p.devMode { return true }
            guard p.isAuthorized(host: parsed.host) else { return false }
            return parsed.scheme == "https" || (parsed.scheme == "http" && parsed.isLoopback)
        }
    }

    /// The answer to `OPTIONS` on a `.cors` route whose methods are `methods`.
    static func preflight(_ request: Request, methods: [String], settings: WebSettings, log: Log) -> Response {
        guard let origin = request.header("origin"), allows(origin: origin, request: request, settings: settings) else {
            refused(request, log: log)
            return Response(status: 403, headers: [("Vary", "Origin"), ("Cache-Control", "no-store")])
        }
        var headers: [(String, String)] = [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Allow-Methods", (Set(methods).sorted() + ["OPTIONS"]).joined(separator: ", ")),
            ("Access-Control-Max-Age", maxAge),
            ("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
        ]
        if let asked = allowedRequestHeaders(request.header("access-control-request-headers")) {
            headers.append(("Access-Control-Allow-Headers", asked))
        }
        // Chromium's private-network preflight (a public page calling a developer's loopback
        // server): answered as the emulator does, in dev mode only.
        if settings.devMode, request.header("access-control-request-private-network")?.lowercased() == "true" {
            headers.append(("Access-Control-Allow-Private-Network", "true"))
        }
        return Response(status: 204, headers: headers)
    }

    /// Adds the CORS headers of an actual (not preflight) answer of a `.cors` route.
    static func decorate(_ response: inout Response, request: Request, settings: WebSettings, log: Log) {
        guard let origin = request.header("origin") else { return }
        response.headers.append(("Vary", "Origin"))
        guard allows(origin: origin, request: request, settings: settings) else {
            refused(request, log: log)
            return
        }
        response.headers.append(("Access-Control-Allow-Origin", origin))
    }

    /// The request headers a preflight names, reflected when each is a plain header name; nil
    /// when there are none or the list is not one.
    static func allowedRequestHeaders(_ raw: String?) -> String? {
        guard let raw, !raw.isEmpty, raw.utf8.count <= maxRequestHeadersLength else { return nil }
        let names = raw.split(separator: ",").map { $0.trimmingSpaces }.filter { !$0.isEmpty }
        guard !names.isEmpty, names.count <= maxRequestHeaders, names.allSatisfy(Cookie.isToken) else { return nil }
        return names.joined(separator: ", ")
    }

    static func refused(_ request: Request, log: Log) {
        let origin = String((request.header("origin") ?? "").unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }
                                .prefix(120).map(Character.init))
        log.warning("CORS: origin \(origin) refused for \(request.path) (not an allowed origin of the API key's project)",
                    requestID: request.logID)
    }

    /// An `Origin` header's scheme, host and port, lower-cased (`text`: the serialised origin).
    struct Origin {
        let scheme: String
        let host: String
        let text: String

        init?(_ raw: String) {
            let lower = raw.lowercased()
            guard lower.utf8.count <= 300, let sep = lower.firstRange(of: "://") else { return nil }
            scheme = String(lower[..<sep.lowerBound])
            guard scheme == "https" || scheme == "http" else { return nil }
            let authority = lower[sep.upperBound...]
            guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@"),
                  authority.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else { return nil }
            var h = String(authority)
            if h.hasPrefix("[") {
                guard let close = h.firstIndex(of: "]") else { return nil }
                h = String(h[h.index(after: h.startIndex)..<close])
            } else if let colon = h.lastIndex(of: ":") {
                let port = h[h.index(after: colon)...]
                guard !port.isEmpty, port.allSatisfy({ $0.isASCII && $0.isNumber }), port.count <= 5 else { return nil }
                h = String(h[..<colon])
            }
            guard !h.isEmpty else { return nil }
            host = h
            text = lower
        }

        var isLoopback: Bool { host == "localhost" || host == "127.0.0.1" || host == "::1" || host.hasSuffix(".localhost") }
    }
}
