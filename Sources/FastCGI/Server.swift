public import CFastCGI
public import HTTP
import Synchronization
import TextCoding
#if canImport(Glibc)
public import Glibc
#endif
import Locking

/// Where the responder listens.
public enum ListenAddress: Equatable, CustomStringConvertible {
    /// A unix socket it creates (and removes on exit) with this mode.
    case unix(path: String, mode: mode_t)
    /// `host:port` TCP.
    case tcp(String)
    /// The socket inherited on fd 0 (spawn-fcgi, systemd socket activation).
    case inherited

    public var description: String {
        switch self {
        case let .unix(path, mode): return "unix:\(path) (mode \(String(mode, radix: 8)))"
        case let .tcp(addr): return "tcp:\(addr)"
        case .inherited: return "inherited fd 0"
        }
    }
}

/// Serves any `(Request) throws -> Response` over FastCGI (libfcgi), one request per worker thread.
/// Each worker gets its own handler from `makeHandler` (so each owns its SQLite connection).
// @unchecked: libfcgi's listening socket and the worker pthreads, set up before the workers start.
public final class FastCGIServer: @unchecked Sendable {
    public typealias Handler = (Request) throws -> Response

    public struct Options {
        public var address: ListenAddress
        public var workers: Int
        /// The one body limit (`WebSettings.maxBodyBytes`), and how the application renders a
        /// body past it (the transport knows no wire format).
        public var maxBodyBytes: Int
        public var tooLarge: @Sendable (_ limit: Int) -> Response
        /// The limit of the route a method and path name, where the application gives one route
        /// a larger limit of its own (the admin import); nil: `maxBodyBytes` for every request.
        public var routeBodyLimit: RouteBodyLimit?
        public var backlog: Int32
        public init(address: ListenAddress, workers: Int = 2 * max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))),
                    maxBodyBytes: Int, tooLarge: @escaping @Sendable (_ limit: Int) -> Response, routeBodyLimit: RouteBodyLimit? = nil,
                    backlog: Int32 = 256) {
            self.address = address; self.workers = workers; self.maxBodyBytes = maxBodyBytes; self.tooLarge = tooLarge
            self.routeBodyLimit = routeBodyLimit; self.backlog = backlog
        }
    }

    /// A route's body limit by method and path.
    public typealias RouteBodyLimit = @Sendable (_ method: String, _ path: String) -> Int

    public let options: Options
    let log: (String) -> Void
    private var listenFD: Int32 = -1
    /// Held while a worker waits for a new connection (as the baseline responder and libfcgi's
    /// own threaded example do); a worker on a kept connection reads its next request without it.
    private let acceptLock = Lock()
    /// Set once by `stop()`; read by every worker on every request (an atomic, not a mutex all
    /// workers would take).
    private let stopping = Atomic<Bool>(false)
    private var threads: [pthread_t] = []

    public init(options: Options, log: @escaping (String) -> Void) {
        self.options = options
        self.log = log
    }

    /// Opens the socket. Throws a message naming the failed step.
    public func open() throws {
        guard FCGX_Init() == 0 else { throw ServerError("FCGX_Init failed") }
        switch options.address {
        case .inherited:
            listenFD = 0
        case let .tcp(addr):
            listenFD = FCGX_OpenSocket(addr, options.backlog)
            guard listenFD >= 0 else { throw ServerError("cannot listen on \(addr): \(String(cString: strerror(errno)))") }
        case let .unix(path, mode):
            if access(path, F_OK) == 0 {
                guard !FastCGIServer.socketIsLive(path) else { throw ServerError("socket \(path) is in use by another process") }
                unlink(path)
            }
            let old = umask(0o177)
            listenFD = FCGX_OpenSocket(path, options.backlog)
            umask(old)
            guard listenFD >= 0 else { throw ServerError("cannot listen on \(path): \(String(cString: strerror(errno)))") }
            guard chmod(path, mode) == 0 else { throw ServerError("chmod \(path): \(String(cString: strerror(errno)))") }
        }
    }

    static func socketIsLive(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return false }
        withUnsafeMutableBytes(of: &addr.sun_path) { buf in for (i, b) in bytes.enumerated() { buf[i] = b } }
        let rc = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return rc == 0
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Starts the workers; returns at once.
    public func start(makeHandler: @escaping (Int) throws -> Handler) throws {
        InFlight.install()
        for i in 0..<options.workers {
            let handler = try makeHandler(i)
            let box = Unmanaged.passRetained(WorkerBox(server: self, handler: handler, index: i))
            var tid = pthread_t()
            let rc = pthread_create(&tid, nil, { raw in
                let box = Unmanaged<WorkerBox>.fromOpaque(raw!).takeRetainedValue()
                box.server.workerLoop(box.handler, slot: box.index)
                return nil
            }, box.toOpaque())
            guard rc == 0 else { box.release(); throw ServerError("pthread_create failed: \(rc)") }
            threads.append(tid)
        }
    }

    /// Stops accepting; in-flight requests finish; `wait()` then returns.
    public func stop() {
        let already = stopping.exchange(true, ordering: .acquiringAndReleasing)
        guard !already else { return }
        FCGX_ShutdownPending()
        // Wakes every thread blocked in accept(2); kept-alive connections end after their request.
        if listenFD >= 0 { shutdown(listenFD, Int32(SHUT_RDWR)) }
    }

    /// Joins the workers, then removes the socket the server created.
    public func wait() {
        for t in threads { pthread_join(t, nil) }
        threads = []
        if case let .unix(path, _) = options.address { unlink(path) }
        if listenFD > 0 { close(listenFD); listenFD = -1 }
    }

    func workerLoop(_ handler: Handler, slot: Int) {
        var req = FCGX_Request()
        guard FCGX_InitRequest(&req, listenFD, 0) == 0 else { log("FCGX_InitRequest failed"); return }
        // The response head is encoded into this buffer, reused from request to request.
        var head = [UInt8]()
        head.reserveCapacity(1024)
        while !isStopping {
            let fresh = req.ipcFd < 0
            if fresh { acceptLock.lock() }
            let rc = isStopping ? -1 : FCGX_Accept_r(&req)
            if fresh { acceptLock.unlock() }
            if rc < 0 { break }
            serve(&req, handler, head: &head, slot: slot)
            if isStopping { req.keepConnection = 0 }
            FCGX_Finish_r(&req)
        }
        FCGX_Free(&req, 1)
    }

    /// Serves the requests of one already connected socket, as a worker does after `accept`, until
    /// the peer ends it or its record stream is broken; returns how many requests were answered.
    /// The request has no listening socket, so libfcgi's accept after a broken stream fails
    /// instead of waiting. Feeds recorded or generated record streams to the responder (the
    /// `fastcgi-records` fuzz target).
    func serveConnection(_ fd: Int32, _ handler: Handler) -> Int {
        guard FCGX_Init() == 0 else { return 0 }
        var req = FCGX_Request()
        guard FCGX_InitRequest(&req, -1, 0) == 0 else { return 0 }
        req.ipcFd = fd
        // FCGX_Accept_r first finishes the previous request, closing a connection not kept.
        req.keepConnection = 1
        var head = [UInt8]()
        var served = 0
        while FCGX_Accept_r(&req) >= 0 {
            serve(&req, handler, head: &head, slot: -1)
            FCGX_Finish_r(&req)
            served += 1
        }
        FCGX_Free(&req, 1)
        return served
    }

    func serve(_ req: inout FCGX_Request, _ handler: Handler, head: inout [UInt8], slot: Int) {
        let params = CGIParams(envp: req.envp)
        let outStream = req.out
        let response: Response
        let method = params[.requestMethod] ?? "GET"
        // libfcgi ends the params at the first error as at their end (a stream cut short, a record
        // of another version or type), so such a request would run with only the params before it.
        let paramsBroken = FCGX_GetError(req.in) != 0
        let limit = FastCGIServer.bodyLimit(params, max: options.maxBodyBytes, route: options.routeBodyLimit)
        switch paramsBroken ? .failure(.readFailed)
            : FastCGIServer.readBody(params: params, max: limit, read: { buf, n in FCGX_GetStr(buf, n, req.in) }) {
        case .failure where paramsBroken:
            response = FastCGIServer.badGateway("reading the request parameters")
        case let .failure(step):
            if step == .tooLarge { FastCGIServer.drain { buf, n in FCGX_GetStr(buf, n, req.in) } }
            response = step == .tooLarge ? options.tooLarge(limit) : FastCGIServer.badGateway("reading the request body")
        case let .success(body):
            let request = FastCGIServer.request(params, body: body)
            InFlight.begin(slot: slot, requestID: request.requestID, method: request.method, path: request.path)
            defer { InFlight.end(slot: slot) }
            do {
                response = try handler(request)
            } catch {
                log("[\(request.logID)] handler failed: \(error)")
                response = FastCGIServer.badGateway("handling the request")
            }
        }
        head.removeAll(keepingCapacity: true)
        FastCGIServer.encodeHead(response, into: &head)
        FastCGIServer.put(head, outStream)
        if method != "HEAD", !response.body.isEmpty { FastCGIServer.put(response.body, outStream) }
    }

    static func put(_ bytes: [UInt8], _ stream: UnsafeMutablePointer<FCGX_Stream>?) {
        _ = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { FCGX_PutStr($0.baseAddress, Int32($0.count), stream) }
        }
    }

    /// The most of a refused body read and dropped before answering (see `drain`).
    static let drainLimit = 8 << 20

    /// Reads and drops what is left of a body too large to handle, up to `drainLimit`: the web
    /// server is still sending it, and a connection closed on unread bytes is reset, which nginx
    /// reports as 502 instead of the 413 this request gets (seen under load). Past the limit the
    /// connection is closed anyway.
    static func drain(_ read: (UnsafeMutablePointer<CChar>, Int32) -> Int32) {
        let chunk: Int32 = 16 * 1024
        var scratch = [CChar](repeating: 0, count: Int(chunk))
        var dropped = 0
        while dropped < drainLimit {
            let n = scratch.withUnsafeMutableBufferPointer { b -> Int32 in
                guard let base = b.baseAddress else { return 0 }
                return read(base, chunk)
            }
            guard n > 0 else { return }
            // Widening a positive Int32 cannot trap; the sum stays below drainLimit + Int32.max.
            dropped += Int(n)
        }
    }

    // MARK: - Shared by FastCGI and CGI modes

    enum BodyFailure: Error { case tooLarge, readFailed }

    /// The limit a request's body meets: `max`, unless the body is declared longer and its route
    /// has a larger limit of its own. The route is looked up only then, so a request within the
    /// default limit (every request but an import) pays nothing for it.
    static func bodyLimit(_ params: CGIParams, max: Int, route: RouteBodyLimit?) -> Int {
        guard let route, let declared = Int(params[.contentLength] ?? ""), declared > max else { return max }
        return Swift.max(max, route(params[.requestMethod] ?? "GET", path(params)))
    }

    static func readBody(params: CGIParams, max: Int, read: (UnsafeMutablePointer<CChar>, Int32) -> Int32) -> Result<[UInt8], BodyFailure> {
        let raw = params[.contentLength] ?? ""
        // CONTENT_LENGTH is empty or decimal digits (RFC 3875 §4.1.2). Anything else is refused
        // rather than read as no body, and digits too many for an Int are a body far too large.
        if !raw.isEmpty, Int(raw) == nil || !raw.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return .failure(.tooLarge) }
        let declared = Int(raw) ?? 0
        if declared > max { return .failure(.tooLarge) }
        guard declared > 0 else { return .success([]) }
        var body = [UInt8](repeating: 0, count: declared)
        var got = 0
        while got < declared {
            let n = body.withUnsafeMutableBufferPointer { buf in
                buf.baseAddress!.advanced(by: got).withMemoryRebound(to: CChar.self, capacity: declared - got) {
                    read($0, Int32(declared - got))
                }
            }
            if n <= 0 { break }
            got += Int(n)
        }
        guard got == declared else { return .failure(.readFailed) }
        return .success(body)
    }

    static func params(_ envp: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String: String] {
        var out: [String: String] = [:]
        CGIParams.forEach(envp) { name, value in
            out[String(decoding: name, as: UTF8.self)] = String(decoding: value, as: UTF8.self)
        }
        return out
    }

    /// Builds a Request from CGI/FastCGI parameters (RFC 3875 meta-variables).
    public static func request(params: [String: String], body: [UInt8]) -> Request {
        request(CGIParams(params), body: body)
    }

    static func request(_ params: CGIParams, body: [UInt8]) -> Request {
        var headers = params.headers
        if let ct = params[.contentType], !ct.isEmpty { headers["content-type"] = ct }
        if let cl = params[.contentLength], !cl.isEmpty { headers["content-length"] = cl }
        let uri = params[.requestURI] ?? "/"
        let path = path(params)
        let query = params[.queryString] ?? (uri.firstIndex(of: "?").map { String(uri[uri.index(after: $0)...]) } ?? "")
        let https = (params[.https] ?? "").lowercased() == "on" || params[.requestScheme] == "https"
        let host = headers["host"] ?? params[.serverName] ?? "localhost"
        return Request(method: params[.requestMethod] ?? "GET", path: path, rawQuery: query, lowercasedHeaders: headers, body: body,
                       remoteAddress: params[.remoteAddr] ?? "", isHTTPS: https, host: host,
                       requestID: params[.requestID].map(Request.loggable) ?? "-")
    }

    /// The request's decoded path: `DOCUMENT_URI`, else `SCRIPT_NAME` + `PATH_INFO`, else the path
    /// of `REQUEST_URI`.
    static func path(_ params: CGIParams) -> String {
        if let document = params[.documentURI], !document.isEmpty { return document }
        let script = (params[.scriptName] ?? "") + (params[.pathInfo] ?? "")
        guard script.isEmpty else { return script }
        let uri = params[.requestURI] ?? "/"
        return PercentEncoding.decode(uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/", plusAsSpace: false)
    }

    /// CGI response bytes: `Status:` line, headers, blank line, body.
    public static func encode(_ r: Response, includeBody: Bool) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(128 + r.headers.count * 48 + (includeBody ? r.body.count : 0))
        encodeHead(r, into: &out)
        if includeBody { out.append(contentsOf: r.body) }
        return out
    }

    static func badGateway(_ step: String) -> Response {
        .text("502 Bad Gateway: Gatehouse failed while \(step).\n", status: 502)
    }
}

final class WorkerBox {
    let server: FastCGIServer
    let handler: FastCGIServer.Handler
    let index: Int
    init(server: FastCGIServer, handler: @escaping FastCGIServer.Handler, index: Int) {
        self.server = server; self.handler = handler; self.index = index
    }
}

/// A start-up failure, naming the step.
public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
