import Testing
@testable import AuthEngine
import TestSupport

@Suite("Phone sign-in: limits, regions, test numbers, app verification, send again")
struct PhoneLimitsTests {
    let fr = "+33612345678"
    let us = "+16505553434"

    /// Lets the pending code of `number` expire so the next send really sends.
    func expire(_ f: PhoneFixture) { f.clock.advance(seconds: 301) }

    @Test("a number gets at most 5 codes per hour, then TOO_MANY_ATTEMPTS_TRY_LATER until the next hour")
    func perNumberHour() throws {
        let f = try PhoneFixture()
        for _ in 0..<5 { try f.send(fr); expire(f) }
        #expect(wireError { try f.send(fr) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.smsMessages().count == 5)
        f.clock.advance(seconds: 3600)
        #expect(try f.send(fr).smsQueued)
    }

    @Test("a number gets at most 10 codes per day")
    func perNumberDay() throws {
        let f = try PhoneFixture()
        for hour in 0..<3 {
            for _ in 0..<(hour < 2 ? 5 : 0) { try f.send(fr); expire(f) }
            f.clock.advance(seconds: 3600)
        }
        #expect(wireError { try f.send(fr) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        f.clock.advance(seconds: 86400)
        #expect(try f.send(fr).smsQueued)
    }

    @Test("an IP address may start at most 10 sends per hour")
    func perIPHour() throws {
        let f = try PhoneFixture()
        for i in 0..<10 { try f.send("+3361234560\(i)", ip: "198.51.100.1") }
        #expect(wireError { try f.send("+33612345611", ip: "198.51.100.1") } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.send("+33612345611", ip: "198.51.100.2").smsQueued)
    }

    @Test("reentrant sends do not count against the send limits")
    func reentrantNotCounted() throws {
        let f = try PhoneFixture()
        for _ in 0..<20 { try f.send(fr) }
        #expect(try f.smsMessages().count == 1)
        #expect(try Limits(store: f.store, clock: f.clock).count(Limits.Rule("phone-send-number-hour", max: 5, per: 3600), key: "prod-project|" + fr) == 1)
    }

