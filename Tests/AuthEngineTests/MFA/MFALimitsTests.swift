import Testing
@testable import AuthEngine

/// Second-factor codes are phone codes: the first factor's attempt, failure and send budgets are
/// the same budgets (gatehouse.md "Abuse budgets"), so switching flows buys an attacker nothing.
@Suite("MFA: limits shared with phone sign-in")
struct MFALimitsTests {
    typealias F = MFAFixture

    @Test("five wrong codes burn a second-factor code: the right one is then SESSION_EXPIRED")
    func attemptsPerCode() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        let code = try f.code(to: F.phone)
        for _ in 0..<5 { #expect(wireError { try f.finishSignIn(c.pendingCredential, sent.sessionInfo, F.wrong(code)) } == "INVALID_CODE") }
        #expect(try f.phone.status(sessionInfo: sent.sessionInfo)?.state == .burned)
        #expect(wireError { try f.finishSignIn(c.pendingCredential, sent.sessionInfo, code) } == "SESSION_EXPIRED")
        // The pending sign-in survives: a new code (not the burned one) finishes it.
        let again = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        #expect(again.sessionInfo != sent.sessionInfo)
        #expect(try f.finishSignIn(c.pendingCredential, again.sessionInfo, try f.code(to: F.phone)).tokens != nil)
    }

    @Test("wrong first-factor codes spend the client's failure budget for second-factor codes too")
    func failureBudgetFromFirstFactor() throws {
        let f = try F { $0.phone.failureBudgetPerDay = 3 }
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let mfaSent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        let mfaCode = try f.code(to: F.phone)
        let first = try f.phone.sendCode(.init(phoneNumber: F.otherPhone, appToken: try f.appToken(), apiKey: "key-1", appID: "",
                                               remoteAddress: F.ip, composeSMS: { "Code \($0)" }))
        let firstCode = try f.code(to: F.otherPhone)
        for _ in 0..<3 {
            _ = wireError { try f.phone.signIn(.init(sessionInfo: first.sessionInfo, code: F.wrong(firstCode), remoteAddress: F.ip)) }
        }
        #expect(wireError { try f.finishSignIn(c.pendingCredential, mfaSent.sessionInfo, mfaCode) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // The budget is the client's: the owner on another network finishes.
        #expect(try f.finishSignIn(c.pendingCredential, mfaSent.sessionInfo, mfaCode, ip: "198.51.100.20").tokens != nil)
    }

    @Test("wrong second-factor codes spend the client's budget for first-factor sends and codes")
    func failureBudgetFromSecondFactor() throws {
        let f = try F { $0.phone.failureBudgetPerDay = 3 }
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        let code = try f.code(to: F.phone)
        for _ in 0..<3 { #expect(wireError { try f.finishSignIn(c.pendingCredential, sent.sessionInfo, F.wrong(code)) } == "INVALID_CODE") }
        #expect(wireError {
            try f.phone.sendCode(.init(phoneNumber: F.otherPhone, appToken: try f.appToken(), apiKey: "key-1", appID: "",
                                       remoteAddress: F.ip, composeSMS: { "Code \($0)" }))
        } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // No new second-factor code for that client either, and the right one is refused.
        let other = try f.challenge()
        #expect(wireError { try f.startSignIn(other.pendingCredential, enrollment.enrollmentID) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(wireError { try f.finishSignIn(c.pendingCredential, sent.sessionInfo, code) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
    }

    @Test("strangers' first-factor sends to the enrolled number leave the second factor's budget whole; it has the same size")
    func perNumberSends() throws {
        let f = try F { $0.phone.sendsPerNumberPerHour = 3 }
        let (_, enrollment) = try f.enrolledUser()
        // Anyone may ask first-factor codes for the number, from as many networks as they like,
        // until its first-factor budget (which the enrolment's code began) is spent.
        for i in 1...2 {
            _ = try f.phone.sendCode(.init(phoneNumber: F.phone, appToken: try f.appToken(), apiKey: "key-1", appID: "",
                                           remoteAddress: "198.51.\(i).7", composeSMS: { "Code \($0)" }))
        }
        #expect(wireError {
            _ = try f.phone.sendCode(.init(phoneNumber: F.phone, appToken: try f.appToken(), apiKey: "key-1", appID: "",
                                           remoteAddress: "198.51.9.7", composeSMS: { "Code \($0)" }))
        } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // The owner, past the first factor, still gets second-factor codes: three an hour of their own.
        for i in 0..<3 {
            #expect(try f.startSignIn(try f.challenge().pendingCredential, enrollment.enrollmentID, ip: "192.0.\(i).1").smsQueued)
        }
        let sms = try f.sms().count
        #expect(wireError { try f.startSignIn(try f.challenge().pendingCredential, enrollment.enrollmentID, ip: "192.0.9.1") }
                == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.sms().count == sms)
        // The next hour the number gets codes again.
        f.clock.advance(seconds: 3600)
        #expect(try f.startSignIn(try f.challenge().pendingCredential, enrollment.enrollmentID).smsQueued)
    }

    @Test("enrolment sends count against the client's hourly budget")
    func perClientSends() throws {
        let f = try F { $0.phone.sendsPerIPPerHour = 2 }
        let (_, idToken) = try f.user()
        try f.startEnrolment(idToken, F.phone)
        try f.startEnrolment(idToken, F.otherPhone)
        #expect(wireError { try f.startEnrolment(idToken, "+33611111111") } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.startEnrolment(idToken, "+33611111111", ip: "198.51.100.40").smsQueued)
    }

    @Test("asking again for the same pending sign-in reuses the pending code: same sessionInfo, no second SMS")
    func reentrantStart() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let a = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        let sms = try f.sms().count
        f.clock.advance(seconds: 30)
        let b = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        #expect(a.sessionInfo == b.sessionInfo && !b.smsQueued)
        #expect(try f.sms().count == sms)
        // Another pending sign-in of the same user is another purpose: a code of its own.
        let other = try f.challenge()
        #expect(try f.startSignIn(other.pendingCredential, enrollment.enrollmentID).sessionInfo != a.sessionInfo)
    }

    @Test("asking again for the same enrolment reuses the pending code")
    func reentrantEnrolment() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        let a = try f.startEnrolment(idToken, F.phone)
        let b = try f.startEnrolment(idToken, F.phone)
        #expect(a.sessionInfo == b.sessionInfo && !b.smsQueued)
        #expect(try f.sms().count == 1)
    }

    @Test("real numbers need app verification outside dev mode: MISSING_CLIENT_IDENTIFIER without a token")
    func appVerification() throws {
        let f = try F()
        let (_, idToken) = try f.user()
        #expect(wireError { try f.mfa.startEnrolment(idToken: idToken, try f.request(F.phone, withToken: false)) } == "MISSING_CLIENT_IDENTIFIER")
        let (_, enrollment) = try f.enrolledUser("bob@example.com")
        let c = try f.challenge("bob@example.com")
        #expect(wireError { try f.mfa.startSignIn(pendingCredential: c.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                  try f.request(withToken: false)) } == "MISSING_CLIENT_IDENTIFIER")
    }

    @Test("the project's SMS regions apply to enrolment")
    func regions() throws {
        let f = try F { $0.phone.allowedRegions = ["GB"] }
        let (_, idToken) = try f.user()
        #expect(wireError { try f.startEnrolment(idToken, F.phone) }
                == "OPERATION_NOT_ALLOWED : SMS unable to be sent until this region enabled by the app developer.")
        // Test numbers send nothing and are not held to the regions.
        #expect(try f.startEnrolment(idToken, F.testNumber).isTest)
    }
}
