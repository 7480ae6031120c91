import AuthEngine
public import HTTP

/// The one funnel from thrown errors to responses: wire envelope for the API, a localized page
/// for pages. Internal causes are logged with the request id and never sent.
extension WebApp {
    func renderAPIError(_ error: any Error, requestID: String) -> Response {
        switch error {
        case let e as AuthError:
            if e.code == .internalError { log.error("internal: \(e.message)", requestID: requestID) }
            let transport = isTransportClass(e.code)
            return ErrorEnvelope.response(code: httpStatus(e.code), message: e.message, reason: transport ? reason(e.code) : "invalid",
                                          status: transport ? canonicalStatus(e.code) : nil)
        case let e as WireFailure:
            return e.response
        case let e as any StoreFailure where e.isTemporary:
            log.error("store \(e.isOutOfSpace ? "out of space" : "unavailable"): \(error)", requestID: requestID)
            return ErrorEnvelope.response(code: 503, message: e.isOutOfSpace ? WebApp.outOfSpaceMessage : WebApp.unavailableMessage,
                                          reason: "backendError", status: "UNAVAILABLE",
                                          headers: [("Retry-After", WebApp.outOfSpaceRetrySeconds)])
        default:
            log.error("internal error: \(error)", requestID: requestID)
            return ErrorEnvelope.response(code: 500, message: "INTERNAL : An internal error has occurred.", reason: "backendError", status: "INTERNAL")
        }
    }

    /// HTTP status: business errors are 400 (firebase-wire.md §1.5); transport classes carry their own.
    func httpStatus(_ code: AuthError.Code) -> Int {
        switch code {
        case .permissionDenied: return 403
        case .unauthenticated: return 401
        case .notFound: return 404
        case .internalError: return 500
        case .notImplemented: return 501
        default: return 400
        }
    }

    /// The classes whose envelope carries a canonical `status` string.
    func isTransportClass(_ code: AuthError.Code) -> Bool {
        switch code {
        case .invalidArgument, .permissionDenied, .unauthenticated, .notFound, .internalError, .notImplemented: return true
        default: return false
        }
    }

    func reason(_ code: AuthError.Code) -> String {
        switch code {
        case .notFound: return "notFound"
        case .notImplemented: return "unimplemented"
        case .permissionDenied: return "forbidden"
        case .unauthenticated: return "authError"
        case .internalError: return "backendError"
        default: return "invalid"
        }
    }

    func canonicalStatus(_ code: AuthError.Code) -> String {
        switch code {
        case .notFound: return "NOT_FOUND"
        case .notImplemented: return "UNIMPLEMENTED"
        case .permissionDenied: return "PERMISSION_DENIED"
        case .unauthenticated: return "UNAUTHENTICATED"
        case .internalError: return "INTERNAL"
        default: return "INVALID_ARGUMENT"
        }
    }

    /// A localized HTML error page that redirects nowhere.
    func renderPageError(_ error: any Error, ctx: Context) -> Response {
        let status: Int
        let key: String
        switch error {
        case let e as AuthError:
            status = httpStatus(e.code)
            key = "error." + e.code.rawValue
            if e.code == .internalError { ctx.app.log.error("internal: \(e.message)", requestID: ctx.request.logID) }
        case let e as WireFailure:
            return e.response
        case let e as any StoreFailure where e.isTemporary:
            ctx.app.log.error("store \(e.isOutOfSpace ? "out of space" : "unavailable"): \(error)", requestID: ctx.request.logID)
            status = 503
            key = "error.INTERNAL"
        default:
            ctx.app.log.error("internal error: \(error)", requestID: ctx.request.logID)
            status = 500
            key = "error.INTERNAL"
        }
        let strings = templates.locales.strings(for: ctx.locale)
        let message = strings[key] ?? strings["error.generic"] ?? "Something went wrong."
        let html = templates.render("error", ctx: ctx, values: ["message": .string(message), "status": .int(status)])
        var response = Response.html(html, status: status)
        if status == 503 { response.headers.append(("Retry-After", WebApp.outOfSpaceRetrySeconds)) }
        return response
    }

    /// 413 for a body past `WebSettings.maxBodyBytes`, whoever finds it (the transport while
    /// reading, or the JSON guard).
    public static func payloadTooLarge(limit: Int) -> Response {
        ErrorEnvelope.response(code: 413, message: "PAYLOAD_TOO_LARGE : Request body larger than \(limit) bytes", status: "INVALID_ARGUMENT")
    }

    /// A full disk is temporary (an operator frees space): clients are told to come back.
    static let outOfSpaceMessage = "UNAVAILABLE : The service is temporarily out of storage; retry later."
    static let unavailableMessage = "UNAVAILABLE : The service's database is temporarily unavailable; retry later."
    static let outOfSpaceRetrySeconds = "30"

    /// Security headers on every page (gatehouse.md "Tokens, sessions, nginx").
    /// A page's own header of the same name (any case) wins.
    func applyPageHeaders(_ r: inout Response) {
        var present = [Bool](repeating: false, count: WebApp.pageHeaders.count)
        for (name, _) in r.headers {
            for (i, d) in WebApp.pageHeaders.enumerated() where !present[i] && WebApp.sameASCIIName(name, d.0) { present[i] = true }
        }
        for (i, d) in WebApp.pageHeaders.enumerated() where !present[i] { r.headers.append(d) }
    }

    static let pageHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; form-action 'self' *; base-uri 'none'; object-src 'none'"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Cache-Control", "no-store"),
    ]

    /// Header names compared as `lowercased()` would, byte by byte.
    static func sameASCIIName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        for (x, y) in zip(a.utf8, b.utf8) where x != y {
            let lx = x >= 0x41 && x <= 0x5A ? x | 0x20 : x, ly = y >= 0x41 && y <= 0x5A ? y | 0x20 : y
            if lx != ly || x >= 0x80 || y >= 0x80 { return false }
        }
        return true
    }
}
