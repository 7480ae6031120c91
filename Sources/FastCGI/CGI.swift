import CFastCGI
public import HTTP
#if canImport(Glibc)
import Glibc
#endif

/// CGI mode (RFC 3875): one request from the environment and stdin, the response on stdout.
public enum CGIResponder {
    /// True when fd 0 is not a FastCGI listening socket.
    public static var stdinIsNotASocket: Bool { FCGX_IsCGI() != 0 }

    /// `maxBodyBytes`, `tooLarge` and `routeBodyLimit` as in `FastCGIServer.Options`.
    public static func serveOne(maxBodyBytes: Int, tooLarge: (_ limit: Int) -> Response, routeBodyLimit: FastCGIServer.RouteBodyLimit? = nil,
                                handler: (Request) throws -> Response, log: (String) -> Void) {
        let params = CGIParams(envp: environ)
        let response: Response
        let limit = FastCGIServer.bodyLimit(params, max: maxBodyBytes, route: routeBodyLimit)
        switch FastCGIServer.readBody(params: params, max: limit, read: { buf, n in Int32(read(0, buf, Int(n))) }) {
        case .failure(.tooLarge): response = tooLarge(limit)
        case .failure: response = FastCGIServer.badGateway("reading the request body")
        case let .success(body):
            do { response = try handler(FastCGIServer.request(params, body: body)) } catch {
                log("handler failed: \(error)")
                response = FastCGIServer.badGateway("handling the request")
            }
        }
        let bytes = FastCGIServer.encode(response, includeBody: params[.requestMethod] != "HEAD")
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            off += n
        }
    }
}
