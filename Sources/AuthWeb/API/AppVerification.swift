import AuthEngine
import HTTP

/// Proof-of-work challenge and reCAPTCHA parameter endpoints (firebase-wire.md §2.14).
enum AppVerificationAPI {
    static func challenge(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AppVerificationAPI.challenge") }
    static func solve(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AppVerificationAPI.solve") }
    static func recaptchaParams(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AppVerificationAPI.recaptchaParams") }
    static func recaptchaConfig(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "AppVerificationAPI.recaptchaConfig") }
}
