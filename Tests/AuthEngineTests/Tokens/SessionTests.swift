import AuthCrypto
import Foundation
import JSONValue
import Testing
@testable import AuthEngine

@Suite("Session cookies and server-side sessions")
struct SessionTests {
    static let p = SessionWorld.project

    func hosted(_ w: SessionWorld, id: String = "user-1", idle: Int64 = 1800, lifetime: Int64 = 1_209_600) throws -> String {
        try w.sessions.startHostedSession(account: try w.account(id), provider: "phone", lifetime: lifetime, idleTimeout: idle)
    }

    func check(_ w: SessionWorld, _ cookie: String, cache: SessionCache? = nil) throws -> SessionCheck {
        try w.sessions.authorize(cookie: cookie, project: SessionTests.p, cache: cache)
    }

    func reason(_ c: SessionCheck) -> SessionCheck.Reason? { if case let .signedOut(r) = c { return r }; return nil }

    @Test("a hosted-page cookie is a session JWT naming a server-side session, and identifies its user")
    func hostedCookie() throws {
        let w = try SessionWorld()
        try w.user(email: "ada@example.com")
        let cookie = try hosted(w)
        let claims = SessionWorld.claims(cookie)
        #expect(claims["iss"]?.stringValue == "https://session.firebase.google.com/\(SessionTests.p)")
        #expect(claims["aud"]?.stringValue == SessionTests.p)
        #expect(claims["exp"]?.int64Value == w.clock.nowSeconds + 1_209_600)
        let sid = try #require(claims["sid"]?.stringValue)
        let record = try #require(try w.store.session(sidHash: Sessions.hash(sid: sid)))
        #expect(record.localID == "user-1" && record.idleTimeoutSeconds == 1800 && record.revokedAt == nil)
        let id = try #require(try check(w, cookie).identity)
        #expect(id.uid == "user-1" && id.provider == "phone")
        #expect(id.account.phoneNumber == "+33612345678" && id.account.email == "ada@example.com")
    }

    @Test("a session idle for longer than the timeout is refused; activity keeps it alive")
    func idleTimeout() throws {
        let w = try SessionWorld()
        try w.user()
        let cookie = try hosted(w, idle: 1800)
        for _ in 0..<4 {   // 80 minutes of activity every 20 minutes
            w.clock.advance(seconds: 20 * 60)
            #expect(try check(w, cookie).identity != nil)
        }
        w.clock.advance(seconds: 30 * 60 + 1)
        #expect(reason(try check(w, cookie)) == .idle)
        // Idle is final: coming back does not revive it.
        w.clock.advance(seconds: 1)
        #expect(reason(try check(w, cookie)) == .idle)
    }

    @Test("activity is written at most once a minute per session")
    func touchThrottled() throws {
        let w = try SessionWorld()
        try w.user()
        let cookie = try hosted(w)
        let sid = try #require(SessionWorld.claims(cookie)["sid"]?.stringValue)
        let start = w.clock.now()
        w.clock.advance(seconds: 30)
        _ = try check(w, cookie)
        #expect(try w.store.session(sidHash: Sessions.hash(sid: sid))?.lastSeenAt == start)
        w.clock.advance(seconds: 31)
        _ = try check(w, cookie)
        #expect(try w.store.session(sidHash: Sessions.hash(sid: sid))?.lastSeenAt == w.clock.now())
    }

    @Test("cookies expire at the end of their lifetime whatever the activity")
    func absoluteLifetime() throws {
        let w = try SessionWorld()
        try w.user()
        let cookie = try hosted(w, idle: 0, lifetime: 600)
        w.clock.advance(seconds: 599)
        #expect(try check(w, cookie).identity != nil)
        w.clock.advance(seconds: 2)
        #expect(reason(try check(w, cookie)) == .invalid)
    }

