/// A path pattern such as `/identitytoolkit.googleapis.com/v1/projects/{project}:createSessionCookie`.
/// Each `/`-separated segment is a literal, or a literal prefix + `{name}` + literal suffix.
public struct PathPattern: Sendable, CustomStringConvertible {
    enum Segment: Sendable {
        case literal(String)
        case capture(prefix: String, name: String, suffix: String)
    }

    let segments: [Segment]
    public let description: String

    public init(_ pattern: String) {
        description = pattern
        segments = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { seg in
            guard let open = seg.firstIndex(of: "{"), let close = seg.firstIndex(of: "}"), open < close else {
                return .literal(String(seg))
            }
            return .capture(prefix: String(seg[..<open]), name: String(seg[seg.index(after: open)..<close]),
                            suffix: String(seg[seg.index(after: close)...]))
        }
    }

    /// Captured parameters if `path` matches.
    public func match(_ path: String) -> [String: String]? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard parts.count == segments.count else { return nil }
        var params: [String: String] = [:]
        for (seg, part) in zip(segments, parts) {
            switch seg {
            case let .literal(l):
                guard part == l else { return nil }
            case let .capture(prefix, name, suffix):
                guard part.count > prefix.count + suffix.count, part.hasPrefix(prefix), part.hasSuffix(suffix) else { return nil }
                let value = part.dropFirst(prefix.count).dropLast(suffix.count)
                guard !value.contains(":") || suffix.isEmpty else { return nil }
                params[name] = String(value)
            }
        }
        return params
    }
}

/// The outcome of routing: a handler with its path parameters, a wrong method, or nothing.
public enum RouteMatch<Handler> {
    case found(Handler, params: [String: String])
    case methodNotAllowed(allowed: [String])
    case notFound
}

/// One route table: every route with its method and pattern, matched in order.
public struct Router<Handler> {
    public struct Route {
        public let method: String
        public let pattern: PathPattern
        public let handler: Handler
    }

    public private(set) var routes: [Route] = []
    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ handler: Handler) {
        routes.append(Route(method: method.uppercased(), pattern: PathPattern(pattern), handler: handler))
    }

    public func match(method: String, path: String) -> RouteMatch<Handler> {
        var allowed: [String] = []
        let m = method == "HEAD" ? "GET" : method
        for route in routes {
            guard let params = route.pattern.match(path) else { continue }
            if route.method == m || route.method == "*" { return .found(route.handler, params: params) }
            allowed.append(route.method)
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }
}
