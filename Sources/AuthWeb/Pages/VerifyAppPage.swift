import AuthEngine
import HTTP

/// The app verification page (firebase-wire.md §4.4) and its callback URL.
enum VerifyAppPage {
    static func handler(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "VerifyAppPage.handler") }
    static func callback(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "VerifyAppPage.callback") }
}
