import AuthEngine
import HTTP

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
    public var maxBodyBytes = 64 * 1024

    public init(projects: [ProjectSettings], devMode: Bool, publicOrigin: String? = nil, adminToken: String? = nil, version: String) {
        self.projects = projects; self.devMode = devMode; self.publicOrigin = publicOrigin; self.adminToken = adminToken; self.version = version
    }

    public var defaultProject: ProjectSettings { projects[0] }
    public func project(id: String) -> ProjectSettings? { projects.first { $0.id == id } }

    /// The project an API key belongs to (the only project when dev mode accepts any key).
    public func project(apiKey: String) -> ProjectSettings? {
        projects.first { $0.apiKeys.contains(where: { constantTimeEquals($0, apiKey) }) }
            ?? projects.first { $0.devMode && $0.apiKeys.isEmpty && !apiKey.isEmpty }
    }
}

func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8), y = Array(b.utf8)
    var diff = UInt8(x.count == y.count ? 0 : 1)
    for i in 0..<max(x.count, y.count) { diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0) }
    return diff == 0
}

/// Shared, immutable-after-start state of the web layer; one per process, used by every worker.
public final class WebApp: @unchecked Sendable {
    public let settings: WebSettings
    public let clock: Clock
    public let random: RandomSource
    public let keyRing: KeyRing
    public let tokens: TokenService
    public let templates: Templates
    let routes: Router<Route>
    /// Called after a flow commits an outbox message (wakes the delivery worker).
    public var outboxNotifier: @Sendable () -> Void = {}
    /// Transport to external app verifiers' `siteverify` (set at start-up; fails closed if unset).
    public var externalVerifier: ExternalVerifying = UnavailableExternalVerifier()

    public init(settings: WebSettings, clock: Clock = SystemClock(), random: RandomSource = SystemRandom(), templates: Templates) {
        self.settings = settings
        self.clock = clock
        self.random = random
        self.keyRing = KeyRing(clock: clock)
        self.tokens = TokenService(keyRing: keyRing, clock: clock)
        self.templates = templates
        self.routes = RouteTable.build()
    }

    /// A request handler bound to one worker's store connection.
    public func handler(store: GatehouseStore) -> (Request) -> Response {
        { [self] request in self.handle(request, store: store) }
    }

    public func handle(_ request: Request, store: GatehouseStore) -> Response {
        var response: Response
        switch routes.match(method: request.method, path: request.path) {
        case .notFound:
            response = WireFailure.notFound.response
        case let .methodNotAllowed(allowed):
            response = ErrorEnvelope.response(code: 405, message: "Method \(request.method) not allowed; use \(Set(allowed).sorted().joined(separator: ", "))",
                                              reason: "methodNotAllowed", status: "INVALID_ARGUMENT",
                                              headers: [("Allow", Set(allowed).sorted().joined(separator: ", "))])
        case let .found(route, params):
            var ctx = Context(app: self, request: request, store: store, params: params)
            do {
                try route.guards.check(&ctx)
                response = try route.handler(&ctx)
            } catch {
                response = route.kind == .page ? renderPageError(error, ctx: ctx) : renderAPIError(error, requestID: request.logID)
            }
            if route.kind == .page { applyPageHeaders(&response) }
        }
        return response
    }
}
