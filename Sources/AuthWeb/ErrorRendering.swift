import AuthEngine
import HTTP

/// The one funnel from thrown errors to responses: wire envelope for the API, a localized page
/// for pages. Internal causes are logged with the request id and never sent.
extension WebApp {
    func renderAPIError(_ error: Error, requestID: String) -> Response {
        switch error {
        case let e as AuthError:
            if e.code == .internalError { Log.error("internal: \(e.message)", requestID: requestID) }
            return ErrorEnvelope.response(code: e.httpStatus, message: e.message, reason: e.isTransportClass ? reason(e.code) : "invalid",
                                          status: e.isTransportClass ? canonicalStatus(e.code) : nil)
        case let e as WireFailure:
            return e.response
        default:
            Log.error("internal error: \(error)", requestID: requestID)
            return ErrorEnvelope.response(code: 500, message: "INTERNAL : An internal error has occurred.", reason: "backendError", status: "INTERNAL")
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
    func renderPageError(_ error: Error, ctx: Context) -> Response {
        let status: Int
        let key: String
        switch error {
        case let e as AuthError:
            status = e.httpStatus
            key = "error." + e.code.rawValue
            if e.code == .internalError { Log.error("internal: \(e.message)", requestID: ctx.request.requestID) }
        case let e as WireFailure:
            return e.response
        default:
            Log.error("internal error: \(error)", requestID: ctx.request.requestID)
            status = 500
            key = "error.INTERNAL"
        }
        let strings = templates.locales.strings(for: ctx.locale)
        let message = strings[key] ?? strings["error.generic"] ?? "Something went wrong."
        let html = templates.render("error", ctx: ctx, values: ["message": .string(message), "status": .int(status)])
        return .html(html, status: status)
    }

    /// Security headers on every page (gatehouse.md "Tokens, sessions, nginx").
    func applyPageHeaders(_ r: inout Response) {
        let defaults: [(String, String)] = [
            ("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; form-action 'self' *; base-uri 'none'; object-src 'none'"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
            ("X-Content-Type-Options", "nosniff"),
            ("Cache-Control", "no-store"),
        ]
        for (k, v) in defaults where r.header(k) == nil { r.headers.append((k, v)) }
    }
}
