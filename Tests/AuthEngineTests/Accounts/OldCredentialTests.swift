import AuthStore
import Testing
@testable import AuthEngine

/// docs/security.md "What an old or stolen credential can do": one test per row. Each takes a
/// credential issued before the owner's change (a first factor, a factor's removal, a
/// revocation, a disable) or before the recent-sign-in window, and checks what it can still do.
@Suite("Old credentials: what a credential issued before the owner's change can still do")
struct OldCredentialTests {
    typealias F = MFAFixture
    static let tooOld = "CREDENTIAL_TOO_OLD_LOGIN_AGAIN : " + SensitiveChange.tooOldDetail
    static let needsFactor = "CREDENTIAL_TOO_OLD_LOGIN_AGAIN : " + SensitiveChange.secondFactorDetail

    func refresh(_ f: F, _ token: String) throws -> RefreshTokens.Result {
        try f.refresh.refresh(grantType: "refresh_token", refreshToken: token, project: f.project.id, graceSeconds: 10,
                              idleTimeoutSeconds: f.project.session.refreshIdleTimeoutSeconds,
                              lifetimeSeconds: f.project.session.refreshLifetimeSeconds)
    }

    func profile(_ f: F) -> AccountProfile {
        AccountProfile(store: f.store, tokens: f.tokens, random: f.random, recentSignInSeconds: f.project.session.recentSignInSeconds)
    }

    /// An email-link sign-in's tokens (no second factor yet).
    func signedIn(_ f: F, _ email: String = "ada@example.com") throws -> IssuedTokens {
        try #require(try f.emailLinkSignIn(email).tokens)
    }

    @Test("refresh token from before the owner's first factor: revoked by the enrolment")
    func refreshBeforeFirstFactor() throws {
        let f = try F()
        let stolen = try signedIn(f)
        let owner = try signedIn(f)
        f.clock.advance(seconds: 1)
        let enrolled = try f.enrol(owner.idToken, F.phone)
        #expect(wireError { try refresh(f, stolen.refreshToken) } == "TOKEN_EXPIRED")
        // The enrolment's own tokens carry the factor and work.
        #expect(try f.verify(try refresh(f, enrolled.tokens.refreshToken).idToken).secondFactor?.identifier == enrolled.enrollment.enrollmentID)
    }

    @Test("ID token from before the first factor: revoked; one minted in the same second passed no factor and changes nothing")
    func idTokenBeforeFirstFactor() throws {
        let f = try F()
        let stolen = try signedIn(f)
        f.clock.advance(seconds: 1)
        let owner = try signedIn(f)
        let sameSecond = try signedIn(f)
        try f.enrol(owner.idToken, F.phone)
        #expect(wireError { try f.startEnrolment(stolen.idToken, F.otherPhone) } == "TOKEN_EXPIRED")
        // Issued in the enrolment's second (so not before validSince), but without the factor.
        #expect(wireError { try f.startEnrolment(sameSecond.idToken, F.otherPhone) } == Self.needsFactor)
    }

    @Test("session cookie from before the first factor: revoked by the enrolment")
    func sessionBeforeFirstFactor() throws {
        let f = try F()
        let stolen = try signedIn(f)
        let cookie = try f.sessions.createSessionCookie(idToken: stolen.idToken, validDuration: nil, project: f.project.id)
        let owner = try signedIn(f)
        f.clock.advance(seconds: 1)
        try f.enrol(owner.idToken, F.phone)
        guard case .signedOut(.revoked) = try f.sessions.authorize(cookie: cookie, project: f.project.id, cache: nil) else {
            Issue.record("the session outlived the first factor"); return
        }
    }

