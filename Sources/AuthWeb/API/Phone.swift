import AuthEngine
import HTTP

/// Phone sign-in wire endpoints (firebase-wire.md §2.1, §2.2, §2.18).
enum PhoneAPI {
    static func sendVerificationCode(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "PhoneAPI.sendVerificationCode") }
    static func signInWithPhoneNumber(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "PhoneAPI.signInWithPhoneNumber") }
    static func emulatorVerificationCodes(_ ctx: inout Context) throws -> Response { throw AuthError(.notImplemented, "PhoneAPI.emulatorVerificationCodes") }
}
