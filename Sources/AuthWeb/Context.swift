public import AuthEngine
public import HTTP
public import JSONValue

/// One request in flight: the request, its project, its store connection, parsed body.
public struct Context {
    public let app: WebApp
    public let request: Request
    public let store: any GatehouseStore
    public let params: [String: String]
    /// Set by the guards.
    public var project: ProjectSettings
    public var isAdmin = false
    public var apiKey: String?
    /// The JSON body (normalised per firebase-wire.md §1.3), set by the `.json` guard.
    public var body: JSON = .object([])

    init(app: WebApp, request: Request, store: any GatehouseStore, params: [String: String]) {
        self.app = app
        self.request = request
        self.store = store
        self.params = params
        self.project = app.settings.defaultProject
    }

    public var now: Millis { app.clock.now() }

    /// Origin used in links and redirects: the configured public origin, else the request's.
    public var origin: String { app.settings.publicOrigin ?? request.origin }

    // MARK: body access

    public func string(_ key: String) -> String? {
        guard let v = body[key] else { return nil }
        switch v {
        case let .string(s): return s
        // An integral number beyond Int64 (1e300) is written as a Double: a conversion would trap.
        case let .number(n): return Int64(exactly: n).map { String($0) } ?? String(n)
        case let .bool(b): return b ? "true" : "false"
        default: return nil
        }
    }

    /// A non-empty string field.
    public func nonEmpty(_ key: String) -> String? { string(key).flatMap { $0.isEmpty ? nil : $0 } }

    public func bool(_ key: String) -> Bool {
        switch body[key] {
        case let .bool(b)?: return b
        case let .string(s)?: return s == "true"
        default: return false
        }
    }

    public func stringArray(_ key: String) -> [String] {
        switch body[key] {
        case let .array(items)?: return items.compactMap { $0.stringValue }
        case let .string(s)?: return [s]
        default: return []
        }
    }

    /// Locale: `X-Firebase-Locale` → `hl`/`lang` → `Accept-Language` → project default → en.
    public var locale: String {
        app.templates.locales.resolve(
            header: request.header("x-firebase-locale"),
            parameter: request.query("hl") ?? request.query("lang"),
            acceptLanguage: request.header("accept-language"),
            projectDefault: project.defaultLocale)
    }
}
