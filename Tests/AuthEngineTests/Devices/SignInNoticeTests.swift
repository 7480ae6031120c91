import AuthCrypto
import AuthStore
import Testing
@testable import AuthEngine

/// The new sign-in notice (`SignInNotice`): who is mailed (only a new device of an account with a
/// verified address, never for an email-link sign-in), the daily budget, and the link (signs out
/// everywhere once; replayed, expired, forged or older than a sign-out, it does nothing).
@Suite("New sign-in notice: rules, budget, link")
struct SignInNoticeTests {
    static func device(_ n: Int, ua: String = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0") -> SignInDevice {
        SignInDevice(userAgent: ua, remoteAddress: "203.0.\(n).7")
    }

    final class World {
        let w: SessionWorld
        var policy = SignInNoticePolicy(enabled: true, perAccountPerDay: 3)
        var tokens: [String] = []
        init() throws {
            w = try SessionWorld()
            var a = try w.user(email: "ada@example.com")
            try w.store.transaction {
                a = try w.store.account(project: SessionWorld.project, localID: a.localID)!
                a.emailVerified = true
                try w.store.updateAccount(a)
            }
        }
        var notice: SignInNotice { SignInNotice(store: w.store, clock: w.clock, random: w.random, policy: policy) }
        func note(_ device: SignInDevice, provider: String = "phone", user: String = "user-1") throws -> SignInNotice.Outcome {
            try notice.noteDevice(account: try w.account(user), provider: provider, device: device, remoteAddress: "203.0.113.1") { input in
                self.tokens.append(input.token)
                return OobMessage(subject: "New sign-in", text: "device \(input.device.name.key) link \(input.token)", html: nil)
            }
        }
        func mails() throws -> [OutboxMessage] { try w.store.messages(project: SessionWorld.project, channel: .email, limit: 100) }
    }

    @Test("off by default: nothing noted, nothing mailed")
    func offByDefault() throws {
        let t = try World()
        t.policy = SignInNoticePolicy()
        #expect(!t.policy.enabled && t.policy.perAccountPerDay == 3)
        #expect(try t.note(Self.device(1)) == .off)
        #expect(try t.note(Self.device(2)) == .off)
        #expect(try t.mails().isEmpty)
    }

