import AuthStore
import Testing
@testable import AuthEngine

@Suite("Phone sign-in: app tokens where none is required")
struct PhoneAppTokenDevTests {
    @Test("in dev mode a supplied Gatehouse app token is consumed once; reusing it fails")
    func devModeTokenSingleUse() throws {
        let f = try PhoneFixture(dev: true)
        let token = try f.appToken()
        _ = try f.send("+33612345678", token: .some(token))
        #expect(throws: AuthError.self) { try f.send("+4915123456789", token: .some(token)) }
    }

    @Test("in dev mode a foreign placeholder token is ignored, as the emulator ignores it")
    func devModeForeignTokenIgnored() throws {
        let f = try PhoneFixture(dev: true)
        #expect(try f.send("+33612345678", token: .some("fake-recaptcha-token")).smsQueued)
    }
}
