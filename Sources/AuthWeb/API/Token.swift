import AuthEngine
import HTTP

/// Secure Token refresh (firebase-wire.md §2.10) and session cookies (§2.11).
enum TokenAPI {
    static func refresh(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "TokenAPI.refresh") }
    static func createSessionCookie(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "TokenAPI.createSessionCookie") }
}