    @Test("the first device and known devices are never mailed; a new one is, to the verified address")
    func onlyNewDevices() throws {
        let t = try World()
        #expect(try t.note(Self.device(1)) == .firstDevice)
        #expect(try t.note(Self.device(1)) == .known)
        // A browser update is the same device.
        #expect(try t.note(SignInDevice(userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:129.0) Gecko/20100101 Firefox/129.0",
                                        remoteAddress: "203.0.1.99")) == .known)
        #expect(try t.mails().isEmpty)
        #expect(try t.note(Self.device(2)) == .mailed)
        let mail = try #require(try t.mails().first)
        #expect(mail.recipient == "ada@example.com" && mail.subject == "New sign-in")
        #expect(try t.note(Self.device(2)) == .known)
        #expect(try t.mails().count == 1)
        let audit = try t.w.store.auditEvents(project: SessionWorld.project, localID: "user-1", since: nil, limit: 10)
        #expect(audit.contains { $0.event.event == .signInNotice && $0.event.detail == "sent: new device" })
    }

    @Test("never for an email-link sign-in (it came from that mailbox), nor to an address that is not verified")
    func notForLinksOrUnverified() throws {
        let t = try World()
        #expect(try t.note(Self.device(1)) == .firstDevice)
        #expect(try t.note(Self.device(2), provider: SignInNotice.emailLinkProvider) == .emailLinkSignIn)
        // The device is noted all the same: its next sign-in, by any method, is known.
        #expect(try t.note(Self.device(2)) == .known)
        try t.w.user("user-2", phone: "+33612345679", email: "bob@example.com")
        #expect(try t.note(Self.device(1), user: "user-2") == .firstDevice)
        #expect(try t.note(Self.device(3), user: "user-2") == .noVerifiedEmail)
        try t.w.user("user-3", phone: "+33612345670", email: nil)
        #expect(try t.note(Self.device(1), user: "user-3") == .firstDevice)
        #expect(try t.note(Self.device(3), user: "user-3") == .noVerifiedEmail)
        #expect(try t.mails().isEmpty)
    }

    @Test("the daily budget: past it the sign-in goes on unmailed (and audited); the next day mails again")
    func budget() throws {
        let t = try World()
        #expect(try t.note(Self.device(1)) == .firstDevice)
        let outcomes = try (2...6).map { try t.note(Self.device($0)) }
        #expect(outcomes == [.mailed, .mailed, .mailed, .overBudget, .overBudget])
        #expect(try t.mails().count == 3)
        let audit = try t.w.store.auditEvents(project: SessionWorld.project, localID: "user-1", since: nil, limit: 20)
        #expect(audit.filter { $0.event.event == .signInNotice && $0.event.outcome == "refused" }.count == 2)
        // The next day.
        t.w.clock.advance(seconds: 86_400)
        #expect(try t.note(Self.device(7)) == .mailed)
    }

    @Test("the link signs out everywhere once: every token before it refused; replay, forgery and expiry refused")
    func link() throws {
        let t = try World()
        let tokens = try t.w.signIn()
        let cookie = try t.w.sessions.startHostedSession(account: try t.w.account(), provider: "phone", lifetime: 3600, idleTimeout: 0)
        #expect(try t.note(Self.device(1)) == .firstDevice)
        #expect(try t.note(Self.device(2)) == .mailed)
        let token = try #require(t.tokens.last)
        #expect(try t.mails().first?.body.contains(token) == true)
        // A GET's check uses nothing.
        let link = try t.notice.check(token: token)
        #expect(link.localID == "user-1" && link.projectID == SessionWorld.project)
        _ = try t.notice.check(token: token)
        t.w.clock.advance(seconds: 2)
        try t.notice.signOutEverywhere(token: token, remoteAddress: "198.51.100.1")
        t.w.cache.removeAll()
        #expect(throws: AuthError.self) { try t.w.refreshOnce(tokens.refreshToken) }
        #expect(try t.w.sessions.authorize(cookie: cookie, project: SessionWorld.project, cache: nil).identity == nil)
        #expect(throws: AuthError.self) { try t.w.accounts.account(forIDToken: tokens.idToken, project: SessionWorld.project) }
        let audit = try t.w.store.auditEvents(project: SessionWorld.project, localID: "user-1", since: nil, limit: 20)
        #expect(audit.contains { $0.event.event == .revoke && ($0.event.detail ?? "").hasPrefix("sign-in notice link") })
        #expect(audit.contains { $0.event.event == .signInNotice && $0.event.detail == "link used: signed out everywhere" })
        // Replayed: refused, by GET and POST alike, and nothing more happens.
        let again = try t.w.signIn()
        #expect(throws: AuthError(.invalidOobCode)) { try t.notice.check(token: token) }
        #expect(throws: AuthError(.invalidOobCode)) { try t.notice.signOutEverywhere(token: token, remoteAddress: nil) }
        #expect((try? t.w.refreshOnce(again.refreshToken)) != nil)
    }

    @Test("the link in the second of the sign-out it causes: the counter refuses the replay, and the confirmation page says it was used")
    func sameSecondReplay() throws {
        let t = try World()
        #expect(try t.note(Self.device(1)) == .firstDevice)
        #expect(try t.note(Self.device(2)) == .mailed)
        let token = try #require(t.tokens.last)
        try t.notice.signOutEverywhere(token: token, remoteAddress: nil)
        #expect(throws: AuthError(.invalidOobCode)) { try t.notice.signOutEverywhere(token: token, remoteAddress: nil) }
        // The page a GET shows reads the counter too: `validSince` alone is still this second.
        #expect(throws: AuthError(.invalidOobCode)) { try t.notice.check(token: token) }
    }

    @Test("expired after 7 days; a forged, altered or foreign link is refused; a link from before a sign-out everywhere too")
    func refusedLinks() throws {
        let t = try World()
        #expect(try t.note(Self.device(1)) == .firstDevice)
        #expect(try t.note(Self.device(2)) == .mailed)
        let token = try #require(t.tokens.last)
        // Altered: another uid in the payload, the same signature.
        let parts = token.dropFirst(5).split(separator: ".")
        let other = "gsn1." + Base64URL.encode(Array("\(SessionWorld.project)\nuser-2\n\(t.w.clock.now())".utf8)) + "." + parts[1]
        let forged = SignInNotice.link(project: SessionWorld.project, localID: "user-1", issuedAt: t.w.clock.now(), key: Array(repeating: 7, count: 32))
        for bad in [other, forged, "", "gsn1.", "gsn1.a.b", String(repeating: "x", count: 5000), token + "x"] {
            #expect(throws: AuthError(.invalidOobCode), "\(bad.prefix(40))") { try t.notice.signOutEverywhere(token: bad, remoteAddress: nil) }
        }
        // Signed out everywhere from the account page after the mail: the link is spent.
        t.w.clock.advance(seconds: 1)
        try SignInList(store: t.w.store, clock: t.w.clock).signOutEverywhere(account: try t.w.account(), remoteAddress: nil)
        #expect(throws: AuthError(.invalidOobCode)) { try t.notice.check(token: token) }
        // Expiry.
        #expect(try t.note(Self.device(3)) == .mailed)
        let fresh = try #require(t.tokens.last)
        t.w.clock.advance(seconds: 7 * 86_400 + 1)
        #expect(throws: AuthError(.expiredOobCode)) { try t.notice.signOutEverywhere(token: fresh, remoteAddress: nil) }
    }
}
