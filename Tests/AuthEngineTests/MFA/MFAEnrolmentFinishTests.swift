import JSONValue
import Testing
@testable import AuthEngine

/// `mfaEnrollment:finalize` (firebase-wire.md §2.17): the code sent for this user's enrolment,
/// and only that one, adds the phone; the answer is tokens that carry it as second factor.
@Suite("MFA: finishing an enrolment")
struct MFAEnrolmentFinishTests {
    typealias F = MFAFixture

    @Test("the right code stores the factor (28-char id, E.164, name, time) and answers tokens carrying it")
    func success() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let sent = try f.startEnrolment(idToken, "+33 6 12 34 56 78")
        f.clock.advance(seconds: 30)
        let r = try f.finishEnrolment(idToken, sent.sessionInfo, try f.code(to: F.phone), name: "Work phone")

        let e = r.enrollment
        #expect(e.enrollmentID.utf8.count == 28 && e.enrollmentID.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        #expect(e.phoneNumber == F.phone && e.displayName == "Work phone" && e.enrolledAt == f.clock.now())
        #expect(try f.account(account.localID).mfaEnrollments == [e])
        #expect(r.account.mfaEnrollments == [e])

        let verified = try f.verify(r.tokens.idToken)
        #expect(verified.uid == account.localID)
        // The first factor stays what it was; the second is added beside it.
        #expect(verified.signInProvider == "password")
        #expect(verified.secondFactor == SecondFactor(factor: "phone", identifier: e.enrollmentID))
        let firebase = try #require(verified.claims["firebase"])
        #expect(firebase["sign_in_second_factor"]?.stringValue == "phone")
        #expect(firebase["second_factor_identifier"]?.stringValue == e.enrollmentID)
        // The refresh token remembers it for later refreshes.
        let stored = try f.store.refreshToken(hash: SignInTokens.hash(refreshToken: r.tokens.refreshToken))
        #expect(stored?.secondFactor == e.enrollmentID && stored?.provider == "password")
    }

    @Test("an ID token minted before enrolling has no second factor claims")
    func earlierTokenHasNone() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        #expect(try f.verify(idToken).secondFactor == nil)
        let firebase = try #require(try f.verify(idToken).claims["firebase"])
        #expect(firebase["sign_in_second_factor"] == nil && firebase["second_factor_identifier"] == nil)
    }

    @Test("without a display name none is stored; two factors get different ids")
    func secondFactorNoName() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let enrolled = try f.enrol(idToken, F.phone)
        let one = enrolled.enrollment
        let two = try f.enrol(enrolled.tokens.idToken, F.testNumber).enrollment
        #expect(one.displayName == nil && two.displayName == nil)
        #expect(one.enrollmentID != two.enrollmentID)
        #expect(try f.account(account.localID).mfaEnrollments.map(\.phoneNumber) == [F.phone, F.testNumber])
    }

    @Test("a wrong code is INVALID_CODE and spends one of the code's five attempts; the sixth is SESSION_EXPIRED")
    func wrongCode() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let sent = try f.startEnrolment(idToken, F.phone)
        let code = try f.code(to: F.phone)
        #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, F.wrong(code)) } == "INVALID_CODE")
        #expect(try f.phone.status(sessionInfo: sent.sessionInfo)?.attemptsLeft == 4)
        for _ in 0..<4 { #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, F.wrong(code)) } == "INVALID_CODE") }
        #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, code) } == "SESSION_EXPIRED")
        #expect(try f.account(account.localID).mfaEnrollments.isEmpty)
    }

    @Test("missing sessionInfo or code: MISSING_SESSION_INFO, MISSING_CODE; unknown sessionInfo: INVALID_SESSION_INFO")
    func missingInput() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        let sent = try f.startEnrolment(idToken, F.phone)
        #expect(wireError { try f.finishEnrolment(idToken, nil, "123456") } == "MISSING_SESSION_INFO")
        #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, nil) } == "MISSING_CODE")
        #expect(wireError { try f.finishEnrolment(idToken, "ghs1.nothing", "123456") } == "INVALID_SESSION_INFO")
    }

    @Test("a code sent for another user's enrolment does not enrol this user")
    func anotherUsersCode() throws {
        let f = try F()
        let (ada, adaToken) = try f.user("ada@example.com")
        let (bob, bobToken) = try f.user("bob@example.com")
        let sent = try f.startEnrolment(adaToken, F.phone)
        let code = try f.code(to: F.phone)
        #expect(wireError { try f.finishEnrolment(bobToken, sent.sessionInfo, code) } == "INVALID_SESSION_INFO")
        #expect(try f.account(bob.localID).mfaEnrollments.isEmpty)
        // Nothing was spent: Ada's code still works for Ada.
        #expect(try f.finishEnrolment(adaToken, sent.sessionInfo, code).account.localID == ada.localID)
    }

    @Test("a test number's fixed code, sent for another user's enrolment, does not enrol this user")
    func anotherUsersTestNumber() throws {
        let f = try F()
        let (_, adaToken) = try f.user("ada@example.com")
        let (bob, bobToken) = try f.user("bob@example.com")
        let sent = try f.startEnrolment(adaToken, F.testNumber)
        #expect(!sent.smsQueued)
        #expect(wireError { try f.finishEnrolment(bobToken, sent.sessionInfo, F.testCode) } == "INVALID_SESSION_INFO")
        #expect(try f.account(bob.localID).mfaEnrollments.isEmpty)
    }

    @Test("a code sent for a first-factor phone sign-in does not enrol the number")
    func firstFactorCode() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let sent = try f.phone.sendCode(.init(phoneNumber: F.phone, appToken: try f.appToken(), apiKey: "key-1", appID: "",
                                              remoteAddress: F.ip, composeSMS: { "Code \($0)" }))
        let code = try f.code(to: F.phone)
        #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, code) } == "INVALID_SESSION_INFO")
        #expect(try f.account(account.localID).mfaEnrollments.isEmpty)
        // It still signs in as a first factor, which is what it was sent for.
        guard case .signedIn = try f.phone.signIn(.init(sessionInfo: sent.sessionInfo, code: code, remoteAddress: F.ip)) else {
            Issue.record("the first-factor code was spent"); return
        }
    }

    @Test("a code is single use: finishing again is SESSION_EXPIRED")
    func singleUse() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        let sent = try f.startEnrolment(idToken, F.phone)
        let code = try f.code(to: F.phone)
        let withFactor = try f.finishEnrolment(idToken, sent.sessionInfo, code).tokens.idToken
        #expect(wireError { try f.finishEnrolment(withFactor, sent.sessionInfo, code) } == "SESSION_EXPIRED")
    }

    @Test("a disabled user cannot enrol")
    func disabledUser() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let sent = try f.startEnrolment(idToken, F.phone)
        try f.store.change(project: account.projectID, localID: account.localID) { $0.disabled = true }
        #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, try f.code(to: F.phone)) } == "USER_DISABLED")
        #expect(try f.account(account.localID).mfaEnrollments.isEmpty)
    }
}
