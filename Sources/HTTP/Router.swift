/// A path pattern such as `/identitytoolkit.googleapis.com/v1/projects/{project}:createSessionCookie`.
/// Each `/`-separated segment is a literal, or a literal prefix + `{name}` + literal suffix.
/// Matching compares UTF-8 bytes segment by segment and allocates only the captured values.
public struct PathPattern: Sendable, CustomStringConvertible {
    enum Segment: Sendable {
        case literal([UInt8])
        case capture(prefix: [UInt8], name: String, suffix: [UInt8])
    }

    let segments: [Segment]
    public let description: String
    /// True when no segment captures: the pattern then matches its own text.
    public let isLiteral: Bool

    /// The pattern's bytes before its first capture (all of them for a literal pattern): a path
    /// that does not start with them cannot match.
    let head: [UInt8]

    public init(_ pattern: String) {
        description = pattern
        // Split on UTF-8 bytes: `/`, `{` and `}` are ASCII, so never part of a longer sequence.
        let bytes = Array(pattern.utf8)
        var segments: [Segment] = []
        var literal = true
        var start = bytes.firstIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? bytes.count + 1
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "/") { end += 1 }
            let seg = bytes[start..<end]
            if let open = seg.firstIndex(of: UInt8(ascii: "{")), let close = seg.firstIndex(of: UInt8(ascii: "}")), open < close {
                segments.append(.capture(prefix: Array(seg[..<open]), name: String(decoding: seg[(open + 1)..<close], as: UTF8.self),
                                         suffix: Array(seg[(close + 1)...])))
                literal = false
            } else {
                segments.append(.literal(Array(seg)))
            }
            start = end + 1
        }
        self.segments = segments
        isLiteral = literal
        head = bytes.firstIndex(of: UInt8(ascii: "{")).map { Array(bytes[..<$0]) } ?? bytes
    }

    /// Whether `path` begins with the pattern's text before its first capture.
    func mayMatch(_ path: String) -> Bool {
        guard head.first == UInt8(ascii: "/") else { return true }
        var path = path
        return path.withUTF8 { p in p.count >= head.count && head.withUnsafeBufferPointer { h in p.starts(with: h) } }
    }

    /// Whether `path` (a literal pattern's text) matches; between two texts that start with `/`
    /// and a pattern without captures this is plain equality, which keeps building a table cheap.
    func matches(literal path: String) -> Bool {
        let slash = UInt8(ascii: "/")
        if isLiteral, description.utf8.first == slash, path.utf8.first == slash { return description == path }
        return match(path) != nil
    }

    /// Captured parameters if `path` matches.
    public func match(_ path: String) -> [String: String]? {
        let u = Substring(path).utf8
        let slash = UInt8(ascii: "/")
        // The text before the first `/` is never compared (as for a path that starts with `/`).
        guard var i = u.firstIndex(of: slash) else { return segments.isEmpty ? [:] : nil }
        var params: [String: String] = [:]
        for seg in segments {
            guard i < u.endIndex, u[i] == slash else { return nil }
            let start = u.index(after: i)
            var end = start
            while end < u.endIndex, u[end] != slash { u.formIndex(after: &end) }
            let part = u[start..<end]
            i = end
            switch seg {
            case let .literal(l):
                guard part.elementsEqual(l) else { return nil }
            case let .capture(prefix, name, suffix):
                let n = part.count
                guard n > prefix.count + suffix.count, part.starts(with: prefix), part.reversed().starts(with: suffix.reversed()) else { return nil }
                let value = part.dropFirst(prefix.count).dropLast(suffix.count)
                guard suffix.isEmpty || !value.contains(UInt8(ascii: ":")) else { return nil }
                params[name] = String(Substring(value))
            }
        }
        return i == u.endIndex ? params : nil
    }
}

/// The outcome of routing: a handler with its path parameters, a wrong method, or nothing.
public enum RouteMatch<Handler> {
    case found(Handler, params: [String: String])
    case methodNotAllowed(allowed: [String])
    case notFound
}

/// Two outcomes compared (the index's tests compare a table with and without it).
extension RouteMatch: Equatable where Handler: Equatable {}

/// One route table: every route with its method and pattern, matched in order. Once
/// `indexLiterals()` has run, paths equal to a literal pattern are answered from a dictionary
/// that lists, in table order, every route matching that path (so the outcome is the same as
/// walking the whole table). A process that serves one request (CGI) skips the index: building
/// it tries every capturing pattern against every literal path, ~16 k instructions a route.
public struct Router<Handler> {
    public struct Route {
        public let method: String
        public let pattern: PathPattern
        public let handler: Handler
    }

    public private(set) var routes: [Route] = []
    private var exact: [String: [Int]] = [:]
    public init() {}

    /// Adds a route (after every route added before it).
    public mutating func add(_ method: String, _ pattern: String, _ handler: Handler) {
        routes.append(Route(method: method.uppercased(), pattern: PathPattern(pattern), handler: handler))
    }

    /// Indexes the literal paths. Between paths that start with `/`, a literal pattern matches
    /// only its own text, so only capturing patterns are tried against the indexed paths (and
    /// only those that start with the pattern's text before its first capture).
    public mutating func indexLiterals() {
        exact = [:]
        var patterned: [Int] = []
        for (index, route) in routes.enumerated() {
            let pattern = route.pattern.description
            if route.pattern.isLiteral, pattern.utf8.first == UInt8(ascii: "/") {
                if exact[pattern] == nil {
                    exact[pattern] = patterned.filter { routes[$0].pattern.mayMatch(pattern) && routes[$0].pattern.match(pattern) != nil }
                }
                exact[pattern]!.append(index)
            } else {
                patterned.append(index)
                for path in exact.keys where route.pattern.mayMatch(path) && route.pattern.matches(literal: path) {
                    exact[path]!.append(index)
                }
            }
        }
    }

    public func match(method: String, path: String) -> RouteMatch<Handler> {
        var allowed: [String] = []
        let m = method == "HEAD" ? "GET" : method
        if let candidates = exact[path] {
            for i in candidates {
                let route = routes[i]
                if route.method == m || route.method == "*" {
                    return .found(route.handler, params: route.pattern.isLiteral ? [:] : route.pattern.match(path) ?? [:])
                }
                allowed.append(route.method)
            }
            return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
        }
        for route in routes {
            guard let params = route.pattern.match(path) else { continue }
            if route.method == m || route.method == "*" { return .found(route.handler, params: params) }
            allowed.append(route.method)
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }
}

extension Router: Sendable where Handler: Sendable {}
extension Router.Route: Sendable where Handler: Sendable {}
