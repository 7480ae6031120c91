import AuthEngine
import HTTP

/// The hosted phone sign-in page and the sign-in chooser.
enum PhonePage {
    static func chooser(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "PhonePage.chooser") }
    static func show(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "PhonePage.show") }
    static func start(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "PhonePage.start") }
    static func verify(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "PhonePage.verify") }
}
