import Testing
@testable import AuthEngine

/// Who may start enrolling a phone, and which numbers (firebase-wire.md §2.17 `mfaEnrollment:start`,
/// §5.4; gatehouse.md "Second factor"). Each refusal is checked before any SMS is queued, so the
/// outbox stays empty: a refused caller cannot make the server text a number.
@Suite("MFA: enrolment rules")
struct MFAEnrolmentRulesTests {
    typealias F = MFAFixture

    @Test("with MFA disabled every MFA call is OPERATION_NOT_ALLOWED : SMS based MFA not enabled.")
    func disabled() throws {
        let f = try F(mfa: .disabled)
        let (_, idToken) = try f.user()
        let expected = "OPERATION_NOT_ALLOWED : SMS based MFA not enabled."
        #expect(wireError { try f.startEnrolment(idToken, F.phone) } == expected)
        #expect(wireError { try f.finishEnrolment(idToken, "ghs1.x", "123456") } == expected)
        #expect(wireError { try f.mfa.withdraw(idToken: idToken, enrollmentID: "x", remoteAddress: F.ip) } == expected)
        #expect(wireError { try f.startSignIn("ghmfa1.x", "x") } == expected)
        #expect(wireError { try f.finishSignIn("ghmfa1.x", "ghs1.x", "123456") } == expected)
        #expect(try f.sms().isEmpty)
    }

    @Test("both enabled and mandatory allow enrolling")
    func enabledStates() throws {
        for state in [MFAState.enabled, .mandatory] {
            let f = try F(mfa: state)
            let (_, idToken) = try f.user()
            #expect(try f.enrol(idToken).account.mfaEnrollments.count == 1)
        }
    }

    @Test("start, finish and withdraw need an ID token: MISSING_ID_TOKEN")
    func missingIDToken() throws {
        let f = try F()
        for token in [nil, ""] as [String?] {
            #expect(wireError { try f.startEnrolment(token, F.phone) } == "MISSING_ID_TOKEN")
            #expect(wireError { try f.finishEnrolment(token, "ghs1.x", "123456") } == "MISSING_ID_TOKEN")
            #expect(wireError { try f.mfa.withdraw(idToken: token, enrollmentID: "x", remoteAddress: F.ip) } == "MISSING_ID_TOKEN")
        }
        #expect(wireError { try f.startEnrolment("not.a.jwt", F.phone) } == "INVALID_ID_TOKEN")
    }

    @Test("a phone, anonymous, custom or Game Center first factor cannot be followed by a second factor",
          arguments: ["phone", "anonymous", "custom", "gc.apple.com"])
    func ineligibleFirstFactor(provider: String) throws {
        let f = try F()
        // The account itself qualifies (verified email): only the token's first factor is wrong.
        let (_, idToken) = try f.user(phone: "+33600000001", provider: provider)
        let expected = "UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor."
        #expect(wireError { try f.startEnrolment(idToken, F.phone) } == expected)
        #expect(wireError { try f.finishEnrolment(idToken, "ghs1.x", "123456") } == expected)
        #expect(try f.sms().isEmpty)
    }

    @Test("an email-link first factor qualifies")
    func emailLinkFirstFactor() throws {
        let f = try F()
        let (_, idToken) = try f.user(provider: "password")
        #expect(try f.startEnrolment(idToken, F.phone).smsQueued)
    }

    @Test("an unverified email, or none, is UNVERIFIED_EMAIL")
    func unverifiedEmail() throws {
        let f = try F()
        let expected = "UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors."
        let (_, unverified) = try f.user("bo@example.com", verified: false)
        #expect(wireError { try f.startEnrolment(unverified, F.phone) } == expected)
        #expect(wireError { try f.finishEnrolment(unverified, "ghs1.x", "123456") } == expected)
        let (_, noEmail) = try f.user(nil, verified: true)
        #expect(wireError { try f.startEnrolment(noEmail, F.phone) } == expected)
        #expect(try f.sms().isEmpty)
    }

