import AuthEngine
import HTTP

/// The signed-in page and sign-out.
enum AccountPage {
    static func show(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountPage.show") }
    static func signOut(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountPage.signOut") }
}
