import AuthCrypto
import Testing
@testable import AuthEngine

/// What a first factor hands an enrolled user instead of tokens (firebase-wire.md §2.17 "First-
/// factor response when MFA is required", §5.4; gatehouse.md "Second factor"): a pending
/// credential, random, stored hashed, single use, 10 minutes, bound to project and user.
@Suite("MFA: pending credentials")
struct MFAPendingCredentialTests {
    typealias F = MFAFixture

    @Test("an enrolled user's email link answers a challenge: no tokens, lastLoginAt unchanged, hints = enrollments")
    func challenge() throws {
        let f = try F()
        let (account, enrollment) = try f.enrolledUser()
        let before = try f.account(account.localID)
        let refreshTokens = try f.store.db.rows("SELECT COUNT(*) FROM refresh_tokens") { $0.int(0) }
        f.clock.advance(seconds: 3600)
        let r = try f.emailLinkSignIn()
        #expect(r.tokens == nil && !r.isNewUser)
        let c = try #require(r.challenge)
        #expect(c.enrollments == [enrollment])
        #expect(c.enrollments[0].obfuscatedPhone == "+*******5678")
        #expect(c.pendingCredential.hasPrefix(PhoneMFA.pendingPrefix))
        let after = try f.account(account.localID)
        #expect(after.lastLoginAt == before.lastLoginAt && after.lastRefreshAt == before.lastRefreshAt)
        #expect(try f.store.db.rows("SELECT COUNT(*) FROM refresh_tokens") { $0.int(0) } == refreshTokens)
    }

    @Test("only the credential's hash is stored, bound to project, user and first factor, for 10 minutes")
    func storedHashed() throws {
        let f = try F()
        let (account, _) = try f.enrolledUser()
        let c = try f.challenge()
        let record = try #require(try f.store.mfaPending(hash: Digest.sha256(c.pendingCredential)))
        #expect(record.projectID == f.project.id && record.localID == account.localID && record.firstFactor == "password")
        #expect(record.expiresAt == f.clock.now() + 600_000 && record.consumedAt == nil)
        let raw = try f.store.db.rows("SELECT credential_hash FROM mfa_pending") { $0.blob(0) }
        #expect(raw == [Digest.sha256(c.pendingCredential)])
        // Two first factors give two different credentials.
        #expect(try f.challenge().pendingCredential != c.pendingCredential)
    }

    @Test("finishing signs in with lastLoginAt, and the credential works once: INVALID_MFA_PENDING_CREDENTIAL after")
    func singleUse() throws {
        let f = try F()
        let (account, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        f.clock.advance(seconds: 20)
        let done = try f.finishSignIn(c.pendingCredential, sent.sessionInfo, try f.code(to: F.phone))
        #expect(done.account.localID == account.localID && done.enrollment == enrollment && done.firstFactor == "password")
        #expect(try f.account(account.localID).lastLoginAt == f.clock.now())
        let tokens = try #require(done.tokens)
        #expect(try f.verify(tokens.idToken).secondFactor == SecondFactor(identifier: enrollment.enrollmentID))

        #expect(wireError { try f.startSignIn(c.pendingCredential, enrollment.enrollmentID) } == "INVALID_MFA_PENDING_CREDENTIAL")
        // Even with a fresh, valid code for the same number.
        let other = try f.challenge()
        let again = try f.startSignIn(other.pendingCredential, enrollment.enrollmentID)
        let code = try f.code(to: F.phone)
        #expect(wireError { try f.finishSignIn(c.pendingCredential, again.sessionInfo, code) } == "INVALID_MFA_PENDING_CREDENTIAL")
    }

    @Test("a credential expires 10 minutes after the first factor")
    func expiry() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let early = try f.challenge()
        let late = try f.challenge()
        // A code asked for just before the end finishes just before the end.
        f.clock.advance(seconds: 9 * 60)
        let sent = try f.startSignIn(early.pendingCredential, enrollment.enrollmentID)
        f.clock.advance(millis: 59_999)
        #expect(try f.finishSignIn(early.pendingCredential, sent.sessionInfo, try f.code(to: F.phone)).tokens != nil)
        // One code asked for in time, one after: neither finishes once the 10 minutes are over.
        let lateSent = try f.startSignIn(late.pendingCredential, enrollment.enrollmentID)
        let lateCode = try f.code(to: F.phone)
        f.clock.advance(millis: 1)
        #expect(wireError { try f.finishSignIn(late.pendingCredential, lateSent.sessionInfo, lateCode) } == "INVALID_MFA_PENDING_CREDENTIAL")
        #expect(wireError { try f.startSignIn(late.pendingCredential, enrollment.enrollmentID) } == "INVALID_MFA_PENDING_CREDENTIAL")
    }

