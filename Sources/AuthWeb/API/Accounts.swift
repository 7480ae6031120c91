import AuthEngine
import HTTP

/// Account management for the Admin SDKs and signed-in users (firebase-wire.md §2.6–§2.9, §2.12, §2.13).
enum AccountsAPI {
    static func create(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountsAPI.create") }
    static func update(_ ctx: inout Context) throws -> Response {
        if ctx.body["oobCode"] != nil { return try EmailLinkAPI.applyOobCode(&ctx) }
        throw AuthError(.notImplemented, "AccountsAPI.update")
    }
    static func delete(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountsAPI.delete") }
    static func batchDelete(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountsAPI.batchDelete") }
    static func batchGet(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountsAPI.batchGet") }
    static func signUp(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountsAPI.signUp") }
    static func projectConfig(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountsAPI.projectConfig") }
    static func emulatorDeleteAccounts(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AccountsAPI.emulatorDeleteAccounts") }
}
