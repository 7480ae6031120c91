import Testing
@testable import AuthEngine

/// `mfaEnrollment:withdraw` (firebase-wire.md §2.17): the factor goes, and so does every token
/// and session issued before, which may have been earned with it.
@Suite("MFA: withdrawing a factor")
struct MFAWithdrawTests {
    typealias F = MFAFixture

    @Test("withdraw removes the factor and answers new tokens without a second factor")
    func removes() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let first = try f.enrol(idToken, F.testNumber)
        let kept = first.enrollment
        let gone = try f.enrol(first.tokens.idToken, F.phone)
        f.clock.advance(seconds: 5)
        let r = try f.mfa.withdraw(idToken: gone.tokens.idToken, enrollmentID: gone.enrollment.enrollmentID, remoteAddress: F.ip)
        #expect(r.account.mfaEnrollments == [kept])
        #expect(try f.account(account.localID).mfaEnrollments == [kept])
        let verified = try f.verify(r.tokens.idToken)
        #expect(verified.uid == account.localID && verified.secondFactor == nil && verified.signInProvider == "password")
        let firebase = try #require(verified.claims["firebase"])
        #expect(firebase["sign_in_second_factor"] == nil && firebase["second_factor_identifier"] == nil)
        // The new tokens work: the ID token for the account, the refresh token once.
        #expect(try f.mfa.accounts.account(forIDToken: r.tokens.idToken, project: f.project.id).0.localID == account.localID)
        let refreshed = try f.refresh.refresh(grantType: "refresh_token", refreshToken: r.tokens.refreshToken, project: f.project.id, graceSeconds: 10)
        #expect(try f.verify(refreshed.idToken).secondFactor == nil)
    }

    @Test("earlier refresh tokens, ID tokens and sessions are revoked")
    func revokesEarlier() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let enrolled = try f.enrol(idToken, F.phone)
        let signedIn = try #require(try f.signInWithSecondFactor().tokens)
        let cookie = try f.sessions.createSessionCookie(idToken: signedIn.idToken, validDuration: nil, project: f.project.id)
        #expect(try f.sessions.authorize(cookie: cookie, project: f.project.id, cache: nil).identity?.uid == account.localID)
        f.clock.advance(seconds: 2)
        let r = try f.mfa.withdraw(idToken: signedIn.idToken, enrollmentID: enrolled.enrollment.enrollmentID, remoteAddress: F.ip)

        for old in [enrolled.tokens.refreshToken, signedIn.refreshToken] {
            #expect(wireError { try f.refresh.refresh(grantType: "refresh_token", refreshToken: old, project: f.project.id, graceSeconds: 10) }
                    == "TOKEN_EXPIRED")
        }
        #expect(wireError { try f.mfa.accounts.account(forIDToken: signedIn.idToken, project: f.project.id) } == "TOKEN_EXPIRED")
        guard case .signedOut = try f.sessions.authorize(cookie: cookie, project: f.project.id, cache: nil) else {
            Issue.record("the session outlived the factor"); return
        }
        #expect(try f.store.session(sidHash: Sessions.hash(sid: try sid(of: cookie)))?.revokedAt != nil)
        // The tokens withdraw answered are not revoked with them.
        #expect(try f.refresh.refresh(grantType: "refresh_token", refreshToken: r.tokens.refreshToken, project: f.project.id,
                                      graceSeconds: 10).localID == account.localID)
    }

    @Test("an unknown enrollment id is MFA_ENROLLMENT_NOT_FOUND, a missing one MISSING_MFA_ENROLLMENT_ID; nothing is revoked")
    func unknownID() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let enrolled = try f.enrol(idToken, F.phone)
        let (_, bobs) = try f.enrolledUser("bob@example.com", F.otherPhone)
        f.clock.advance(seconds: 2)
        #expect(wireError { try f.mfa.withdraw(idToken: idToken, enrollmentID: "NoSuchEnrollmentIdXXXXXXXXXX", remoteAddress: F.ip) }
                == "MFA_ENROLLMENT_NOT_FOUND")
        // Another user's factor cannot be withdrawn with this user's token.
        #expect(wireError { try f.mfa.withdraw(idToken: idToken, enrollmentID: bobs.enrollmentID, remoteAddress: F.ip) }
                == "MFA_ENROLLMENT_NOT_FOUND")
        for missing in [nil, ""] as [String?] {
            #expect(wireError { try f.mfa.withdraw(idToken: idToken, enrollmentID: missing, remoteAddress: F.ip) } == "MISSING_MFA_ENROLLMENT_ID")
        }
        #expect(try f.account(account.localID).mfaEnrollments == [enrolled.enrollment])
        #expect(try f.refresh.refresh(grantType: "refresh_token", refreshToken: enrolled.tokens.refreshToken, project: f.project.id,
                                      graceSeconds: 10).localID == account.localID)
    }

    @Test("after the last factor is withdrawn an email link signs in with tokens again")
    func lastFactor() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        let enrolled = try f.enrol(idToken, F.phone)
        #expect(try f.emailLinkSignIn().challenge != nil)
        _ = try f.mfa.withdraw(idToken: enrolled.tokens.idToken, enrollmentID: enrolled.enrollment.enrollmentID, remoteAddress: F.ip)
        let r = try f.emailLinkSignIn()
        #expect(r.challenge == nil && r.tokens != nil)
    }

    /// The `sid` claim of a session cookie.
    func sid(of cookie: String) throws -> String {
        try #require(SessionWorld.claims(cookie)["sid"]?.stringValue)
    }
}