    @Test("limits are stored durably: a new flow over the same store sees them")
    func limitsDurable() throws {
        let f = try PhoneFixture()
        for _ in 0..<5 { try f.send(fr); expire(f) }
        let again = PhoneSignIn(store: f.store, clock: f.clock, random: SeededRandom(seed: 99), tokens: f.tokens, project: f.project)
        #expect(wireError { try again.sendCode(.init(phoneNumber: fr, appToken: try f.appToken(), apiKey: "key-1", appID: "com.example.app",
                                                     remoteAddress: "192.0.2.1", composeSMS: { $0 })) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
    }

    @Test("test numbers and dev mode are not throttled by send limits")
    func testNumbersAndDevNotThrottled() throws {
        let f = try PhoneFixture()
        for _ in 0..<15 { try f.send(PhoneFixture.testNumber); expire(f) }
        let d = try PhoneFixture(dev: true)
        for _ in 0..<15 { try d.send(fr); expire(d) }
        #expect(try d.smsMessages().count == 15)
    }

    @Test("an IP address gets 30 verification attempts per 5 minutes")
    func verifyPerIP() throws {
        let f = try PhoneFixture(dev: true)
        for _ in 0..<30 { #expect(wireError { try f.signIn("ghs1.unknown", "123456", ip: "198.51.100.9") } == "INVALID_SESSION_INFO") }
        #expect(wireError { try f.signIn("ghs1.unknown", "123456", ip: "198.51.100.9") } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(wireError { try f.signIn("ghs1.unknown", "123456", ip: "198.51.100.10") } == "INVALID_SESSION_INFO")
        f.clock.advance(seconds: 300)
        #expect(wireError { try f.signIn("ghs1.unknown", "123456", ip: "198.51.100.9") } == "INVALID_SESSION_INFO")
    }

    @Test("a client's failure budget of 20 a day survives new codes and numbers, then TOO_MANY_ATTEMPTS_TRY_LATER")
    func failureBudget() throws {
        let f = try PhoneFixture { $0.phone.sendsPerNumberPerHour = 10 }
        // A code kept aside for another number, still pending while the budget runs out.
        let aside = try f.send("+33612345698")
        let asideCode = try f.lastCode()
        for round in 0..<4 {
            let s = try f.send(round % 2 == 0 ? fr : us)
            let code = try f.lastCode()
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<5 { #expect(wireError { try f.signIn(s.sessionInfo, wrong) } == "INVALID_CODE", "round \(round)") }
        }
        #expect(wireError { try f.signIn(aside.sessionInfo, asideCode) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(wireError { try f.send("+33612345699") } == "TOO_MANY_ATTEMPTS_TRY_LATER", "no new code for this client")
        // Another client is unaffected, even for the same numbers; the budget renews the next day.
        #expect(try f.send(fr, ip: "198.51.100.20").smsQueued)
        guard case .signedIn = try f.signIn(aside.sessionInfo, asideCode, ip: "198.51.100.20") else { Issue.record("no"); return }
        f.clock.advance(seconds: 86400)
        #expect(try f.send(us).smsQueued)
    }

    @Test("the 5-wrong-codes rule applies to test numbers and in dev mode")
    func wrongCodesAlwaysApply() throws {
        let f = try PhoneFixture()
        let s = try f.send(PhoneFixture.testNumber)
        for _ in 0..<5 { #expect(wireError { try f.signIn(s.sessionInfo, "999999") } == "INVALID_CODE") }
        #expect(wireError { try f.signIn(s.sessionInfo, PhoneFixture.testCode) } == "SESSION_EXPIRED")
        let d = try PhoneFixture(dev: true)
        let t = try d.send(fr)
        let code = try d.lastCode()
        for _ in 0..<5 { #expect(wireError { try d.signIn(t.sessionInfo, code == "999999" ? "888888" : "999999") } == "INVALID_CODE") }
        #expect(wireError { try d.signIn(t.sessionInfo, code) } == "SESSION_EXPIRED")
    }

    @Test("numbers outside the region allow-list are refused; nil allows all, [] allows none")
    func regionPolicy() throws {
        let message = "OPERATION_NOT_ALLOWED : SMS unable to be sent until this region enabled by the app developer."
        let f = try PhoneFixture { $0.phone.allowedRegions = ["FR", "DE"] }
        #expect(wireError { try f.send(us) } == message)
        #expect(try f.send(fr).smsQueued)
        let none = try PhoneFixture { $0.phone.allowedRegions = [] }
        #expect(wireError { try none.send(fr) } == message)
        #expect(try none.send(PhoneFixture.testNumber).isTest, "test numbers send nothing, so no region applies")
        let all = try PhoneFixture { $0.phone.allowedRegions = nil }
        #expect(try all.send(us).smsQueued)
    }

    @Test("a fictional test number is accepted as configured, with its fixed code, no SMS and no app token")
    func testNumbers() throws {
        let f = try PhoneFixture()
        let s = try f.send("+1 555-555-0100", token: .some(nil))
        #expect(s.isTest && !s.smsQueued && s.phoneNumber == PhoneFixture.testNumber)
        #expect(try f.smsMessages().isEmpty)
        #expect(wireError { try f.signIn(s.sessionInfo, "654321") } == "INVALID_CODE")
        guard case let .signedIn(account, _, isNew) = try f.signIn(s.sessionInfo, PhoneFixture.testCode) else { Issue.record("no"); return }
        #expect(isNew && account.phoneNumber == PhoneFixture.testNumber)
        // Typed in national form with its region selected (the hosted page), it is still the test number.
        #expect(try f.send("(555) 555-0100", token: .some(nil), region: "US").isTest)
        f.project.testPhoneNumbers["+33612345679"] = "424242"
        #expect(try f.send("06 12 34 56 79", token: .some(nil), region: "FR").phoneNumber == "+33612345679")
        #expect(try f.smsMessages().isEmpty)
    }

    @Test("real numbers outside dev mode need a valid, unused app token")
    func appTokenGate() throws {
        let f = try PhoneFixture()
        #expect(wireError { try f.send(fr, token: .some(nil)) } == "MISSING_CLIENT_IDENTIFIER")
        #expect(wireError { try f.send(fr, token: "") } == "MISSING_CLIENT_IDENTIFIER")
        #expect(wireError { try f.send(fr, token: "garbage") } == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - MALFORMED")
        #expect(wireError { try f.send(fr, token: "ghat1.unknown") } == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED")
        let other = try f.appToken(apiKey: "another-key")
        #expect(wireError { try f.send(fr, token: other) } == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - MALFORMED")
        let late = try f.appToken()
        f.clock.advance(seconds: 121)
        #expect(wireError { try f.send(fr, token: late) } == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED")
        #expect(try f.smsMessages().isEmpty)
        let token = try f.appToken()
        #expect(try f.send(fr, token: token).smsQueued)
        #expect(wireError { try f.send(us, token: token) } == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED",
                "an app token is single use")
        let d = try PhoneFixture(dev: true)
        #expect(try d.send(fr, token: .some(nil)).smsQueued, "dev mode needs no app verification")
    }

    @Test("send again is refused for 60 s, then issues a new code and invalidates the old one")
    func resend() throws {
        let f = try PhoneFixture()
        let first = try f.send(fr, app: "web")
        let oldCode = try f.lastCode()
        let again = { try f.flow.resend(sessionInfo: first.sessionInfo, appToken: try f.appToken(app: "web"), remoteAddress: "203.0.113.7",
                                        composeSMS: { "Code \($0)" }) }
        f.clock.advance(seconds: 59)
        #expect(wireError(again) == "TOO_MANY_ATTEMPTS_TRY_LATER : RESEND_TOO_SOON")
        f.clock.advance(seconds: 1)
        let second = try again()
        #expect(second.sessionInfo != first.sessionInfo && second.smsQueued)
        #expect(try f.smsMessages().count == 2)
        #expect(wireError { try f.signIn(first.sessionInfo, oldCode) } == "SESSION_EXPIRED")
        #expect(wireError(again) == "SESSION_EXPIRED", "the replaced session cannot be resent twice")
        #expect(try f.send(fr, app: "web").sessionInfo == second.sessionInfo, "the new code is the pending one")
        guard case .signedIn = try f.signIn(second.sessionInfo, try f.lastCode()) else { Issue.record("no"); return }
    }

    @Test("send again needs an app token outside dev mode and counts against the send limits")
    func resendGuards() throws {
        let f = try PhoneFixture()
        var s = try f.send(fr, app: "web")
        f.clock.advance(seconds: 60)
        #expect(wireError { try f.flow.resend(sessionInfo: s.sessionInfo, appToken: nil, remoteAddress: "x", composeSMS: { $0 }) }
                == "MISSING_CLIENT_IDENTIFIER")
        for _ in 0..<4 {
            s = try f.flow.resend(sessionInfo: s.sessionInfo, appToken: try f.appToken(app: "web"), remoteAddress: "x", composeSMS: { $0 })
            f.clock.advance(seconds: 60)
        }
        #expect(wireError { try f.flow.resend(sessionInfo: s.sessionInfo, appToken: try f.appToken(app: "web"), remoteAddress: "x", composeSMS: { $0 }) }
                == "TOO_MANY_ATTEMPTS_TRY_LATER")
    }

    @Test("status reports attempts left, expiry and when send again is allowed")
    func status() throws {
        let f = try PhoneFixture()
        let s = try f.send(fr)
        _ = wireError { try f.signIn(s.sessionInfo, "000000") }
        let st = try #require(try f.flow.status(sessionInfo: s.sessionInfo))
        #expect(st.state == .pending && st.attemptsLeft == 4 && st.phoneNumber == fr)
        #expect(st.resendAvailableAt == f.clock.now() + 60_000 && st.expiresAt == f.clock.now() + 300_000)
        f.clock.advance(seconds: 300)
        #expect(try f.flow.status(sessionInfo: s.sessionInfo)?.state == .expired)
        #expect(try f.flow.status(sessionInfo: "ghs1.nothing") == nil)
    }
}

@Suite("Phone sign-in: fictional numbers")
struct PhoneFictionalNumberTests {
    @Test("the fictional test number is not a valid number for libphonenumber, yet it is accepted")
    func fictional() throws {
        #expect(throws: PhoneNumberError.self) { try PhoneNumber(parsing: PhoneFixture.testNumber) }
        let f = try PhoneFixture()
        #expect(try f.send(PhoneFixture.testNumber, token: .some(nil)).isTest)
    }
}
