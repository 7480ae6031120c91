import AuthCrypto
import AuthEngine
import HTTP
import JSONValue

/// What a route requires before its handler runs. Shown on every line of the route table.
public struct Guards: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `key` query parameter or `x-goog-api-key` header naming a project's API key.
    public static let apiKey = Guards(rawValue: 1 << 0)
    /// `Authorization: Bearer <admin token>` (dev mode: `Bearer owner`). Only the Admin SDK paths
    /// (`/identitytoolkit.googleapis.com/v1/projects/{project}/…`) have it: those are the paths the
    /// shipped nginx configuration keeps to internal networks (`gatehouse-admin-internal.conf`), so
    /// admin power is reachable only where the operator has said it is. On every other route the
    /// `Authorization` header is not read: a bearer there is as if absent.
    public static let admin = Guards(rawValue: 1 << 1)
    /// A JSON body (or form body) normalised per firebase-wire.md §1.3.
    public static let json = Guards(rawValue: 1 << 2)
    /// Only in dev mode (emulator helpers); otherwise the 404 of an unknown path.
    public static let devOnly = Guards(rawValue: 1 << 3)
    /// The `{project}` path parameter must name a served project.
    public static let pathProject = Guards(rawValue: 1 << 4)
    /// The body may be as long as the admin import's own limit (`WebSettings.maxImportBodyBytes`)
    /// rather than the default one: `accounts:batchCreate` only.
    public static let importBody = Guards(rawValue: 1 << 5)
    /// A client API call a web app on another origin makes (`CORS.swift`): its preflight is
    /// answered and an allowed `Origin` is reflected on every answer. Never on admin paths or pages.
    public static let cors = Guards(rawValue: 1 << 6)

    func check(_ ctx: inout Context) throws {
        if contains(.devOnly), !ctx.app.settings.devMode { throw WireFailure.notFound }
        if contains(.pathProject) {
            guard let id = ctx.params["project"], let p = ctx.app.settings.project(id: id) else {
                throw AuthError(.projectNotFound)
            }
            ctx.project = p
        }
        if contains(.admin) {
            guard Guards.adminCredential(ctx) == .admin else { throw WireFailure.unauthenticated }
            ctx.isAdmin = true
        }
        if contains(.apiKey) {
            let key = ctx.request.query("key") ?? ctx.request.header("x-goog-api-key")
            guard let key, !key.isEmpty else { throw WireFailure.missingAPIKey }
            guard let p = ctx.app.settings.project(apiKey: key), !contains(.pathProject) || p.id == ctx.project.id else {
                throw WireFailure.invalidAPIKey
            }
            ctx.apiKey = key
            ctx.project = p
        }
        if contains(.json) { ctx.body = try Guards.parseBody(ctx, limit: ctx.app.settings.bodyLimit(self)) }
    }

    enum AdminCredential { case none, admin, invalid }

    /// `Bearer owner` (dev, case-insensitive) or the configured token, compared in constant time.
    static func adminCredential(_ ctx: Context) -> AdminCredential {
        guard let auth = ctx.request.header("authorization") else { return .none }
        let parts = auth.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .none }
        let token = String(parts[1]).trimmingSpaces
        if ctx.app.settings.devMode, token.lowercased() == "owner" { return .admin }
        if let admin = ctx.app.settings.adminToken, !admin.isEmpty, Digest.constantTimeEqual(admin, token) { return .admin }
        return .invalid
    }

    /// The body, read up to `limit` bytes (the route's: `WebSettings.bodyLimit`).
    static func parseBody(_ ctx: Context, limit: Int) throws -> JSON {
        let req = ctx.request
        if req.body.isEmpty { return .object([]) }
        // The transport already refuses a longer body; a caller that hands requests in directly
        // meets the same limit here, answered the same way.
        guard req.body.count <= limit else { throw WireFailure.payloadTooLarge(limit: limit) }
        if req.contentType == "application/x-www-form-urlencoded" {
            return normalise(.object(req.formFields.map { ($0.0, JSON.string($0.1)) }))
        }
        do {
            let value = try JSONParser(maxBytes: limit, maxDepth: ctx.app.settings.maxJSONDepth).parse(req.body)
            guard case .object = value else { throw WireFailure.invalidJSON("Expected a JSON object at the top level.") }
            return normalise(value)
        } catch let e as JSONError {
            throw WireFailure.invalidJSON("\(e)")
        }
    }

    /// snake_case keys → camelCase, recursively (firebase-wire.md §1.3 rule 1).
    static func normalise(_ v: JSON) -> JSON {
        switch v {
        case let .object(pairs): return .object(pairs.map { (camel($0.0), normalise($0.1)) })
        case let .array(items): return .array(items.map(normalise))
        default: return v
        }
    }

    static func camel(_ key: String) -> String {
        guard key.contains("_") else { return key }
        var out = ""
        var upper = false
        for c in key {
            if c == "_" { upper = !out.isEmpty; continue }
            out += upper ? c.uppercased() : String(c)
            upper = false
        }
        return out
    }
}

/// Transport-level failures with their exact envelopes (firebase-wire.md §1.2, §1.3).
enum WireFailure: Error {
    case missingAPIKey
    case invalidAPIKey
    case unauthenticated
    case invalidJSON(String)
    case payloadTooLarge(limit: Int)
    /// What the router answers for a path it does not know (§1.5 "Not Found").
    case notFound

    var response: Response {
        switch self {
        case .notFound:
            return ErrorEnvelope.response(code: 404, message: "Not Found", reason: "notFound", status: "NOT_FOUND")
        case .missingAPIKey:
            return ErrorEnvelope.response(code: 403, message: "The request is missing a valid API key.", reason: "forbidden", status: "PERMISSION_DENIED")
        case .invalidAPIKey:
            return ErrorEnvelope.response(code: 400, message: "API key not valid. Please pass a valid API key.", reason: "keyInvalid", status: "INVALID_ARGUMENT")
        case .unauthenticated:
            let msg = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
            return .json(.obj(("error", JSON.obj(
                ("code", 401), ("message", msg),
                ("errors", JSON.array([.obj(("message", "Invalid Credentials"), ("domain", "global"), ("reason", "authError"),
                                            ("location", "Authorization"), ("locationType", "header"))])),
                ("status", "UNAUTHENTICATED")))), status: 401)
        case let .invalidJSON(detail):
            return ErrorEnvelope.response(code: 400, message: "Invalid JSON payload received. \(detail)", reason: "parseError", status: "INVALID_ARGUMENT")
        case let .payloadTooLarge(limit):
            return WebApp.payloadTooLarge(limit: limit)
        }
    }
}
