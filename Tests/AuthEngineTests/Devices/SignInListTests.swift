import AuthCrypto
import AuthStore
import Testing
@testable import AuthEngine

/// "Where you're signed in" (`SignInList`): what it lists, and that each sign-out revokes exactly
/// what it names — the old cookie and the old refresh token are refused after each, the rest goes on.
@Suite("Sign-in list: listing and each revocation")
struct SignInListTests {
    static let firefox = SignInDevice(userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0",
                                      remoteAddress: "203.0.113.9")
    static let app = SignInDevice(userAgent: "MyApp/3.1 CFNetwork/1494.0.7 Darwin/23.4.0", remoteAddress: "2001:db8:1:2::5")
    static let chrome = SignInDevice(userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
                                     remoteAddress: "198.51.100.20")

    /// One user signed in four times: two apps (refresh families with their devices) and two browsers.
    struct Signed {
        let world: SessionWorld
        let firefox: IssuedTokens
        let app: IssuedTokens
        let mine: String
        let other: String
        var list: SignInList { SignInList(store: world.store, clock: world.clock) }
        func account() throws -> Account { try world.account() }
        func sid(_ cookie: String) throws -> [UInt8] {
            let claims = SessionWorld.claims(cookie)
            return Sessions.hash(sid: try #require(claims["sid"]?.stringValue))
        }
        func signedIn(_ cookie: String) throws -> Bool {
            try world.sessions.authorize(cookie: cookie, project: SessionWorld.project, cache: world.cache).identity != nil
        }
        func refreshes(_ token: String) -> Bool { (try? world.refreshOnce(token)) != nil }
    }

    func signed() throws -> Signed {
        let w = try SessionWorld()
        try w.user(email: "ada@example.com")
        let firefox = try w.signIn(device: Self.firefox)
        w.clock.advance(seconds: 60)
        let app = try w.signIn(device: Self.app)
        w.clock.advance(seconds: 60)
        let other = try w.sessions.startHostedSession(account: try w.account(), provider: "phone", lifetime: 3600, idleTimeout: 0,
                                                      device: Self.chrome)
        w.clock.advance(seconds: 60)
        let mine = try w.sessions.startHostedSession(account: try w.account(), provider: "phone", lifetime: 3600, idleTimeout: 0,
                                                     secondFactor: nil, device: Self.chrome)
        return Signed(world: w, firefox: firefox, app: app, mine: mine, other: other)
    }

    @Test("every live sign-in, this browser first, then by last use; devices, providers, times; revoked, expired and idle ones left out")
    func listing() throws {
        let s = try signed()
        let current = try s.sid(s.mine)
        let entries = try s.list.list(account: try s.account(), currentSession: current)
        #expect(entries.count == 4)
        #expect(entries[0].isCurrent && entries[0].id == "s." + Hex.encode(current) && entries[0].kind == .browser)
        #expect(entries.filter(\.isCurrent).count == 1)
        #expect(entries.map(\.device.name.browser) == ["Chrome", "Chrome", "MyApp", "Firefox"])
        #expect(entries.map(\.device.network) == ["198.51.100.0/24", "198.51.100.0/24", "2001:db8:1::/48", "203.0.113.0/24"])
        #expect(entries[2].kind == .app && entries[2].id.hasPrefix("a.") && entries[2].provider == "phone")
        // The identity of the cookie says which session it is.
        let id = try #require(try s.world.sessions.authorize(cookie: s.mine, project: SessionWorld.project, cache: nil).identity)
        #expect(id.sidHash == current)
        // A refresh keeps the family's device, and the family is listed once, used later.
        s.world.clock.advance(seconds: 60)
        let refreshed = try s.world.refreshOnce(s.firefox.refreshToken)
        let after = try s.list.list(account: try s.account(), currentSession: current)
        #expect(after.count == 4)
        let firefox = try #require(after.first { $0.device.name.browser == "Firefox" })
        #expect(firefox.device == Self.firefox && firefox.lastUsedAt == s.world.clock.now())
        #expect(try s.world.store.refreshToken(hash: SignInTokens.hash(refreshToken: refreshed.refreshToken))?.userAgent == Self.firefox.userAgent)
        // An idle session (its own timeout) and an expired one are not listed.
        let idle = try s.world.sessions.startHostedSession(account: try s.account(), provider: "phone", lifetime: 300, idleTimeout: 60)
        #expect(try s.list.list(account: try s.account(), currentSession: current).count == 5)
        s.world.clock.advance(seconds: 120)
        #expect(try s.list.list(account: try s.account(), currentSession: current).count == 4)
        _ = idle
        // Another user's list does not show these.
        try s.world.user("user-2", phone: "+33612345679")
        #expect(try s.list.list(account: try s.world.account("user-2"), currentSession: current).isEmpty)
    }

