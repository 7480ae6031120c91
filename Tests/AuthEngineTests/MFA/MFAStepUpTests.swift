import AuthCrypto
import Testing
@testable import AuthEngine

/// The second factor asked of a user who is already signed in (nginx step-up, the hosted page's
/// `GET /__/auth/mfa?continueUrl=…`): each new one is a pending row, so the browser's own
/// credential is answered again and new ones are counted per client network.
@Suite("MFA: step-up")
struct MFAStepUpTests {
    typealias F = MFAFixture

    func pendingRows(_ f: F) throws -> Int64 { try f.store.db.rows("SELECT COUNT(*) FROM mfa_pending") { $0.int(0) }.first ?? -1 }

    @Test("the browser's still-valid credential of the same user and first factor is answered again, without a new row")
    func reusesHeld() throws {
        let f = try F()
        let (account, _) = try f.enrolledUser()
        let first = try f.mfa.stepUp(account, firstFactor: "password", remoteAddress: F.ip)
        #expect(first.expiresAt == f.clock.now() + PhoneMFA.pendingLifetime)
        f.clock.advance(seconds: 60)
        let again = try f.mfa.stepUp(account, firstFactor: "password", remoteAddress: F.ip, held: first.pendingCredential)
        #expect(again == first)
        #expect(try pendingRows(f) == 1)
        // It still finishes the sign-in, once.
        let enrollment = try #require(again.enrollments.first)
        let sent = try f.startSignIn(again.pendingCredential, enrollment.enrollmentID)
        _ = try f.finishSignIn(again.pendingCredential, sent.sessionInfo, try f.code(to: F.phone))
    }

    @Test("a held credential that is used, expired, unknown, another user's or another first factor's is not reused")
    func refusesOthers() throws {
        let f = try F()
        let (ada, _) = try f.enrolledUser()
        let (bob, _) = try f.enrolledUser("bob@example.com", F.otherPhone)
        let adas = try f.mfa.stepUp(ada, firstFactor: "password", remoteAddress: F.ip)
        var fresh: [String] = []
        // Another user's, another first factor's, an unknown one.
        fresh.append(try f.mfa.stepUp(bob, firstFactor: "password", remoteAddress: F.ip, held: adas.pendingCredential).pendingCredential)
        fresh.append(try f.mfa.stepUp(ada, firstFactor: "emailLink", remoteAddress: F.ip, held: adas.pendingCredential).pendingCredential)
        fresh.append(try f.mfa.stepUp(ada, firstFactor: "password", remoteAddress: F.ip, held: PhoneMFA.pendingPrefix + "forged").pendingCredential)
        // Past its ten minutes.
        f.clock.advance(seconds: 601)
        fresh.append(try f.mfa.stepUp(ada, firstFactor: "password", remoteAddress: F.ip, held: adas.pendingCredential).pendingCredential)
        // Used.
        let used = try f.mfa.stepUp(ada, firstFactor: "password", remoteAddress: F.ip)
        let sent = try f.startSignIn(used.pendingCredential, try #require(used.enrollments.first).enrollmentID)
        _ = try f.finishSignIn(used.pendingCredential, sent.sessionInfo, try f.code(to: F.phone))
        fresh.append(try f.mfa.stepUp(ada, firstFactor: "password", remoteAddress: F.ip, held: used.pendingCredential).pendingCredential)
        #expect(Set(fresh + [adas.pendingCredential, used.pendingCredential]).count == 7)
    }

    @Test("new step-ups are 30 per client per 10 minutes, then TOO_MANY_ATTEMPTS_TRY_LATER and no row; reuse is not counted")
    func perClientBudget() throws {
        let f = try F()
        let (account, _) = try f.enrolledUser()
        let before = try pendingRows(f)
        var last: MFAChallenge?
        for _ in 0..<30 { last = try f.mfa.stepUp(account, firstFactor: "password", remoteAddress: F.ip) }
        #expect(try pendingRows(f) == before + 30)
        #expect(wireError { try f.mfa.stepUp(account, firstFactor: "password", remoteAddress: F.ip) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // The refusal wrote nothing.
        #expect(try pendingRows(f) == before + 30)
        // The browser that holds one still gets it back.
        let held = try #require(last)
        #expect(try f.mfa.stepUp(account, firstFactor: "password", remoteAddress: F.ip, held: held.pendingCredential) == held)
        // Another network has its own budget; the next window starts again.
        _ = try f.mfa.stepUp(account, firstFactor: "password", remoteAddress: "198.51.100.9")
        f.clock.advance(seconds: 600)
        _ = try f.mfa.stepUp(account, firstFactor: "password", remoteAddress: F.ip)
    }
}
