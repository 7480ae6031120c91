import AuthEngine
import HTTP

/// The email action handler, the link wrapper and the hosted email sign-in page (firebase-wire.md §4.1–§4.2).
enum EmailPages {
    static func action(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailPages.action") }
    static func confirm(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailPages.confirm") }
    static func links(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailPages.links") }
    static func show(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailPages.show") }
    static func start(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailPages.start") }
}
