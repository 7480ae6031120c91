import AuthStore
import HTTP
import Testing
@testable import AuthEngine
@testable import AuthWeb

/// `verify?require=passkey` (protect-passkey.conf) and a passkey session at the step-up
/// (`require=mfa`), in process: who is let in, where the others are sent.
@Suite("Passkey verify")
struct PasskeyVerifyTests {
    static func client(passkeys: Bool) throws -> WebClient {
        var p = WebClient.productionProject()
        p.mfa = .enabled
        p.passkeys.enabled = passkeys
        return try WebClient(projects: [p])
    }

    static func verify(_ c: WebClient, _ cookie: String, require: String) -> Response {
        c.request("GET", "/__/auth/verify", query: require.isEmpty ? "" : "require=" + require,
                  headers: ["cookie": "__Host-gatehouse=" + cookie, "x-original-url": "https://app.example.com/admin/?x=1"])
    }

    static func session(_ c: WebClient, provider: String, secondFactor: SecondFactor? = nil) throws -> String {
        let account = try MFAPageTests.account(c, email: "\(provider)\(secondFactor == nil ? "" : "-mfa")@example.com")
        return try Sessions(store: c.store, tokens: c.app.tokens, random: c.app.random)
            .startHostedSession(account: account, provider: provider, lifetime: 3600, idleTimeout: 0, secondFactor: secondFactor)
    }

    @Test("require=passkey: a passkey session passes; any other, even with a second factor, is sent to the passkey page and back")
    func requirePasskey() throws {
        let c = try Self.client(passkeys: true)
        let passkey = try Self.session(c, provider: Passkeys.provider)
        #expect(Self.verify(c, passkey, require: "passkey").status == 200)
        #expect(Self.verify(c, passkey, require: "passkey").header("X-Auth-Provider") == "passkey")
        let email = try Self.session(c, provider: "password")
        let refused = Self.verify(c, email, require: "passkey")
        #expect(refused.status == 401)
        #expect(refused.header("Location") == "https://auth.example.com/__/auth/passkey?continueUrl=https%3A%2F%2Fapp.example.com%2Fadmin%2F%3Fx%3D1")
        let account = try MFAPageTests.account(c, email: "factor@example.com")
        let withFactor = try Sessions(store: c.store, tokens: c.app.tokens, random: c.app.random).startHostedSession(
            account: account, provider: "password", lifetime: 3600, idleTimeout: 0,
            secondFactor: SecondFactor(identifier: try #require(account.mfaEnrollments.first).enrollmentID))
        #expect(Self.verify(c, withFactor, require: "passkey").status == 401)
        #expect(Self.verify(c, withFactor, require: "mfa").status == 200)
        // Plain verifies are unchanged.
        #expect(Self.verify(c, email, require: "").status == 200)
    }

    @Test("require=mfa: a passkey session (user verified) passes the step-up as it is")
    func passkeyPassesStepUp() throws {
        let c = try Self.client(passkeys: true)
        #expect(Self.verify(c, try Self.session(c, provider: Passkeys.provider), require: "mfa").status == 200)
        #expect(Self.verify(c, try Self.session(c, provider: "phone"), require: "mfa").status == 401)
    }

    @Test("require=passkey in a project without passkeys: nobody can meet it (403)")
    func withoutPasskeys() throws {
        let c = try Self.client(passkeys: false)
        #expect(Self.verify(c, try Self.session(c, provider: "password"), require: "passkey").status == 403)
    }
}
