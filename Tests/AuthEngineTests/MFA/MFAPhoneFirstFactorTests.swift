import Testing
@testable import AuthEngine

/// A user with a phone second factor may not use a phone as first factor (firebase-wire.md
/// §2.17, last item): otherwise one SMS would stand for both factors.
@Suite("MFA: phone first factor of an enrolled user")
struct MFAPhoneFirstFactorTests {
    typealias F = MFAFixture
    static let unsupported = "UNSUPPORTED_FIRST_FACTOR : A phone number cannot be set as a first factor on an SMS based MFA user."

    /// A user who signed up by phone, added a verified email, signed in with it and enrolled a
    /// second phone; with a first-factor code for the first phone sent just before the
    /// enrolment (once enrolled, no code is sent for it: see `sendRefused`).
    func phoneUserWithFactor(_ f: MFAFixture) throws -> (account: Account, sessionInfo: String, code: String) {
        let (account, idToken) = try f.user(phone: F.otherPhone, provider: "password")
        let (sessionInfo, code) = try firstFactorCode(f)
        try f.enrol(idToken, F.phone)
        return (account, sessionInfo, code)
    }

    func firstFactorCode(_ f: MFAFixture, _ number: String = F.otherPhone) throws -> (String, String) {
        let sent = try f.phone.sendCode(.init(phoneNumber: number, appToken: try f.appToken(), apiKey: "key-1", appID: "",
                                              remoteAddress: F.ip, composeSMS: { "Code \($0)" }))
        return (sent.sessionInfo, try f.code(to: number))
    }

    @Test("a phone sign-in of an enrolled user is UNSUPPORTED_FIRST_FACTOR and issues nothing")
    func signIn() throws {
        let f = try F()
        let (account, sessionInfo, code) = try phoneUserWithFactor(f)
        let before = try f.account(account.localID)
        #expect(wireError { try f.phone.signIn(.init(sessionInfo: sessionInfo, code: code, remoteAddress: F.ip)) } == Self.unsupported)
        #expect(try f.account(account.localID) == before)
    }

    @Test("so is a phone re-authentication of an enrolled user")
    func reauth() throws {
        let f = try F()
        let (account, sessionInfo, code) = try phoneUserWithFactor(f)
        let before = try f.account(account.localID)
        #expect(wireError { try f.phone.signIn(.init(sessionInfo: sessionInfo, code: code, operation: .reauth, remoteAddress: F.ip)) }
                == Self.unsupported)
        #expect(try f.account(account.localID) == before)
    }

    @Test("the hosted page's phone sign-in (no tokens) is refused the same way")
    func hostedPage() throws {
        let f = try F()
        let (_, sessionInfo, code) = try phoneUserWithFactor(f)
        #expect(wireError { try f.phone.signIn(.init(sessionInfo: sessionInfo, code: code, remoteAddress: F.ip, issueTokens: false)) }
                == Self.unsupported)
    }

    @Test("no first-factor code is sent to the number of an enrolled user")
    func sendRefused() throws {
        let f = try F()
        _ = try phoneUserWithFactor(f)
        #expect(wireError { _ = try firstFactorCode(f) } == Self.unsupported)
    }

    @Test("nor is a phone linked to an enrolled user as a first factor")
    func linkRefused() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let (sessionInfo, code) = try firstFactorCode(f)
        let enrollment = try f.enrol(idToken, F.phone).enrollment
        let fresh = try f.tokens.mintIDToken(for: try f.account(account.localID), provider: "password", store: f.store,
                                             secondFactor: SecondFactor(identifier: enrollment.enrollmentID))
        #expect(wireError { try f.phone.signIn(.init(sessionInfo: sessionInfo, code: code, idToken: fresh, operation: .link,
                                                     remoteAddress: F.ip)) } == Self.unsupported)
        #expect(try f.account(account.localID).phoneNumber == nil)
    }

    @Test("once the factor is withdrawn the phone signs in again")
    func afterWithdraw() throws {
        let f = try F()
        let (account, _, _) = try phoneUserWithFactor(f)
        let enrollment = try #require(try f.account(account.localID).mfaEnrollments.first)
        let idToken = try f.tokens.mintIDToken(for: try f.account(account.localID), provider: "password", store: f.store,
                                               secondFactor: SecondFactor(identifier: enrollment.enrollmentID))
        _ = try f.mfa.withdraw(idToken: idToken, enrollmentID: enrollment.enrollmentID, remoteAddress: F.ip)
        let (sessionInfo, code) = try firstFactorCode(f)
        guard case let .signedIn(signedIn, tokens?, _) = try f.phone.signIn(.init(sessionInfo: sessionInfo, code: code, remoteAddress: F.ip)) else {
            Issue.record("not signed in"); return
        }
        #expect(signedIn.localID == account.localID)
        #expect(try f.verify(tokens.idToken).signInProvider == "phone")
    }
}