    @Test("signing out one browser: its cookie is refused, everything else goes on; once")
    func signOutOneBrowser() throws {
        let s = try signed()
        let other = "s." + Hex.encode(try s.sid(s.other))
        #expect(try s.list.signOut(account: try s.account(), id: other, remoteAddress: "203.0.113.1"))
        s.world.cache.evict(try s.sid(s.other))
        #expect(try !s.signedIn(s.other))
        #expect(try s.signedIn(s.mine))
        #expect(s.refreshes(s.firefox.refreshToken) && s.refreshes(s.app.refreshToken))
        #expect(try !s.list.signOut(account: try s.account(), id: other, remoteAddress: nil))
        #expect(try s.world.store.auditEvents(project: SessionWorld.project, localID: "user-1", since: nil, limit: 100).contains { $0.event.event == .sessionRevoke })
    }

    @Test("signing out one app: its family's tokens are refused, the other app and the browsers go on")
    func signOutOneApp() throws {
        let s = try signed()
        let entries = try s.list.list(account: try s.account(), currentSession: try s.sid(s.mine))
        let app = try #require(entries.first { $0.device.name.browser == "MyApp" })
        #expect(try s.list.signOut(account: try s.account(), id: app.id, remoteAddress: nil))
        #expect(!s.refreshes(s.app.refreshToken))
        #expect(s.refreshes(s.firefox.refreshToken))
        #expect(try s.signedIn(s.mine) && s.signedIn(s.other))
        #expect(try s.list.list(account: try s.account(), currentSession: nil).count == 3)
    }

    @Test("an id that is not the user's, or not an id, names nothing")
    func foreignIDs() throws {
        let s = try signed()
        try s.world.user("user-2", phone: "+33612345679")
        let theirs = try s.world.signIn("user-2")
        let theirFamily = try #require(try s.world.store.refreshToken(hash: SignInTokens.hash(refreshToken: theirs.refreshToken))).familyID
        let me = try s.account()
        for id in ["a." + theirFamily, "s." + String(repeating: "ab", count: 32), "s.zz", "x.1", "", "a.", String(repeating: "a", count: 500)] {
            #expect(try !s.list.signOut(account: me, id: id, remoteAddress: nil), "\(id)")
        }
        #expect(s.refreshes(theirs.refreshToken))
        // Their own list still has it; mine still has four.
        #expect(try s.list.list(account: try s.world.account("user-2"), currentSession: nil).count == 1)
        #expect(try s.list.list(account: me, currentSession: nil).count == 4)
    }

    @Test("signing out the others: every other session and every family is refused; this browser goes on")
    func signOutOthers() throws {
        let s = try signed()
        let n = try s.list.signOutOthers(account: try s.account(), currentSession: try s.sid(s.mine), remoteAddress: nil)
        #expect(n == 3)
        s.world.cache.removeAll()
        #expect(try !s.signedIn(s.other))
        #expect(!s.refreshes(s.firefox.refreshToken) && !s.refreshes(s.app.refreshToken))
        #expect(try s.signedIn(s.mine))
        #expect(try s.list.list(account: try s.account(), currentSession: try s.sid(s.mine)).map(\.isCurrent) == [true])
        #expect(try s.world.store.auditEvents(project: SessionWorld.project, localID: "user-1", since: nil, limit: 100).contains { $0.event.event == .sessionRevokeOthers })
    }

    @Test("signing out everywhere: every cookie (this one too), every family and every ID token issued before")
    func signOutEverywhere() throws {
        let s = try signed()
        s.world.clock.advance(seconds: 1)
        try s.list.signOutEverywhere(account: try s.account(), remoteAddress: nil)
        s.world.cache.removeAll()
        #expect(try !s.signedIn(s.mine) && !s.signedIn(s.other))
        #expect(!s.refreshes(s.firefox.refreshToken) && !s.refreshes(s.app.refreshToken))
        #expect(throws: AuthError.self) { try s.world.accounts.account(forIDToken: s.app.idToken, project: SessionWorld.project) }
        #expect(try s.list.list(account: try s.account(), currentSession: nil).isEmpty)
        // A new sign-in after it works and is listed.
        s.world.clock.advance(seconds: 1)
        let again = try s.world.signIn()
        #expect(s.refreshes(again.refreshToken))
        #expect(try s.list.list(account: try s.account(), currentSession: nil).count == 1)
    }
}