    @Test("createSessionCookie keeps the ID token's claims with the session issuer, new iat and exp")
    func createSessionCookieClaims() throws {
        let w = try SessionWorld()
        try w.user()
        var c = AccountChanges()
        c.localID = "user-1"
        c.customAttributes = #"{"role":"admin"}"#
        _ = try w.admin.update(project: SessionTests.p, c)
        let t = try w.signIn()
        w.clock.advance(seconds: 120)
        let cookie = try w.sessions.createSessionCookie(idToken: t.idToken, validDuration: "3600", project: SessionTests.p)
        let id = SessionWorld.claims(t.idToken), ck = SessionWorld.claims(cookie)
        #expect(ck["iss"]?.stringValue == "https://session.firebase.google.com/\(SessionTests.p)")
        #expect(ck["iat"]?.int64Value == w.clock.nowSeconds)
        #expect(ck["exp"]?.int64Value == w.clock.nowSeconds + 3600)
        for k in ["aud", "sub", "user_id", "auth_time", "phone_number", "firebase", "role"] { #expect(ck[k] == id[k], "\(k)") }
        #expect(ck["role"]?.stringValue == "admin")
        #expect(try check(w, cookie).identity?.idleTimeoutSeconds == 0)
        // Without a duration: the 14-day maximum.
        let long = try w.sessions.createSessionCookie(idToken: t.idToken, validDuration: nil, project: SessionTests.p)
        #expect(SessionWorld.claims(long)["exp"]?.int64Value == w.clock.nowSeconds + 1_209_600)
    }

    @Test("createSessionCookie accepts 300…1,209,600 seconds and nothing else", arguments: ["299", "1209601", "0", "-5", "abc", "3.5"])
    func durationBounds(duration: String) throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        #expect(throws: AuthError(.invalidSessionCookieDuration)) {
            try w.sessions.createSessionCookie(idToken: t.idToken, validDuration: duration, project: SessionTests.p)
        }
        _ = try w.sessions.createSessionCookie(idToken: t.idToken, validDuration: "300", project: SessionTests.p)
        _ = try w.sessions.createSessionCookie(idToken: t.idToken, validDuration: "1209600", project: SessionTests.p)
    }

    @Test("createSessionCookie refuses missing, invalid and revoked ID tokens")
    func createSessionCookieTokenChecks() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        #expect(throws: AuthError(.missingIDToken)) { try w.sessions.createSessionCookie(idToken: nil, validDuration: nil, project: SessionTests.p) }
        #expect(throws: AuthError(.invalidIDToken)) { try w.sessions.createSessionCookie(idToken: t.idToken + "x", validDuration: nil, project: SessionTests.p) }
        w.clock.advance(seconds: 1)
        try w.admin.revoke(project: SessionTests.p, localID: "user-1")
        #expect(throws: AuthError(.tokenExpired)) { try w.sessions.createSessionCookie(idToken: t.idToken, validDuration: nil, project: SessionTests.p) }
    }

    @Test("sign-out revokes that session only")
    func signOut() throws {
        let w = try SessionWorld()
        try w.user()
        let phone = try hosted(w), laptop = try hosted(w)
        #expect(try w.sessions.signOut(cookie: phone, project: SessionTests.p, cache: w.cache))
        #expect(reason(try check(w, phone)) == .revoked)
        #expect(try check(w, laptop).identity != nil)
        #expect(try !w.sessions.signOut(cookie: phone, project: SessionTests.p, cache: w.cache))
    }

    @Test("revoking a user refuses its session cookies and ID tokens issued before, at once")
    func revocation() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        w.clock.advance(seconds: 1)
        let cookie = try hosted(w)
        #expect(try check(w, cookie, cache: w.cache).identity != nil)   // now cached as signed in
        w.clock.advance(millis: 200)                                     // same second as the cookie
        try w.admin.revoke(project: SessionTests.p, localID: "user-1")
        #expect(reason(try check(w, cookie, cache: w.cache)) == .revoked)
        #expect(throws: AuthError(.tokenExpired)) { try w.accounts.account(forIDToken: t.idToken, project: SessionTests.p) }
        w.clock.advance(seconds: 1)
        #expect(try check(w, try hosted(w)).identity != nil)
    }

    @Test("a revocation by another instance is seen once the cached answer is older than its ttl")
    func crossInstanceLag() throws {
        let w = try SessionWorld()
        try w.user()
        let cookie = try hosted(w)
        #expect(try check(w, cookie, cache: w.cache).identity != nil)
        let otherInstance = AccountAdmin(store: w.store, clock: w.clock, random: w.random, cache: nil)
        try otherInstance.revoke(project: SessionTests.p, localID: "user-1")
        #expect(try check(w, cookie, cache: w.cache).identity != nil)   // the documented lag
        w.clock.advance(millis: SessionCache.defaultTTL)
        #expect(reason(try check(w, cookie, cache: w.cache)) == .revoked)
    }

    @Test("the cache never makes an idle session look active")
    func cacheErrsTowardsRefusing() throws {
        let w = try SessionWorld()
        try w.user()
        let cache = SessionCache(ttl: 3_600_000)   // an absurdly long ttl, to isolate the rule
        let cookie = try hosted(w, idle: 60)
        #expect(try check(w, cookie, cache: cache).identity != nil)
        w.clock.advance(seconds: 61)
        #expect(reason(try check(w, cookie, cache: cache)) == .idle)
    }

    @Test("a cookie verified once is not verified again within the ttl, but never outlives its expiry, and another cookie is checked")
    func verifiedCookieCache() throws {
        let w = try SessionWorld()
        try w.user()
        let cache = SessionCache(ttl: 3_600_000)   // an absurdly long ttl, to isolate the rule
        let cookie = try hosted(w, idle: 0, lifetime: 300)
        #expect(try check(w, cookie, cache: cache).identity != nil)
        #expect(try check(w, cookie, cache: cache).identity != nil)
        // A tampered copy (another signature) is its own entry, checked and refused.
        let tampered = String(cookie.dropLast(2)) + (cookie.hasSuffix("AA") ? "BB" : "AA")
        #expect(reason(try check(w, tampered, cache: cache)) == .invalid)
        // Same cookie, another project: verified for that project, refused.
        #expect(reason(try w.sessions.authorize(cookie: cookie, project: "other", cache: cache)) == .invalid)
        w.clock.advance(seconds: 301)
        #expect(reason(try check(w, cookie, cache: cache)) == .invalid)
    }

    @Test("disabled and deleted users are refused; re-enabling restores the session")
    func userState() throws {
        let w = try SessionWorld()
        try w.user()
        let cookie = try hosted(w)
        var c = AccountChanges()
        c.localID = "user-1"
        c.disabled = true
        _ = try w.admin.update(project: SessionTests.p, c)
        #expect(reason(try check(w, cookie, cache: w.cache)) == .userDisabled)
        c.disabled = false
        _ = try w.admin.update(project: SessionTests.p, c)
        #expect(try check(w, cookie, cache: w.cache).identity != nil)
        try w.admin.delete(project: SessionTests.p, localID: "user-1")
        #expect(reason(try check(w, cookie, cache: w.cache)) == .unknownSession)
    }

    @Test("tampered cookies, cookies signed by a foreign key and plain ID tokens are refused")
    func forgeries() throws {
        let w = try SessionWorld()
        try w.user()
        let cookie = try hosted(w)
        var parts = cookie.split(separator: ".").map(String.init)
        var payload = try #require(Base64URL.decode(parts[1]))
        payload = Array(String(decoding: payload, as: UTF8.self).replacingOccurrences(of: "user-1", with: "user-2").utf8)
        parts[1] = Base64URL.encode(payload)
        #expect(reason(try check(w, parts.joined(separator: "."))) == .invalid)
        let foreign = try RSAPrivateKey.generate(bits: 2048)
        let kid = SessionWorld.claims(cookie)   // reuse the real claims and even the real kid
        let header = JSON.object([("alg", .string("RS256")), ("kid", .string(try w.keyRing.signer(store: w.store).record.kid)), ("typ", .string("JWT"))])
        let forged = try JWS.signRS256(header: header.bytes, payload: kid.bytes, key: foreign)
        #expect(reason(try check(w, forged)) == .invalid)
        #expect(reason(try check(w, try w.signIn().idToken)) == .invalid)
        #expect(reason(try check(w, "")) == .missing)
    }

    @Test("a new hosted session stays bounded to the 5-minute … 14-day range")
    func lifetimeClamped() throws {
        let w = try SessionWorld()
        try w.user()
        let short = try hosted(w, lifetime: 10)
        #expect(SessionWorld.claims(short)["exp"]?.int64Value == w.clock.nowSeconds + 300)
        let long = try hosted(w, lifetime: 100 * 86400)
        #expect(SessionWorld.claims(long)["exp"]?.int64Value == w.clock.nowSeconds + 1_209_600)
    }
}