    @Test("an old sign-in (auth_time past the window) still refreshes but makes no sensitive change; a profile edit is fine")
    func oldSignIn() throws {
        let f = try F()
        let old = try signedIn(f)
        f.clock.advance(seconds: 301)
        let refreshed = try refresh(f, old.refreshToken)
        let idToken = refreshed.idToken
        #expect(wireError { try f.startEnrolment(idToken, F.phone) } == Self.tooOld)
        // Link a phone.
        let sent = try f.phone.sendCode(.init(phoneNumber: F.phone, appToken: try f.appToken(), apiKey: "key-1",
                                              remoteAddress: F.ip, composeSMS: { "Code \($0)" }))
        #expect(wireError { try f.phone.signIn(.init(sessionInfo: sent.sessionInfo, code: try f.code(to: F.phone), idToken: idToken,
                                                     operation: .link, remoteAddress: F.ip)) } == Self.tooOld)
        // Link or replace the email.
        var req = OobSendRequest(requestType: .emailSignIn, email: "mallory@example.com", apiKey: "key-1", origin: "https://auth.example.com",
                                 lang: "en", remoteAddress: F.ip)
        req.settings.continueURL = "https://app.example.com/done"
        req.appToken = try f.appToken()
        let link = try f.links.send(req) { _ in OobMessage(subject: "Sign in", text: "link", html: nil) }
        #expect(wireError { try f.links.signIn(email: "mallory@example.com", oobCode: link.oobCode, idToken: idToken) } == Self.tooOld)
        // Unlink, remove the email, delete.
        var unlink = AccountChanges()
        unlink.deleteProviders = ["password"]
        #expect(wireError { try profile(f).update(idToken: idToken, project: f.project.id, unlink) } == Self.tooOld)
        var dropEmail = AccountChanges()
        dropEmail.deleteAttributes = ["EMAIL"]
        #expect(wireError { try profile(f).update(idToken: idToken, project: f.project.id, dropEmail) } == Self.tooOld)
        #expect(wireError { try profile(f).delete(idToken: idToken, project: f.project.id) } == Self.tooOld)
        var rename = AccountChanges()
        rename.displayName = "Ada L."
        #expect(try profile(f).update(idToken: idToken, project: f.project.id, rename).displayName == "Ada L.")
        #expect(try f.account(refreshed.localID).email == "ada@example.com")
    }

    @Test("a sign-in that passed no second factor, of a user who has one, adds or removes none")
    func firstFactorOnly() throws {
        let f = try F()
        let (account, enrollment) = try f.enrolledUser()
        let firstOnly = try f.tokens.mintIDToken(for: try f.account(account.localID), provider: "password", store: f.store)
        f.clock.advance(seconds: 1)
        #expect(wireError { try f.startEnrolment(firstOnly, F.otherPhone) } == Self.needsFactor)
        #expect(wireError { try f.mfa.withdraw(idToken: firstOnly, enrollmentID: enrollment.enrollmentID, remoteAddress: F.ip) }
                == Self.needsFactor)
        #expect(try f.account(account.localID).mfaEnrollments == [enrollment])
        // With the factor passed, recently: both work.
        let withFactor = try #require(try f.signInWithSecondFactor().tokens)
        #expect(try f.mfa.withdraw(idToken: withFactor.idToken, enrollmentID: enrollment.enrollmentID, remoteAddress: F.ip)
                .account.mfaEnrollments.isEmpty)
    }

    @Test("refresh families end after the idle timeout and, when set, the absolute lifetime")
    func refreshLifetimes() throws {
        let f = try F { $0.session.refreshIdleTimeoutSeconds = 3600; $0.session.refreshLifetimeSeconds = 3 * 3600 }
        let a = try signedIn(f)
        f.clock.advance(seconds: 3601)
        #expect(wireError { try refresh(f, a.refreshToken) } == "TOKEN_EXPIRED")
        var token = try signedIn(f).refreshToken
        for _ in 0..<3 {
            f.clock.advance(seconds: 3000)
            token = try refresh(f, token).refreshToken
        }
        // 9,000 s used every 50 minutes: idle never hit, but past the family's 3 hours.
        f.clock.advance(seconds: 2000)
        #expect(wireError { try refresh(f, token) } == "TOKEN_EXPIRED")
    }

    @Test("credentials bound to a factor an admin removed: refresh, ID token and session all refused")
    func adminRemovedFactor() throws {
        let f = try F()
        let (account, _) = try f.enrolledUser()
        let signed = try #require(try f.signInWithSecondFactor().tokens)
        let cookie = try f.sessions.createSessionCookie(idToken: signed.idToken, validDuration: nil, project: f.project.id)
        f.clock.advance(seconds: 1)
        var c = AccountChanges()
        c.localID = account.localID
        c.mfaEnrollments = []
        _ = try AccountAdmin(store: f.store, clock: f.clock, random: f.random).update(project: f.project.id, c)
        #expect(wireError { try refresh(f, signed.refreshToken) } == "TOKEN_EXPIRED")
        #expect(wireError { try f.mfa.accounts.account(forIDToken: signed.idToken, project: f.project.id) } == "TOKEN_EXPIRED")
        guard case .signedOut = try f.sessions.authorize(cookie: cookie, project: f.project.id, cache: nil) else {
            Issue.record("the session outlived its factor"); return
        }
    }

    @Test("a pending second factor from before a revocation, a disable or the factor's removal finishes nothing")
    func pendingBeforeChange() throws {
        let f = try F()
        let (account, enrollment) = try f.enrolledUser()
        let admin = AccountAdmin(store: f.store, clock: f.clock, random: f.random)
        // Revocation.
        let c1 = try f.challenge()
        let sent = try f.startSignIn(c1.pendingCredential, enrollment.enrollmentID)
        let code = try f.code(to: F.phone)
        try admin.revoke(project: f.project.id, localID: account.localID)
        #expect(wireError { try f.finishSignIn(c1.pendingCredential, sent.sessionInfo, code) } == "INVALID_MFA_PENDING_CREDENTIAL")
        // Disable.
        let c2 = try f.challenge(ip: "192.0.2.20")
        try f.store.change(project: f.project.id, localID: account.localID) { $0.disabled = true }
        #expect(wireError { try f.startSignIn(c2.pendingCredential, enrollment.enrollmentID) } == "USER_DISABLED")
        try f.store.change(project: f.project.id, localID: account.localID) { $0.disabled = false }
        // The factor removed (by an admin: the pending credential is revoked with the rest).
        let c3 = try f.challenge(ip: "192.0.2.30")
        var clear = AccountChanges()
        clear.localID = account.localID
        clear.mfaEnrollments = []
        _ = try admin.update(project: f.project.id, clear)
        #expect(wireError { try f.startSignIn(c3.pendingCredential, enrollment.enrollmentID) } == "INVALID_MFA_PENDING_CREDENTIAL")
    }

    @Test("a revocation or disable: earlier refresh tokens, ID tokens and sessions refused")
    func revokedAndDisabled() throws {
        let f = try F()
        let a = try signedIn(f)
        let cookie = try f.sessions.createSessionCookie(idToken: a.idToken, validDuration: nil, project: f.project.id)
        let localID = try f.verify(a.idToken).uid
        f.clock.advance(seconds: 1)
        try AccountAdmin(store: f.store, clock: f.clock, random: f.random).revoke(project: f.project.id, localID: localID)
        #expect(wireError { try refresh(f, a.refreshToken) } == "TOKEN_EXPIRED")
        #expect(wireError { try f.mfa.accounts.account(forIDToken: a.idToken, project: f.project.id) } == "TOKEN_EXPIRED")
        guard case .signedOut = try f.sessions.authorize(cookie: cookie, project: f.project.id, cache: nil) else {
            Issue.record("the session outlived the revocation"); return
        }
        let b = try signedIn(f)
        try f.store.change(project: f.project.id, localID: localID) { $0.disabled = true }
        #expect(wireError { try refresh(f, b.refreshToken) } == "USER_DISABLED")
        #expect(wireError { try f.mfa.accounts.account(forIDToken: b.idToken, project: f.project.id) } == "USER_DISABLED")
    }

    @Test("an admin import that overwrites the account ends its earlier refresh tokens, sessions and pending second factors")
    func importOverwrite() throws {
        let f = try F()
        let (account, enrollment) = try f.enrolledUser()
        let signed = try #require(try f.signInWithSecondFactor().tokens)
        let cookie = try f.sessions.createSessionCookie(idToken: signed.idToken, validDuration: nil, project: f.project.id)
        let pending = try f.challenge()
        var row = ImportedAccount()
        row.localID = account.localID
        row.email = "ada@example.com"
        row.emailVerified = true
        row.mfaEnrollments = [.init(enrollmentID: enrollment.enrollmentID, phoneNumber: F.otherPhone, displayName: nil, enrolledAt: nil)]
        f.clock.advance(seconds: 1)
        let failures = try AccountAdmin(store: f.store, clock: f.clock, random: f.random)
            .importAccounts(project: f.project.id, [row], allowOverwrite: true)
        #expect(failures.isEmpty)
        #expect(wireError { try refresh(f, signed.refreshToken) } == "TOKEN_EXPIRED")
        guard case .signedOut = try f.sessions.authorize(cookie: cookie, project: f.project.id, cache: nil) else {
            Issue.record("the session outlived the overwrite"); return
        }
        #expect(wireError { try f.startSignIn(pending.pendingCredential, enrollment.enrollmentID) } == "INVALID_MFA_PENDING_CREDENTIAL")
    }
}
