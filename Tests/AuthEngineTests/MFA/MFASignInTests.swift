import Testing
@testable import AuthEngine

/// `mfaSignIn:start` / `finalize` (firebase-wire.md §2.17): the code goes to the enrolled number,
/// and a code only finishes what it was sent for; first and second factor codes never stand in
/// for each other.
@Suite("MFA: second-factor sign-in")
struct MFASignInTests {
    typealias F = MFAFixture

    @Test("the code goes to the enrolled number, never to the number the client names")
    func codeToEnrolledNumber() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let before = try f.sms().count
        // iOS sends the hint's obfuscated number; an attacker would send their own.
        for (i, claimed) in [enrollment.obfuscatedPhone, F.otherPhone].enumerated() {
            let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID, number: claimed, ip: "198.51.100.\(i + 1)")
            #expect(sent.phoneNumber == F.phone && sent.smsQueued)
        }
        let sms = try f.sms().dropFirst(before)
        #expect(sms.map(\.recipient) == [F.phone, F.phone])
    }

    @Test("each of several factors gets its own number's code; the token names the factor used")
    func severalFactors() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        let enrolled = try f.enrol(idToken, F.phone)
        let first = enrolled.enrollment
        let second = try f.enrol(enrolled.tokens.idToken, F.otherPhone, name: "spare").enrollment
        let c = try f.challenge()
        #expect(c.enrollments == [first, second])
        let sent = try f.startSignIn(c.pendingCredential, second.enrollmentID)
        #expect(sent.phoneNumber == F.otherPhone)
        let done = try f.finishSignIn(c.pendingCredential, sent.sessionInfo, try f.code(to: F.otherPhone))
        #expect(done.enrollment == second)
        let verified = try f.verify(try #require(done.tokens).idToken)
        #expect(verified.signInProvider == "password" && verified.secondFactor == SecondFactor(identifier: second.enrollmentID))
    }

    @Test("a test number enrolled as factor signs in with its fixed code and sends no SMS")
    func testNumberFactor() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser("ada@example.com", F.testNumber)
        let c = try f.challenge()
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        #expect(sent.isTest && !sent.smsQueued)
        #expect(try f.sms().isEmpty)
        #expect(wireError { try f.finishSignIn(c.pendingCredential, sent.sessionInfo, F.wrong(F.testCode)) } == "INVALID_CODE")
        #expect(try f.finishSignIn(c.pendingCredential, sent.sessionInfo, F.testCode).tokens != nil)
    }

    @Test("a code sent for one pending sign-in does not finish another, even of the same user")
    func codeBoundToPendingSignIn() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let one = try f.challenge()
        let two = try f.challenge()
        let sent = try f.startSignIn(one.pendingCredential, enrollment.enrollmentID)
        let code = try f.code(to: F.phone)
        #expect(wireError { try f.finishSignIn(two.pendingCredential, sent.sessionInfo, code) } == "INVALID_SESSION_INFO")
        // Neither was spent by the refusal.
        #expect(try f.finishSignIn(one.pendingCredential, sent.sessionInfo, code).tokens != nil)
        let other = try f.startSignIn(two.pendingCredential, enrollment.enrollmentID)
        #expect(other.sessionInfo != sent.sessionInfo)
        #expect(try f.finishSignIn(two.pendingCredential, other.sessionInfo, try f.code(to: F.phone)).tokens != nil)
    }

    @Test("a test number's code sent for another user's pending sign-in does not finish this one")
    func codeBoundToUser() throws {
        let f = try F()
        let (_, adas) = try f.enrolledUser("ada@example.com", F.testNumber)
        let (_, bobs) = try f.enrolledUser("bob@example.com", F.testNumber)
        let ada = try f.challenge("ada@example.com")
        let bob = try f.challenge("bob@example.com")
        let sent = try f.startSignIn(ada.pendingCredential, adas.enrollmentID)
        #expect(wireError { try f.finishSignIn(bob.pendingCredential, sent.sessionInfo, F.testCode) } == "INVALID_SESSION_INFO")
        _ = bobs
    }

    @Test("a first-factor phone code cannot finish a second factor")
    func firstFactorCodeRefused() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let sent = try f.phone.sendCode(.init(phoneNumber: F.phone, appToken: try f.appToken(), apiKey: "key-1", appID: "",
                                              remoteAddress: F.ip, composeSMS: { "Code \($0)" }))
        let code = try f.code(to: F.phone)
        #expect(wireError { try f.finishSignIn(c.pendingCredential, sent.sessionInfo, code) } == "INVALID_SESSION_INFO")
        #expect(try f.store.mfaPending(hash: PhoneMFA.hash(pendingCredential: c.pendingCredential))?.consumedAt == nil)
        _ = enrollment
    }

    @Test("a second-factor code cannot sign in as a first factor (no account is made for the number)")
    func secondFactorCodeRefused() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        let code = try f.code(to: F.phone)
        #expect(wireError { try f.phone.signIn(.init(sessionInfo: sent.sessionInfo, code: code, remoteAddress: F.ip)) } == "INVALID_SESSION_INFO")
        #expect(try f.store.account(project: f.project.id, phoneNumber: F.phone) == nil)
        // It still finishes the second factor.
        #expect(try f.finishSignIn(c.pendingCredential, sent.sessionInfo, code).tokens != nil)
    }

    @Test("an enrolment code cannot finish a second-factor sign-in, nor the reverse")
    func enrolmentCodeRefused() throws {
        let f = try F()
        let (account, first) = try f.user()
        let enrolled = try f.enrol(first, F.phone)
        let (enrollment, idToken) = (enrolled.enrollment, enrolled.tokens.idToken)
        let enrolment = try f.startEnrolment(idToken, F.otherPhone)
        let enrolCode = try f.code(to: F.otherPhone)
        let c = try f.challenge()
        #expect(wireError { try f.finishSignIn(c.pendingCredential, enrolment.sessionInfo, enrolCode) } == "INVALID_SESSION_INFO")
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, try f.code(to: F.phone)) } == "INVALID_SESSION_INFO")
        #expect(try f.account(account.localID).mfaEnrollments == [enrollment])
    }

    @Test("the hosted page's finish (no tokens) still records the sign-in and spends the credential")
    func withoutTokens() throws {
        let f = try F()
        let (account, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        f.clock.advance(seconds: 5)
        let done = try f.mfa.finishSignIn(pendingCredential: c.pendingCredential, sessionInfo: sent.sessionInfo,
                                          code: try f.code(to: F.phone), remoteAddress: F.ip, issueTokens: false)
        #expect(done.tokens == nil && done.enrollment == enrollment)
        #expect(try f.account(account.localID).lastLoginAt == f.clock.now())
        #expect(wireError { try f.startSignIn(c.pendingCredential, enrollment.enrollmentID) } == "INVALID_MFA_PENDING_CREDENTIAL")
    }

    @Test("a user disabled between the factors: USER_DISABLED on start and finish, nothing issued")
    func disabledBetweenFactors() throws {
        let f = try F()
        let (account, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        let code = try f.code(to: F.phone)
        let refreshTokens = try f.store.db.rows("SELECT COUNT(*) FROM refresh_tokens") { $0.int(0) }
        let a = try f.account(account.localID)
        try f.store.change(project: account.projectID, localID: account.localID) { $0.disabled = true }
        #expect(wireError { try f.finishSignIn(c.pendingCredential, sent.sessionInfo, code) } == "USER_DISABLED")
        #expect(wireError { try f.startSignIn(c.pendingCredential, enrollment.enrollmentID) } == "USER_DISABLED")
        #expect(try f.store.db.rows("SELECT COUNT(*) FROM refresh_tokens") { $0.int(0) } == refreshTokens)
        #expect(try f.account(account.localID).lastLoginAt == a.lastLoginAt)
    }

    @Test("an email-link sign-in of a disabled enrolled user is USER_DISABLED, not a challenge")
    func disabledAtFirstFactor() throws {
        let f = try F()
        let (account, _) = try f.enrolledUser()
        try f.store.change(project: account.projectID, localID: account.localID) { $0.disabled = true }
        #expect(wireError { try f.emailLinkSignIn() } == "USER_DISABLED")
        #expect(try f.store.db.rows("SELECT COUNT(*) FROM mfa_pending") { $0.int(0) } == [0])
    }
}
