@testable import FastCGI
import Glibc
import HTTP
import TestSupport
import Locking

/// A value the responder's thread and the test both touch.
final class Locked<T>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var current: T
    init(_ value: T) {
        current = value
        pthread_mutex_init(&mutex, nil)
    }
    deinit { pthread_mutex_destroy(&mutex) }
    func with<R>(_ body: (inout T) -> R) -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body(&current)
    }
}

/// What one record stream did to the responder.
struct Served {
    /// Requests answered, as `serveConnection` counts them; nil when it did not return in time.
    var count: Int?
    /// The requests the handler saw.
    var requests: [Request]
    /// Everything written back, as records; nil when the output ends inside a record.
    var reply: Reply?
}

/// Real milliseconds since an arbitrary start.
func nowMillis() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
}

/// Feeds `input` to the real responder loop (`serveConnection`, as a worker runs after accept)
/// over a socket pair, then ends the stream as nginx does when done with a connection.
func serve(_ input: [UInt8], maxBodyBytes: Int = 1024, routeBodyLimit: FastCGIServer.RouteBodyLimit? = nil, timeout: Int = 5,
           handler: @escaping (Request) throws -> Response = echo) -> Served {
    serve(steps: [input], maxBodyBytes: maxBodyBytes, routeBodyLimit: routeBodyLimit, timeout: timeout, handler: handler)
}

/// The same for a kept connection: each step is written once the responder has ended the
/// request before it (nginx sends no request before the previous one's END_REQUEST, and libfcgi
/// drops bytes it read past a request's end). Every wait is bounded: the responder's reads time
/// out after `timeout` seconds, and the test gives up on it after twice that.
func serve(steps: [[UInt8]], maxBodyBytes: Int = 1024, routeBodyLimit: FastCGIServer.RouteBodyLimit? = nil, timeout: Int = 5,
           handler: @escaping (Request) throws -> Response = echo) -> Served {
    signal(SIGPIPE, SIG_IGN)
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { return Served(count: nil, requests: [], reply: nil) }
    let (web, responder) = (fds[0], fds[1])
    var wait = timeval(tv_sec: timeout, tv_usec: 0)
    for (fd, option) in [(responder, SO_RCVTIMEO), (responder, SO_SNDTIMEO), (web, SO_SNDTIMEO), (web, SO_RCVTIMEO)] {
        setsockopt(fd, SOL_SOCKET, option, &wait, socklen_t(MemoryLayout<timeval>.size))
    }

    let seen = Locked<[Request]>([])
    let result = Locked<Int?>(nil)
    // The application renders the 413 (AuthWeb's envelope in the product); here, plain text naming the limit it is given.
    let server = FastCGIServer(options: .init(address: .inherited, workers: 1, maxBodyBytes: maxBodyBytes,
                                              tooLarge: { limit in .text("PAYLOAD_TOO_LARGE : Request body larger than \(limit) bytes", status: 413) },
                                              routeBodyLimit: routeBodyLimit),
                               log: { _ in })
    let thread = TestThread {
        // libfcgi owns the responder's end from here and closes it when the loop ends.
        let n = server.serveConnection(responder) { request in
            seen.with { $0.append(request) }
            return try handler(request)
        }
        result.with { $0 = n }
    }

    let deadline = nowMillis() + Int64(timeout) * 2000
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    /// Reads what the responder wrote until `enough` says so, it closes its end, or the deadline.
    func read(until enough: ([UInt8]) -> Bool) {
        while nowMillis() < deadline, !enough(output) {
            let n = buffer.withUnsafeMutableBytes { recv(web, $0.baseAddress, $0.count, 0) }
            if n > 0 { output += buffer[..<n]; continue }
            if n == 0 || (errno != EAGAIN && errno != EINTR) { return }
        }
    }
    for (i, step) in steps.enumerated() {
        var written = 0
        while written < step.count {
            let n = step[written...].withUnsafeBytes { send(web, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the responder closed early, or stopped reading
            written += n
        }
        if i < steps.count - 1 {
            read { out in (Record.split(out).map { Reply(records: $0).ends.count } ?? 0) > i }
        }
    }
    shutdown(web, Int32(SHUT_WR))
    read { _ in false }
    while result.with({ $0 }) == nil && nowMillis() < deadline { usleep(1_000) }
    let count = result.with { $0 }
    if count != nil {
        thread.join()
    } else {
        // Unblock the responder so the process can still end; the test has already failed.
        shutdown(web, Int32(SHUT_RDWR))
    }
    close(web)
    return Served(count: count, requests: seen.with { $0 }, reply: Record.split(output).map(Reply.init))
}

/// Answers `METHOD path` and the body's length, so a test can tell which request it sees.
func echo(_ r: Request) -> Response {
    Response(status: 200, headers: [("Content-Type", "text/plain")], body: Array("\(r.method) \(r.path) \(r.body.count)".utf8))
}

