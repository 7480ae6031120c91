import AuthCrypto
public import AuthEngine
public import HTTP
import Locking

/// Deployment-wide settings the web layer needs (built from the configuration file).
public struct WebSettings: Sendable {
    public var projects: [ProjectSettings]
    public var devMode: Bool
    /// The origin clients reach Gatehouse on (`https://auth.example.com`); nil = from the request.
    public var publicOrigin: String?
    /// Admin bearer token (production); dev mode also accepts `Bearer owner`.
    public var adminToken: String?
    public var version: String
    public var maxJSONDepth = 32
    /// The one limit on a request body: the transport refuses a longer one while reading it, and
    /// the JSON guard parses up to it (`listen.max_body_bytes`).
    public var maxBodyBytes = WebSettings.defaultMaxBodyBytes
    public static let defaultMaxBodyBytes = 64 * 1024
    /// The admin import's own limit (`listen.max_import_body_bytes`), for its route only (guard
    /// `.importBody`): `accounts:batchCreate` takes up to `AccountAdmin.maxBatch` rows, each up to
    /// a few KiB (claims alone may be 1000 characters), far past the default limit.
    public var maxImportBodyBytes = WebSettings.defaultMaxImportBodyBytes
    /// The providers whose delivery receipts the callback endpoints accept (`sms` and its
    /// secondary, with their secrets and callback URLs).
    public var receiptSources: [ReceiptSource] = []
    public static let defaultMaxImportBodyBytes = 4 << 20

    /// The body limit of a route with these guards (the import's never below the default).
    func bodyLimit(_ guards: Guards) -> Int { guards.contains(.importBody) ? max(maxBodyBytes, maxImportBodyBytes) : maxBodyBytes }

    public init(projects: [ProjectSettings], devMode: Bool, publicOrigin: String? = nil, adminToken: String? = nil, version: String) {
        self.projects = projects; self.devMode = devMode; self.publicOrigin = publicOrigin; self.adminToken = adminToken; self.version = version
    }

    public var defaultProject: ProjectSettings { projects[0] }
    public func project(id: String) -> ProjectSettings? { projects.first { $0.id == id } }

    /// The project an API key belongs to (the only project when dev mode accepts any key).
    public func project(apiKey: String) -> ProjectSettings? {
        projects.first { $0.apiKeys.contains(where: { Digest.constantTimeEqual($0, apiKey) }) }
            ?? projects.first { $0.devMode && $0.apiKeys.isEmpty && !apiKey.isEmpty }
    }
}

/// Shared, immutable-after-start state of the web layer; one per process, used by every worker.
public final class WebApp: Sendable {
    public let settings: WebSettings
    public let services: AuthServices
    public var clock: any Clock { services.clock }
    public var random: any RandomSource { services.random }
    public var keyRing: KeyRing { services.keyRing }
    public var tokens: TokenService { services.tokens }
    public var log: Log { services.log }
    public let templates: Templates
    let routes: Router<Route>
    /// The CSRF key read last and until when it is used without reading it again (`CSRF.key`).
    let csrfKey = Locked<(key: HMACKey, until: Millis)?>(nil)
    /// The `/__/auth/verify` lookup cache, and when this app last purged expired sessions.
    let sessionCache = SessionCache()
    let lastSessionPurge = Locked<Millis>(0)
    /// Called after a flow commits an outbox message (wakes the delivery worker).
    let outboxNotifier: @Sendable () -> Void
    /// Transport to external app verifiers' `siteverify` (fails closed when none is given).
    let externalVerifier: any ExternalVerifying
    /// The metrics backend's text exposition; nil where no backend runs (CGI mode): no endpoint.
    let metricsExposition: (@Sendable () -> [UInt8])?

    public init(settings: WebSettings, services: AuthServices, templates: Templates, outboxNotifier: @escaping @Sendable () -> Void = {},
                externalVerifier: any ExternalVerifying = UnavailableExternalVerifier(),
                metricsExposition: (@Sendable () -> [UInt8])? = nil, indexRoutes: Bool = true) {
        self.settings = settings
        self.services = services
        self.templates = templates
        self.outboxNotifier = outboxNotifier
        self.externalVerifier = externalVerifier
        self.metricsExposition = metricsExposition
        var routes = RouteTable.build()
        // One request (CGI) walks the table once: the index would cost more than it saves.
        if indexRoutes { routes.indexLiterals() }
        self.routes = routes
    }

