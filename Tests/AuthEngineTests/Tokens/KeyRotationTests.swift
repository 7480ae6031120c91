import AuthCrypto
import JSONValue
import Testing
@testable import AuthEngine

@Suite("Signing-key rotation")
struct KeyRotationTests {
    static let p = SessionWorld.project
    static let hour: Int64 = 3600

    func kid(_ jwt: String) -> String? {
        let header = Base64URL.decode(String(jwt.split(separator: ".")[0])) ?? []
        return (try? JSONParser().parse(header))?["kid"]?.stringValue
    }

    @Test("a staged key is published at once but signs only after the activation delay")
    func staged() throws {
        let w = try SessionWorld()
        try w.user()
        let oldKid = try w.keyRing.signer(store: w.store).record.kid
        let staged = try w.keyRing.rotate(store: w.store, random: w.random, activationDelay: KeyRing.stagingDelay)
        #expect(try w.keyRing.keys(store: w.store).map(\.record.kid).contains(staged.kid))
        #expect(kid(try w.signIn().idToken) == oldKid)
        w.clock.advance(millis: KeyRing.stagingDelay - 1000)
        #expect(kid(try w.signIn().idToken) == oldKid)
        w.clock.advance(seconds: 1)
        #expect(kid(try w.signIn().idToken) == staged.kid)
    }

    @Test("tokens signed by the old key stay valid after a rotation, for their whole lifetime")
    func oldTokensStayValid() throws {
        let w = try SessionWorld()
        try w.user()
        w.clock.advance(seconds: 10)
        // Signed by the old key in its last moment of signing.
        let idToken = try w.signIn().idToken
        let cookie = try w.sessions.startHostedSession(account: try w.account(), provider: "phone", lifetime: 1_209_600, idleTimeout: 0)
        let new = try w.keyRing.rotate(store: w.store, random: w.random)
        #expect(kid(try w.signIn().idToken) == new.kid)   // the new key signs at once
        #expect(kid(idToken) != new.kid)
        w.clock.advance(seconds: KeyRotationTests.hour - 1)
        _ = try w.tokens.verify(idToken, kind: .idToken, project: KeyRotationTests.p, store: w.store)
        w.clock.advance(seconds: 14 * 86400 - KeyRotationTests.hour)
        #expect(try w.sessions.authorize(cookie: cookie, project: KeyRotationTests.p, cache: nil).identity != nil)
        w.clock.advance(seconds: 1)   // the cookie itself has expired now, not only its key
        #expect(try w.sessions.authorize(cookie: cookie, project: KeyRotationTests.p, cache: nil).identity == nil)
    }

    @Test("the retired key stays in the JWKS next to the new one")
    func bothPublished() throws {
        let w = try SessionWorld()
        let old = try w.keyRing.signer(store: w.store).record
        w.clock.advance(seconds: 1)
        let new = try w.keyRing.rotate(store: w.store, random: w.random)
        let keys = try w.keyRing.keys(store: w.store).map(\.record)
        #expect(keys.map(\.kid) == [new.kid, old.kid])
        #expect(keys[1].retiredAt == w.clock.now() && keys[1].expiresAt == w.clock.now() + KeyRing.retiredKeyLifetime)
    }

    @Test("a retired key is unpublished 14 days + 1 hour after it stopped signing, and its private key deleted")
    func retirementCleanup() throws {
        let w = try SessionWorld()
        let first = try w.keyRing.signer(store: w.store).record.kid
        let second = try w.keyRing.rotate(store: w.store, random: w.random)
        let retiredAt = w.clock.now()
        let unpublish = retiredAt + KeyRing.retiredKeyLifetime
        w.clock.advance(millis: unpublish - w.clock.now() - 1)
        #expect(try w.keyRing.keys(store: w.store, reload: true).map(\.record.kid).contains(first))
        w.clock.advance(millis: 1)
        #expect(try !w.keyRing.keys(store: w.store, reload: true).map(\.record.kid).contains(first))
        // Still stored until cleanup runs (start-up or the next rotation)…
        #expect(try w.store.db.rows("SELECT kid FROM signing_keys") { $0.text(0) }.contains(first))
        try w.keyRing.ensureKey(store: w.store, random: w.random)
        let stored = try w.store.db.rows("SELECT kid FROM signing_keys") { $0.text(0) }
        #expect(!stored.contains(first))
        #expect(stored == [second.kid])
        #expect(try w.keyRing.signer(store: w.store).record.kid == second.kid)
    }

    @Test("another instance's new key verifies at first sight, before this instance's cache expires")
    func unknownKidReload() throws {
        let w = try SessionWorld()
        try w.user()
        _ = try w.keyRing.keys(store: w.store)                      // this instance has cached the key set
        let otherRing = KeyRing(clock: w.clock)
        let other = TokenService(keyRing: otherRing, clock: w.clock)
        try otherRing.rotate(store: w.store, random: w.random)
        let token = try other.mintIDToken(for: try w.account(), provider: "phone", store: w.store)
        _ = try w.tokens.verify(token, kind: .idToken, project: KeyRotationTests.p, store: w.store)
    }

    @Test("a second start does not add a key; two staged rotations in a row keep a single signer at a time")
    func ensureAndDoubleRotation() throws {
        let w = try SessionWorld()
        try w.keyRing.ensureKey(store: w.store, random: w.random)
        #expect(try w.store.publishedSigningKeys(at: w.clock.now()).count == 1)
        let a = try w.keyRing.rotate(store: w.store, random: w.random, activationDelay: KeyRing.stagingDelay)
        w.clock.advance(seconds: 600)
        let b = try w.keyRing.rotate(store: w.store, random: w.random, activationDelay: KeyRing.stagingDelay)
        w.clock.advance(millis: KeyRing.stagingDelay - 600_000)
        #expect(try w.keyRing.signer(store: w.store).record.kid == a.kid)
        w.clock.advance(seconds: 600)
        #expect(try w.keyRing.signer(store: w.store).record.kid == b.kid)
        #expect(try w.keyRing.keys(store: w.store).count == 3)
    }
}