    @Test("a credential is refused by another project sharing the store")
    func otherProject() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let sent = try f.startSignIn(c.pendingCredential, enrollment.enrollmentID)
        let code = try f.code(to: F.phone)
        var otherProject = f.project
        otherProject.id = "other-project"
        let other = PhoneMFA(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, project: otherProject)
        #expect(wireError { try other.startSignIn(pendingCredential: c.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                  f.request()) } == "INVALID_MFA_PENDING_CREDENTIAL")
        #expect(wireError { try other.finishSignIn(pendingCredential: c.pendingCredential, sessionInfo: sent.sessionInfo, code: code,
                                                   remoteAddress: F.ip) } == "INVALID_MFA_PENDING_CREDENTIAL")
        // Its own project still accepts it.
        #expect(try f.finishSignIn(c.pendingCredential, sent.sessionInfo, code).tokens != nil)
    }

    @Test("a missing credential: MISSING_MFA_PENDING_CREDENTIAL on start, MISSING_CREDENTIAL on finish")
    func missing() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        for missing in [nil, ""] as [String?] {
            #expect(wireError { try f.startSignIn(missing, enrollment.enrollmentID) }
                    == "MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential.")
            #expect(wireError { try f.finishSignIn(missing, "ghs1.x", "123456") } == "MISSING_CREDENTIAL : Please set MFA Pending Credential.")
        }
    }

    @Test("an unknown or malformed credential is INVALID_MFA_PENDING_CREDENTIAL")
    func unknown() throws {
        let f = try F()
        let (_, enrollment) = try f.enrolledUser()
        let c = try f.challenge()
        let forged = [PhoneMFA.pendingPrefix + "AAAA", "not-a-credential", c.pendingCredential + "x",
                      PhoneMFA.pendingPrefix + String(repeating: "A", count: 200)]
        for bad in forged {
            #expect(wireError { try f.startSignIn(bad, enrollment.enrollmentID) } == "INVALID_MFA_PENDING_CREDENTIAL")
            #expect(wireError { try f.finishSignIn(bad, "ghs1.x", "123456") } == "INVALID_MFA_PENDING_CREDENTIAL")
        }
    }

    @Test("the enrollment id: missing is MISSING_MFA_ENROLLMENT_ID, unknown is MFA_ENROLLMENT_NOT_FOUND")
    func enrollmentID() throws {
        let f = try F()
        _ = try f.enrolledUser("ada@example.com")
        let (_, bobs) = try f.enrolledUser("bob@example.com", F.otherPhone)
        let c = try f.challenge("ada@example.com")
        let sms = try f.sms().count
        for missing in [nil, ""] as [String?] {
            #expect(wireError { try f.startSignIn(c.pendingCredential, missing) }
                    == "MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.")
        }
        #expect(wireError { try f.startSignIn(c.pendingCredential, "NoSuchEnrollmentIdXXXXXXXXXX") } == "MFA_ENROLLMENT_NOT_FOUND")
        // Another user's factor is not this user's.
        #expect(wireError { try f.startSignIn(c.pendingCredential, bobs.enrollmentID) } == "MFA_ENROLLMENT_NOT_FOUND")
        #expect(try f.sms().count == sms)
    }
}