    /// The body limit of the route `method` and `path` name (the transport's `routeBodyLimit`,
    /// asked before it reads a body longer than `maxBodyBytes`); `maxBodyBytes` for any other.
    public func bodyLimit(method: String, path: String) -> Int {
        guard case let .found(route, _) = routes.match(method: method.uppercased(), path: path) else { return settings.maxBodyBytes }
        return settings.bodyLimit(route.guards)
    }

    /// A request handler bound to one worker's store connection.
    public func handler(store: any GatehouseStore) -> (Request) -> Response {
        { [self] request in self.handle(request, store: store) }
    }

    public func handle(_ request: Request, store: any GatehouseStore) -> Response {
        let started = services.telemetry.isEnabled ? Telemetry.monotonicNanoseconds() : 0
        var response: Response
        var matched: Route?
        var failure: (any Error)?
        switch routes.match(method: request.method, path: request.path) {
        case .notFound:
            response = WireFailure.notFound.response
        case let .methodNotAllowed(allowed) where request.method == "OPTIONS" && isCORSRoute(path: request.path, methods: allowed):
            // A browser's preflight of a client API call: answered from the settings alone.
            response = CORS.preflight(request, methods: allowed, settings: settings, log: log)
        case let .methodNotAllowed(allowed):
            response = ErrorEnvelope.response(code: 405, message: "Method \(request.method) not allowed; use \(Set(allowed).sorted().joined(separator: ", "))",
                                              reason: "methodNotAllowed", status: "INVALID_ARGUMENT",
                                              headers: [("Allow", Set(allowed).sorted().joined(separator: ", "))])
        case let .found(route, params):
            matched = route
            var ctx = Context(app: self, request: request, store: store, params: params)
            do {
                try route.guards.check(&ctx)
                response = try route.handler(&ctx)
            } catch {
                failure = error
                response = route.kind == .page ? renderPageError(error, ctx: ctx) : renderAPIError(error, requestID: request.logID)
            }
            if route.kind == .page { applyPageHeaders(&response) }
            if route.guards.contains(.cors) { CORS.decorate(&response, request: request, settings: settings, log: log) }
        }
        if services.telemetry.isEnabled {
            record(matched, status: response.status, failure: failure, nanoseconds: Telemetry.monotonicNanoseconds() - started)
        }
        return response
    }

    /// Whether the path's routes (of `methods`) are client API routes a browser may preflight.
    func isCORSRoute(path: String, methods: [String]) -> Bool {
        methods.contains { m in
            if case let .found(route, _) = routes.match(method: m, path: path) { return route.guards.contains(.cors) }
            return false
        }
    }

    /// A request's metrics: route and status, duration, the flow step it was and its outcome.
    func record(_ route: Route?, status: Int, failure: (any Error)?, nanoseconds: Int64) {
        let name = route?.name ?? "unmatched"
        services.telemetry.request(route: name, status: status, nanoseconds: nanoseconds)
        let reason = failure.map(WebApp.metricReason)
        if reason == AuthError.Code.tooManyAttempts.rawValue || reason == AuthError.Code.quotaExceeded.rawValue {
            services.telemetry.rateLimited(route: name)
        }
        if let flow = route?.flow {
            services.telemetry.flow(flow.flow, step: flow.step, outcome: reason ?? (status < 400 ? "ok" : "HTTP_\(status)"))
        }
    }

    /// A failure as a metric label: its error code, from a closed set.
    static func metricReason(_ error: any Error) -> String {
        switch error {
        case let e as AuthError: return e.code.rawValue
        case is WireFailure: return "INVALID_REQUEST"
        case let e as any StoreFailure where e.isTemporary: return "STORE_UNAVAILABLE"
        default: return "INTERNAL"
        }
    }
}
