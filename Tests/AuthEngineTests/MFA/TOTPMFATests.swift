import AuthCrypto
import AuthStore
import Testing
@testable import AuthEngine

/// The TOTP second factor's rules: enrolment and sign-in, replay, the window, the budgets it
/// shares with phone codes, its secrets sealed at rest, and withdrawal.
@Suite("MFA: TOTP second factor")
struct TOTPMFATests {
    typealias F = MFAFixture
    static let key = Array(repeating: UInt8(7), count: 32)

    static func fixture(adjacent: Int = 1) throws -> F {
        try F { $0.totp.enabled = true; $0.totp.sealingKey = TOTPMFATests.key; $0.totp.adjacentIntervals = adjacent }
    }

    static func totp(_ f: F) -> TOTPMFA { TOTPMFA(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, project: f.project) }

    static func code(_ start: TOTPMFA.EnrolmentStart, _ f: F, offset: Int64 = 0) throws -> String {
        TOTP.code(secret: try #require(Base32.decode(start.sharedSecretKey)), step: TOTP.step(at: f.clock.now()) + offset)
    }

    /// A user with a TOTP factor: its secret, the enrollment and the enrolment's tokens.
    static func enrolled(_ f: F, email: String = "ada@example.com") throws -> (secret: [UInt8], enrollment: MFAEnrollment, tokens: IssuedTokens) {
        let (_, idToken) = try f.user(email)
        let start = try totp(f).startEnrolment(idToken: idToken)
        let done = try totp(f).finishEnrolment(idToken: idToken, sessionInfo: start.sessionInfo, code: try code(start, f), displayName: "Phone app",
                                                remoteAddress: F.ip)
        return (try #require(Base32.decode(start.sharedSecretKey)), done.enrollment, done.tokens)
    }

    @Test("enrolment: a 20-byte secret in base32, a sealed sessionInfo; the right code enrols it and the tokens name it")
    func enrol() throws {
        let f = try Self.fixture()
        let (account, idToken) = try f.user()
        let start = try Self.totp(f).startEnrolment(idToken: idToken)
        #expect(start.sharedSecretKey.count == 32 && Base32.decode(start.sharedSecretKey)?.count == 20)
        #expect(start.sessionInfo.hasPrefix(TOTPMFA.sessionPrefix))
        #expect(start.finalizeBy == f.clock.now() + TOTPMFA.enrolmentLifetime)
        #expect(start.uri.hasPrefix("otpauth://totp/auth.example.com:ada%40example.com?secret=" + start.sharedSecretKey))
        let done = try Self.totp(f).finishEnrolment(idToken: idToken, sessionInfo: start.sessionInfo, code: try Self.code(start, f),
                                                     displayName: "Phone app", remoteAddress: F.ip)
        #expect(done.enrollment.totp != nil && done.enrollment.phoneNumber == nil && done.enrollment.displayName == "Phone app")
        #expect(try f.account(account.localID).mfaEnrollments == [done.enrollment])
        let v = try f.verify(done.tokens.idToken)
        #expect(v.secondFactor == SecondFactor(factor: "totp", identifier: done.enrollment.enrollmentID))
    }

    @Test("the secret rests sealed: the database holds neither its bytes nor its base32, and opens nothing without the key")
    func sealedAtRest() throws {
        let f = try Self.fixture()
        let (secret, enrollment, _) = try Self.enrolled(f)
        let rows = try f.store.db.rows("SELECT mfa FROM accounts") { $0.text(0) }.joined()
        #expect(!rows.contains(Base32.encode(secret)) && !rows.contains(Base64URL.encode(secret)) && !rows.contains(Hex.encode(secret)))
        #expect(rows.contains(try #require(enrollment.totp?.sealedSecret)))
        let dump = try f.store.db.rows("SELECT quote(mfa) || quote(providers) FROM accounts") { $0.text(0) }.joined()
        #expect(!dump.contains(Base32.encode(secret)))
        // Without the key (another deployment's), the factor cannot be used: internal error, never a pass.
        var other = f.project
        other.totp.sealingKey = Array(repeating: 9, count: 32)
        let c = try f.challenge()
        let flow = TOTPMFA(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, project: other)
        #expect(throws: AuthError.self) {
            try flow.finishSignIn(pendingCredential: c.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                  code: TOTP.code(secret: secret, step: TOTP.step(at: f.clock.now()) + 1), remoteAddress: F.ip)
        }
    }

    @Test("sign-in: pending credential + factor id + code; each code once per factor and step, never an older one")
    func signInAndReplay() throws {
        let f = try Self.fixture()
        let (secret, enrollment, _) = try Self.enrolled(f)
        f.clock.advance(seconds: 30)
        let code = TOTP.code(secret: secret, step: TOTP.step(at: f.clock.now()))
        let first = try f.challenge()
        #expect(first.enrollments.first?.totp != nil)
        let done = try Self.totp(f).finishSignIn(pendingCredential: first.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                 code: code, remoteAddress: F.ip)
        #expect(try f.verify(try #require(done.tokens).idToken).secondFactor == SecondFactor(factor: "totp", identifier: enrollment.enrollmentID))
        // The same code again, with a new first factor: refused (a thief who watched it gets nothing).
        let second = try f.challenge()
        #expect(wireError { try Self.totp(f).finishSignIn(pendingCredential: second.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                          code: code, remoteAddress: F.ip) } == "INVALID_CODE")
        // Nor the previous step's, though inside the window.
        let older = TOTP.code(secret: secret, step: TOTP.step(at: f.clock.now()) - 1)
        #expect(wireError { try Self.totp(f).finishSignIn(pendingCredential: second.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                          code: older, remoteAddress: F.ip) } == "INVALID_CODE")
        // The next step's is fine.
        let next = TOTP.code(secret: secret, step: TOTP.step(at: f.clock.now()) + 1)
        #expect(try Self.totp(f).finishSignIn(pendingCredential: second.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                              code: next, remoteAddress: F.ip).tokens != nil)
    }

    @Test("adjacentIntervals: 0 accepts only the current step, 2 reaches two steps either side")
    func adjacentIntervals() throws {
        let strict = try Self.fixture(adjacent: 0)
        let (secret, enrollment, _) = try Self.enrolled(strict)
        strict.clock.advance(seconds: 90)
        let c = try strict.challenge()
        let late = TOTP.code(secret: secret, step: TOTP.step(at: strict.clock.now()) - 1)
        #expect(wireError { try Self.totp(strict).finishSignIn(pendingCredential: c.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                               code: late, remoteAddress: F.ip) } == "INVALID_CODE")
        let wide = try Self.fixture(adjacent: 2)
        let w = try Self.enrolled(wide)
        wide.clock.advance(seconds: 300)
        let cw = try wide.challenge()
        let early = TOTP.code(secret: w.secret, step: TOTP.step(at: wide.clock.now()) + 2)
        #expect(try Self.totp(wide).finishSignIn(pendingCredential: cw.pendingCredential, enrollmentID: w.enrollment.enrollmentID,
                                                 code: early, remoteAddress: F.ip).tokens != nil)
    }

    @Test("wrong codes: five per pending credential (then it is spent), and they count on the client's failures with phone codes")
    func budgets() throws {
        let f = try Self.fixture()
        let (secret, enrollment, _) = try Self.enrolled(f)
        f.clock.advance(seconds: 60)
        let right = TOTP.code(secret: secret, step: TOTP.step(at: f.clock.now()))
        let wrong = F.wrong(right)
        let c = try f.challenge()
        for _ in 0..<5 {
            #expect(wireError { try Self.totp(f).finishSignIn(pendingCredential: c.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                              code: wrong, remoteAddress: F.ip) } == "INVALID_CODE")
        }
        #expect(wireError { try Self.totp(f).finishSignIn(pendingCredential: c.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                          code: right, remoteAddress: F.ip) } == "INVALID_MFA_PENDING_CREDENTIAL")
        // 15 more wrong codes from the same network over new pending credentials: the client's 20 a day are spent.
        for _ in 0..<3 {
            let next = try f.challenge(ip: "198.51.100.40")
            for _ in 0..<5 {
                _ = wireError { try Self.totp(f).finishSignIn(pendingCredential: next.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                              code: wrong, remoteAddress: F.ip) }
            }
        }
        let last = try f.challenge(ip: "198.51.100.41")
        #expect(wireError { try Self.totp(f).finishSignIn(pendingCredential: last.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                                          code: right, remoteAddress: F.ip) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // Phone codes of that client are refused as well: one budget.
        #expect(wireError { _ = try f.phone.sendCode(.init(phoneNumber: F.otherPhone, appToken: try f.appToken(), apiKey: "key-1",
                                                          remoteAddress: F.ip, composeSMS: { $0 })) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // Another network is not affected.
        #expect(try Self.totp(f).finishSignIn(pendingCredential: last.pendingCredential, enrollmentID: enrollment.enrollmentID,
                                              code: right, remoteAddress: "192.0.2.99").tokens != nil)
    }

    @Test("an enrolment session: of this user only, ten minutes, one use, five wrong codes")
    func enrolmentSession() throws {
        let f = try Self.fixture()
        let (_, ada) = try f.user()
        let (_, bob) = try f.user("bob@example.com")
        let start = try Self.totp(f).startEnrolment(idToken: ada)
        let code = try Self.code(start, f)
        #expect(wireError { try Self.totp(f).finishEnrolment(idToken: bob, sessionInfo: start.sessionInfo, code: code, displayName: nil,
                                                             remoteAddress: F.ip) } == "INVALID_SESSION_INFO")
        for bad in ["", "ghtotp1.", "ghtotp1.AAAA", "ghs1.x", String(repeating: "a", count: 600)] as [String] {
            let message = wireError { try Self.totp(f).finishEnrolment(idToken: ada, sessionInfo: bad, code: code, displayName: nil,
                                                                        remoteAddress: F.ip) }
            #expect(message == (bad.isEmpty ? "MISSING_SESSION_INFO" : "INVALID_SESSION_INFO"), "\(bad.prefix(12))")
        }
        #expect(wireError { try Self.totp(f).finishEnrolment(idToken: ada, sessionInfo: start.sessionInfo, code: nil, displayName: nil,
                                                             remoteAddress: F.ip) } == "MISSING_CODE")
        for _ in 0..<5 {
            #expect(wireError { try Self.totp(f).finishEnrolment(idToken: ada, sessionInfo: start.sessionInfo, code: F.wrong(code),
                                                                 displayName: nil, remoteAddress: F.ip) } == "INVALID_CODE")
        }
        #expect(wireError { try Self.totp(f).finishEnrolment(idToken: ada, sessionInfo: start.sessionInfo, code: code, displayName: nil,
                                                             remoteAddress: F.ip) } == "SESSION_EXPIRED")
        // A fresh session: used once, then spent; and one left ten minutes is expired.
        let again = try Self.totp(f).startEnrolment(idToken: ada)
        let done = try Self.totp(f).finishEnrolment(idToken: ada, sessionInfo: again.sessionInfo, code: try Self.code(again, f), displayName: nil,
                                                     remoteAddress: F.ip)
        #expect(wireError { try Self.totp(f).finishEnrolment(idToken: done.tokens.idToken, sessionInfo: again.sessionInfo,
                                                             code: try Self.code(again, f, offset: 1), displayName: nil, remoteAddress: F.ip) }
                == "SESSION_EXPIRED")
        let stale = try Self.totp(f).startEnrolment(idToken: done.tokens.idToken)
        f.clock.advance(seconds: 601)
        let fresh = try f.tokens.mintIDToken(for: try f.account(done.account.localID), provider: "password", store: f.store,
                                             secondFactor: SecondFactor(factor: "totp", identifier: done.enrollment.enrollmentID))
        #expect(wireError { try Self.totp(f).finishEnrolment(idToken: fresh, sessionInfo: stale.sessionInfo, code: try Self.code(stale, f),
                                                             displayName: nil, remoteAddress: F.ip) } == "SESSION_EXPIRED")
    }

    @Test("off unless the project enables it and the deployment has a key; withdrawal revokes as for phone")
    func offAndWithdraw() throws {
        let off = try F()
        let (_, idToken) = try off.user()
        #expect(wireError { try Self.totp(off).startEnrolment(idToken: idToken) } == "OPERATION_NOT_ALLOWED : TOTP based MFA not enabled.")
        let noKey = try F { $0.totp.enabled = true }
        #expect(wireError { try Self.totp(noKey).startEnrolment(idToken: try noKey.user().1) } == "OPERATION_NOT_ALLOWED : TOTP based MFA not enabled.")
        let f = try Self.fixture()
        let (_, enrollment, tokens) = try Self.enrolled(f)
        f.clock.advance(seconds: 1)
        let r = try f.mfa.withdraw(idToken: tokens.idToken, enrollmentID: enrollment.enrollmentID, remoteAddress: F.ip)
        #expect(r.account.mfaEnrollments.isEmpty)
        #expect(wireError { try f.refresh.refresh(grantType: "refresh_token", refreshToken: tokens.refreshToken, project: f.project.id,
                                                  graceSeconds: 10) } == "TOKEN_EXPIRED")
        // mfaSignIn:start is no TOTP step.
        let f2 = try Self.fixture()
        let e2 = try Self.enrolled(f2)
        let c = try f2.challenge()
        #expect(wireError { try f2.startSignIn(c.pendingCredential, e2.enrollment.enrollmentID) } == "INVALID_ARGUMENT : TOTP factors need no mfaSignIn:start.")
    }
}
