import AuthStore
import Testing
import TestSupport
@testable import AuthEngine

/// The system clock may jump (an NTP step, a wrong clock corrected by hand). Whatever it does,
/// no flow traps, a code, link or token is never accepted once the clock is past its stored
/// expiry, a used one stays used, and limit windows stay windows.
@Suite("Clock jumps")
struct ClockJumpTests {
    static let hours: Int64 = 3600

    @Test("A phone code stays expired after the clock goes back to a time still past its expiry, and a used one stays used")
    func phoneCodes() throws {
        let f = try PhoneFixture(dev: true)
        let number = PhoneFixture.testNumber, code = PhoneFixture.testCode
        let expired = try f.send(number)
        f.clock.advance(seconds: 3 * ClockJumpTests.hours)
        #expect(authError { _ = try f.signIn(expired.sessionInfo, code) }?.code == .sessionExpired)
        f.clock.advance(seconds: -2 * ClockJumpTests.hours)
        #expect(authError { _ = try f.signIn(expired.sessionInfo, code) }?.code == .sessionExpired)

        let used = try f.send(number)
        guard case .signedIn = try f.signIn(used.sessionInfo, code) else { Issue.record("not signed in"); return }
        f.clock.advance(seconds: -5 * ClockJumpTests.hours)
        #expect(authError { _ = try f.signIn(used.sessionInfo, code) } != nil)
        // Sending and signing in still work on either side of the jumps.
        let again = try f.send(number)
        guard case .signedIn = try f.signIn(again.sessionInfo, code) else { Issue.record("not signed in after the jump back"); return }
        f.clock.advance(seconds: 30 * ClockJumpTests.hours)
        let later = try f.send(number)
        guard case .signedIn = try f.signIn(later.sessionInfo, code) else { Issue.record("not signed in after the jump ahead"); return }
    }

    @Test("A temporary proof past its expiry stays refused after the clock goes back to a time still past it")
    func phoneProofs() throws {
        let f = try PhoneFixture(dev: true)
        _ = try f.signedInUser(PhoneFixture.testNumber)
        let (_, other) = try f.emailUser()
        let s = try f.send(PhoneFixture.testNumber)
        guard case let .numberInUse(proof, _, _) = try f.signIn(s.sessionInfo, PhoneFixture.testCode, op: .link, idToken: other) else {
            Issue.record("no temporary proof"); return
        }
        f.clock.advance(seconds: 3 * ClockJumpTests.hours)
        #expect(authError { _ = try f.signIn(proof: proof, number: PhoneFixture.testNumber) } != nil)
        f.clock.advance(seconds: -2 * ClockJumpTests.hours)
        #expect(authError { _ = try f.signIn(proof: proof, number: PhoneFixture.testNumber) } != nil)
    }

    @Test("An email link stays expired, and a used one used, across jumps back that stay past its expiry")
    func emailLinks() throws {
        let f = try EmailLinkFixture()
        let late = try f.code()
        let used = try f.code()
        _ = try f.flows.signIn(email: "ada@example.com", oobCode: used)
        f.clock.advance(seconds: 4 * ClockJumpTests.hours)
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: late) }?.code == .expiredOobCode)
        f.clock.advance(seconds: -3 * ClockJumpTests.hours)
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: late) }?.code == .expiredOobCode)
        f.clock.advance(seconds: -6 * ClockJumpTests.hours)
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: used) } != nil)
        // A new link works on the far side of the jump.
        let fresh = try f.code()
        _ = try f.flows.signIn(email: "ada@example.com", oobCode: fresh)
    }

    @Test("A session cookie and an ID token past their expiry stay refused after the clock goes back to a time still past it")
    func tokens() throws {
        let w = try SessionWorld()
        try w.user()
        let signedIn = try w.signIn()
        let cookie = try w.sessions.startHostedSession(account: try w.account(), provider: "phone", lifetime: 3600, idleTimeout: 0)
        w.clock.advance(seconds: 5 * ClockJumpTests.hours)
        #expect(throws: (any Error).self) { _ = try w.tokens.verify(signedIn.idToken, kind: .idToken, project: SessionWorld.project, store: w.store) }
        guard case .signedOut = try w.sessions.authorize(cookie: cookie, project: SessionWorld.project, cache: nil) else {
            Issue.record("expired cookie accepted"); return
        }
        w.clock.advance(seconds: -3 * ClockJumpTests.hours)
        #expect(throws: (any Error).self) { _ = try w.tokens.verify(signedIn.idToken, kind: .idToken, project: SessionWorld.project, store: w.store) }
        guard case .signedOut = try w.sessions.authorize(cookie: cookie, project: SessionWorld.project, cache: nil) else {
            Issue.record("expired cookie accepted after the jump back"); return
        }
        // A refresh token rotated "in the future" (before the jump back) is not a reuse inside the grace.
        let next = try w.refreshOnce(signedIn.refreshToken)
        w.clock.advance(seconds: -10 * ClockJumpTests.hours)
        #expect(throws: (any Error).self) { _ = try w.refreshOnce(signedIn.refreshToken) }
        _ = next
    }

    @Test("Limit windows follow the clock both ways: each window starts at or before now and ends after it, no trap")
    func limitWindows() throws {
        let store = try makeStore()
        let clock = FixedClock()
        let limits = Limits(store: store, clock: clock)
        let rule = Limits.Rule("jump", max: 2, per: 300)
        #expect(try limits.record(rule, key: "k"))
        #expect(try limits.record(rule, key: "k"))
        #expect(try !limits.record(rule, key: "k"))
        for jump: Int64 in [-7 * ClockJumpTests.hours, 30 * ClockJumpTests.hours, -1, 1, -30 * ClockJumpTests.hours] {
            clock.advance(seconds: jump)
            let start = limits.window(rule)
            #expect(start <= clock.now() && clock.now() < start + 300_000)
            _ = try limits.record(rule, key: "k")
            #expect(try limits.count(rule, key: "k") >= 1)
        }
        // The rule's own windows (a refusal is also counted for the console, in windows of its own).
        let stored = try store.db.rows("SELECT window_start, expires_at FROM limit_counters WHERE bucket LIKE 'jump:%'") { ($0.int(0), $0.int(1)) }
        #expect(stored.allSatisfy { $0.1 - $0.0 == 300_000 })
    }

    @Test("SMS budgets summed over rolling windows take jumps either way without a trap")
    func pumpingWindows() throws {
        let f = try PhoneFixture { p in p.phone.sendsPerIPPerHour = 10000; p.phone.pumping.smsPerProjectPerDay = 5 }
        for i in 0..<3 { #expect(try f.send("+3361234000\(i)").smsQueued) }
        f.clock.advance(seconds: -6 * ClockJumpTests.hours)
        #expect(try f.send("+33612341000").smsQueued)
        f.clock.advance(seconds: 6 * ClockJumpTests.hours)
        // The four sends are all in the rolling day again: one more, then refused.
        #expect(try f.send("+33612342000").smsQueued)
        #expect(authError { _ = try f.send("+33612343000") }?.code == .tooManyAttempts)
        f.clock.advance(seconds: 48 * ClockJumpTests.hours)
        #expect(try f.send("+33612344000").smsQueued)
    }
}
