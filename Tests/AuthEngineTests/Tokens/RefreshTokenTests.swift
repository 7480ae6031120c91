import AuthCrypto
import Testing
@testable import AuthEngine

@Suite("Refresh tokens")
struct RefreshTokenTests {
    @Test("a refresh returns a fresh ID token and a new refresh token, and the old one is marked rotated")
    func rotatesOnEveryUse() throws {
        let w = try SessionWorld()
        try w.user()
        let first = try w.signIn()
        w.clock.advance(seconds: 30)
        let r = try w.refreshOnce(first.refreshToken)
        #expect(r.refreshToken != first.refreshToken)
        #expect(r.refreshToken.hasPrefix(SignInTokens.refreshPrefix))
        #expect(r.localID == "user-1")
        #expect(r.expiresIn == 3600)
        let verified = try w.tokens.verify(r.idToken, kind: .idToken, project: SessionWorld.project, store: w.store)
        #expect(verified.uid == "user-1")
        #expect(verified.issuedAt == w.clock.nowSeconds)
        let old = try #require(try w.store.refreshToken(hash: SignInTokens.hash(refreshToken: first.refreshToken)))
        #expect(old.rotatedAt == w.clock.now())
        let new = try #require(try w.store.refreshToken(hash: SignInTokens.hash(refreshToken: r.refreshToken)))
        #expect(new.familyID == old.familyID)
        #expect(new.rotatedAt == nil)
    }

