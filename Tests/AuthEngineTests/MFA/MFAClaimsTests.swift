import Testing
@testable import AuthEngine

/// The second factor in tokens (firebase-wire.md §2.17, §5.4): `firebase.sign_in_second_factor`
/// and `second_factor_identifier` stay with the sign-in through refreshes and session cookies,
/// since nginx step-up (`require=mfa`) reads them from the cookie.
@Suite("MFA: second factor claims")
struct MFAClaimsTests {
    typealias F = MFAFixture

    @Test("refreshes keep the second factor claims and the first factor")
    func refreshKeeps() throws {
        let f = try F()
        let signedIn = try signedInWithFactor(f)
        let tokens = try #require(signedIn.tokens)
        var refreshToken = tokens.refreshToken
        for _ in 0..<2 {
            f.clock.advance(seconds: 3000)
            let r = try f.refresh.refresh(grantType: "refresh_token", refreshToken: refreshToken, project: f.project.id, graceSeconds: 10)
            let verified = try f.verify(r.idToken)
            #expect(verified.secondFactor == SecondFactor(factor: "phone", identifier: signedIn.enrollment.enrollmentID))
            #expect(verified.signInProvider == "password")
            refreshToken = r.refreshToken
        }
    }

    @Test("a session cookie minted from such an ID token keeps them")
    func sessionCookieKeeps() throws {
        let f = try F()
        let signedIn = try signedInWithFactor(f)
        let idToken = try #require(signedIn.tokens).idToken
        let cookie = try f.sessions.createSessionCookie(idToken: idToken, validDuration: "3600", project: f.project.id)
        let verified = try f.tokens.verify(cookie, kind: .sessionCookie, project: f.project.id, store: f.store)
        #expect(verified.secondFactor == SecondFactor(factor: "phone", identifier: signedIn.enrollment.enrollmentID))
        let firebase = try #require(verified.claims["firebase"])
        #expect(firebase["sign_in_second_factor"]?.stringValue == "phone")
        #expect(firebase["second_factor_identifier"]?.stringValue == signedIn.enrollment.enrollmentID)
    }

    @Test("a session cookie from a first-factor-only ID token has none")
    func sessionCookieWithout() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        let cookie = try f.sessions.createSessionCookie(idToken: idToken, validDuration: "3600", project: f.project.id)
        #expect(try f.tokens.verify(cookie, kind: .sessionCookie, project: f.project.id, store: f.store).secondFactor == nil)
    }

    @Test("a hosted session started after the second factor carries it")
    func hostedSession() throws {
        let f = try F()
        let signedIn = try signedInWithFactor(f)
        let factor = SecondFactor(identifier: signedIn.enrollment.enrollmentID)
        let cookie = try f.sessions.startHostedSession(account: signedIn.account, provider: signedIn.firstFactor, lifetime: 3600,
                                                       idleTimeout: 0, secondFactor: factor)
        #expect(try f.tokens.verify(cookie, kind: .sessionCookie, project: f.project.id, store: f.store).secondFactor == factor)
    }

    @Test("hints show every digit but the last four as *")
    func obfuscation() {
        #expect(MFAEnrollment.obfuscate("+15555550123") == "+*******0123")
        #expect(MFAEnrollment.obfuscate("+33612345678") == "+*******5678")
        #expect(MFAEnrollment(enrollmentID: "x", phoneNumber: "+447700900123", enrolledAt: 0).obfuscatedPhone == "+********0123")
        // Four digits or fewer have nothing to hide.
        #expect(MFAEnrollment.obfuscate("+1234") == "+1234")
    }

    func signedInWithFactor(_ f: MFAFixture) throws -> PhoneMFA.SignedIn {
        _ = try f.enrolledUser()
        return try f.signInWithSecondFactor()
    }
}