    /// (A request without `phoneEnrollmentInfo` at all is the wire's `INVALID_ARGUMENT`, answered
    /// before the engine: `MFAAPI.enrollmentStart`.)
    @Test("a missing or malformed number is INVALID_PHONE_NUMBER")
    func numberInput() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        #expect(wireError { try f.startEnrolment(idToken, nil) } == "INVALID_PHONE_NUMBER : Invalid format.")
        #expect(wireError { try f.startEnrolment(idToken, "") } == "INVALID_PHONE_NUMBER : Invalid format.")
        #expect(wireError { try f.startEnrolment(idToken, "call me maybe") } == "INVALID_PHONE_NUMBER : Invalid format.")
        #expect(wireError { try f.startEnrolment(idToken, "+336") }?.hasPrefix("INVALID_PHONE_NUMBER") == true)
        #expect(try f.sms().isEmpty)
    }

    @Test("a number written with spaces is enrolled in E.164")
    func e164() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        let sent = try f.startEnrolment(idToken, "+33 6 12 34 56 78")
        #expect(sent.phoneNumber == F.phone)
        #expect(try f.sms().map(\.recipient) == [F.phone])
    }

    @Test("the same number twice is SECOND_FACTOR_EXISTS, however it is written")
    func sameNumberTwice() throws {
        let f = try F()
        let (_, first) = try f.user()
        let idToken = try f.enrol(first, F.phone).tokens.idToken
        let sent = try f.sms().count
        let expected = "SECOND_FACTOR_EXISTS : Phone number already enrolled as second factor for this account."
        #expect(wireError { try f.startEnrolment(idToken, F.phone) } == expected)
        #expect(wireError { try f.startEnrolment(idToken, "+33 6 12 34 56 78") } == expected)
        #expect(try f.sms().count == sent)
    }

    @Test("two codes for the same number: the second to finish is SECOND_FACTOR_EXISTS and enrols nothing")
    func sameNumberRace() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        // Two devices (two networks, so each gets a code of its own) enrol the same number.
        let a = try f.startEnrolment(idToken, F.phone, ip: "198.51.100.1")
        let codeA = try f.code(to: F.phone)
        let b = try f.startEnrolment(idToken, F.phone, ip: "192.0.2.9")
        let codeB = try f.code(to: F.phone)
        #expect(a.sessionInfo != b.sessionInfo)
        let withFactor = try f.finishEnrolment(idToken, a.sessionInfo, codeA).tokens.idToken
        // The token B started with passed no second factor, which the account now has.
        #expect(wireError { try f.finishEnrolment(idToken, b.sessionInfo, codeB) }
                == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN : \(SensitiveChange.secondFactorDetail)")
        #expect(wireError { try f.finishEnrolment(withFactor, b.sessionInfo, codeB) }
                == "SECOND_FACTOR_EXISTS : Phone number already enrolled as second factor for this account.")
        #expect(try f.account(account.localID).mfaEnrollments.count == 1)
    }

    @Test("five factors are the most: a sixth is SECOND_FACTOR_LIMIT_EXCEEDED")
    func limit() throws {
        let f = try F()
        let (account, first) = try f.user()
        var idToken = first
        for i in 1...5 { idToken = try f.enrol(idToken, "+3361111111\(i)").tokens.idToken }
        #expect(try f.account(account.localID).mfaEnrollments.count == 5)
        let sent = try f.sms().count
        #expect(wireError { try f.startEnrolment(idToken, "+33611111116") } == "SECOND_FACTOR_LIMIT_EXCEEDED")
        #expect(try f.sms().count == sent)
    }

    @Test("a fifth factor whose code was sent before another enrolment filled the account is refused at finish")
    func limitAtFinish() throws {
        let f = try F()
        let (account, first) = try f.user()
        var idToken = first
        for i in 1...4 { idToken = try f.enrol(idToken, "+3361111111\(i)").tokens.idToken }
        let late = try f.startEnrolment(idToken, "+33611111115")
        let lateCode = try f.code(to: "+33611111115")
        try f.enrol(idToken, "+33611111116")
        #expect(wireError { try f.finishEnrolment(idToken, late.sessionInfo, lateCode) } == "SECOND_FACTOR_LIMIT_EXCEEDED")
        #expect(try f.account(account.localID).mfaEnrollments.count == 5)
    }

    @Test("a display name longer than 128 bytes or with control characters is INVALID_ARGUMENT")
    func displayName() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let sent = try f.startEnrolment(idToken, F.phone)
        let code = try f.code(to: F.phone)
        #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, code, name: String(repeating: "a", count: 129)) }
                == "INVALID_ARGUMENT : Invalid displayName.")
        #expect(wireError { try f.finishEnrolment(idToken, sent.sessionInfo, code, name: "work\nphone") }
                == "INVALID_ARGUMENT : Invalid displayName.")
        // Refused before the code was looked at: it still enrols.
        #expect(try f.finishEnrolment(idToken, sent.sessionInfo, code, name: String(repeating: "a", count: 128)).enrollment.displayName?.count == 128)
        #expect(try f.account(account.localID).mfaEnrollments.count == 1)
    }
}
