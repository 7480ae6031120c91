import AuthEngine
import HTTP

/// Email-link wire endpoints (firebase-wire.md §2.3–§2.5, §2.16).
enum EmailLinkAPI {
    static func sendOobCode(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailLinkAPI.sendOobCode") }
    static func signInWithEmailLink(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailLinkAPI.signInWithEmailLink") }
    static func createAuthUri(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailLinkAPI.createAuthUri") }
    static func resetPassword(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailLinkAPI.resetPassword") }
    static func applyOobCode(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailLinkAPI.applyOobCode") }
    static func emulatorOobCodes(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailLinkAPI.emulatorOobCodes") }
    static func appleAppSiteAssociation(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailLinkAPI.appleAppSiteAssociation") }
    static func assetLinks(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "EmailLinkAPI.assetLinks") }
}
