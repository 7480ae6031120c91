import AuthEngine
import HTTP

/// GET /__/auth/verify for nginx auth_request.
enum VerifyAPI {
    static func verify(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "VerifyAPI.verify") }
}