    @Test("the stored record holds only a hash of the refresh token")
    func storedHashed() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        let secret = t.refreshToken.dropFirst(SignInTokens.refreshPrefix.count)
        let rows = try w.store.db.rows("SELECT hex(token_hash), family_id FROM refresh_tokens") { [$0.text(0), $0.text(1)] }
        #expect(rows.count == 1)
        #expect(!rows[0].joined().contains(String(secret)))
        #expect(rows[0][0] == Hex.encode(SignInTokens.hash(refreshToken: t.refreshToken)).uppercased())
    }

    @Test("grant type and token are checked in Firebase's order with Firebase's codes")
    func requestErrors() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        let p = SessionWorld.project
        #expect(throws: AuthError(.missingGrantType)) { try w.refresh.refresh(grantType: nil, refreshToken: t.refreshToken, project: p, graceSeconds: 10) }
        #expect(throws: AuthError(.invalidGrantType)) { try w.refresh.refresh(grantType: "authorization_code", refreshToken: t.refreshToken, project: p, graceSeconds: 10) }
        #expect(throws: AuthError(.missingRefreshToken)) { try w.refresh.refresh(grantType: "refresh_token", refreshToken: "", project: p, graceSeconds: 10) }
        #expect(throws: AuthError(.invalidRefreshToken)) { try w.refresh.refresh(grantType: "refresh_token", refreshToken: "ghrt1.nope", project: p, graceSeconds: 10) }
        #expect(throws: AuthError(.invalidRefreshToken)) { try w.refresh.refresh(grantType: "refresh_token", refreshToken: t.refreshToken, project: "other-project", graceSeconds: 10) }
        // None of the failures consumed the token.
        _ = try w.refreshOnce(t.refreshToken)
    }

    @Test("reusing a rotated token inside the 10-second grace window answers with the successor already issued, never a new one")
    func reuseInsideGraceWindow() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        let a = try w.refreshOnce(t.refreshToken)
        w.clock.advance(seconds: 9)
        let b = try w.refreshOnce(t.refreshToken)   // a client retrying after a lost response
        #expect(b.refreshToken == a.refreshToken, "one successor per token")
        _ = try w.tokens.verify(b.idToken, kind: .idToken, project: SessionWorld.project, store: w.store)
        let family = try w.store.db.rows("SELECT COUNT(*) FROM refresh_tokens") { $0.int(0) }
        #expect(family == [2], "the replay stored nothing")
        // Once the successor is used, a replay of its parent is reuse, even inside the window.
        _ = try w.refreshOnce(a.refreshToken)
        #expect(throws: AuthError(.tokenExpired)) { try w.refreshOnce(t.refreshToken) }
    }

    @Test("reusing a rotated token after the grace window revokes the whole family")
    func reuseOutsideGraceWindow() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        let a = try w.refreshOnce(t.refreshToken)
        w.clock.advance(seconds: 11)
        #expect(throws: AuthError(.tokenExpired)) { try w.refreshOnce(t.refreshToken) }
        // The legitimate holder's current token died with the family…
        #expect(throws: AuthError(.tokenExpired)) { try w.refreshOnce(a.refreshToken) }
        // …and the event is audited.
        let events = try w.store.db.rows("SELECT event FROM audit_log WHERE event = 'refresh_token.reuse'") { $0.text(0) }
        #expect(events.count == 1)
    }

    @Test("reuse detection revokes only the reused family, not the user's other sign-ins")
    func otherFamiliesSurvive() throws {
        let w = try SessionWorld()
        try w.user()
        let phone = try w.signIn()
        let laptop = try w.signIn()
        _ = try w.refreshOnce(phone.refreshToken)
        w.clock.advance(seconds: 60)
        #expect(throws: AuthError(.tokenExpired)) { try w.refreshOnce(phone.refreshToken) }
        _ = try w.refreshOnce(laptop.refreshToken)
    }

    @Test("a disabled user gets USER_DISABLED and a deleted user USER_NOT_FOUND")
    func userState() throws {
        let w = try SessionWorld()
        try w.user("u-disabled")
        try w.user("u-deleted", phone: "+33612345679")
        let d = try w.signIn("u-disabled")
        let g = try w.signIn("u-deleted")
        var c = AccountChanges()
        c.localID = "u-disabled"
        c.disabled = true
        _ = try w.admin.update(project: SessionWorld.project, c)
        #expect(throws: AuthError(.userDisabled)) { try w.refreshOnce(d.refreshToken) }
        _ = try w.store.deleteAccount(project: SessionWorld.project, localID: "u-deleted")
        #expect(throws: AuthError(.userNotFound)) { try w.refreshOnce(g.refreshToken) }
    }

    @Test("revocation (validSince) expires earlier refresh tokens, even from the same second, but not later sign-ins")
    func revocation() throws {
        let w = try SessionWorld()
        try w.user()
        let older = try w.signIn()
        w.clock.advance(millis: 1100)
        let before = try w.signIn()
        w.clock.advance(millis: 300)   // same second as `before`
        try w.admin.revoke(project: SessionWorld.project, localID: "user-1")
        #expect(throws: AuthError(.tokenExpired)) { try w.refreshOnce(before.refreshToken) }
        #expect(throws: AuthError(.tokenExpired)) { try w.refreshOnce(older.refreshToken) }
        #expect(throws: AuthError(.tokenExpired)) { try w.accounts.account(forIDToken: older.idToken, project: SessionWorld.project) }
        // ID tokens carry whole seconds: one from the revocation's own second passes, as in Firebase.
        _ = try w.accounts.account(forIDToken: before.idToken, project: SessionWorld.project)
        w.clock.advance(seconds: 1)
        let after = try w.signIn()
        _ = try w.refreshOnce(after.refreshToken)
        _ = try w.accounts.account(forIDToken: after.idToken, project: SessionWorld.project)
    }

    @Test("a refreshed ID token keeps the sign-in's provider and auth_time, and lastRefreshAt is recorded")
    func refreshedClaims() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn(provider: "password")
        let authTime = w.clock.nowSeconds
        w.clock.advance(seconds: 7200)
        let r = try w.refreshOnce(t.refreshToken)
        let claims = SessionWorld.claims(r.idToken)
        #expect(claims["firebase"]?["sign_in_provider"]?.stringValue == "password")
        #expect(claims["auth_time"]?.int64Value == authTime)
        #expect(claims["iat"]?.int64Value == w.clock.nowSeconds)
        #expect(claims["exp"]?.int64Value == w.clock.nowSeconds + 3600)
        #expect(try w.account().lastRefreshAt == w.clock.now())
    }

    @Test("an anonymous sign-up's tokens say anonymous at both places Firebase puts it, and refresh keeps it")
    func anonymous() throws {
        let w = try SessionWorld()
        let (a, t) = try w.profile.signUpAnonymous(project: SessionWorld.project, remoteAddress: "192.0.2.1")
        #expect(a.anonymous)
        let claims = SessionWorld.claims(t.idToken)
        #expect(claims["provider_id"]?.stringValue == "anonymous")
        #expect(claims["firebase"]?["sign_in_provider"]?.stringValue == "anonymous")
        let r = try w.refreshOnce(t.refreshToken)
        #expect(SessionWorld.claims(r.idToken)["provider_id"]?.stringValue == "anonymous")
    }

    @Test("anonymous sign-ups are limited per client address")
    func anonymousLimit() throws {
        let w = try SessionWorld()
        for _ in 0..<AccountProfile.signUpsPerIPPerHour.max {
            _ = try w.profile.signUpAnonymous(project: SessionWorld.project, remoteAddress: "192.0.2.9")
        }
        #expect(throws: AuthError(.tooManyAttempts)) { try w.profile.signUpAnonymous(project: SessionWorld.project, remoteAddress: "192.0.2.9") }
        _ = try w.profile.signUpAnonymous(project: SessionWorld.project, remoteAddress: "192.0.2.10")
    }
}
