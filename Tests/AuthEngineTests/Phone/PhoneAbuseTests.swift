import Testing
@testable import AuthEngine

/// docs/security.md, "Phone codes": one test per line of the threat model.
@Suite("Phone sign-in: abuse budgets (threat model)")
struct PhoneAbuseTests {
    let victim = "+33612345678"
    let owner = "203.0.113.7"

    func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

    @Test("someone else's wrong codes never lock the owner out of their own session")
    func ownerNotLockedOut() throws {
        let f = try PhoneFixture()
        let mine = try f.send(victim, ip: owner)
        let myCode = try f.lastCode()
        // Four other clients take the rest of the number's hourly sends and guess until each code dies.
        for i in 0..<4 {
            let ip = "198.51.100.\(10 + i)"
            let theirs = try f.send(victim, ip: ip)
            let code = try f.lastCode()
            for _ in 0..<5 { #expect(wireError { try f.signIn(theirs.sessionInfo, wrong(code), ip: ip) } == "INVALID_CODE") }
            #expect(wireError { try f.signIn(theirs.sessionInfo, code, ip: ip) } == "SESSION_EXPIRED")
        }
        guard case let .signedIn(account, _, _) = try f.signIn(mine.sessionInfo, myCode, ip: owner) else { Issue.record("not signed in"); return }
        #expect(account.phoneNumber == victim)
    }

    @Test("another client asking for the same number gets a session of its own, never the pending one")
    func noSessionHandBack() throws {
        let f = try PhoneFixture()
        let mine = try f.send(victim, ip: owner)
        let theirs = try f.send(victim, ip: "198.51.100.1")
        #expect(theirs.sessionInfo != mine.sessionInfo && theirs.smsQueued)
        #expect(try f.send(victim, ip: owner).sessionInfo == mine.sessionInfo, "the same client gets its pending code back")
        // The other client's guesses spend its own session only.
        for _ in 0..<5 { _ = wireError { try f.signIn(theirs.sessionInfo, "000000", ip: "198.51.100.1") } }
        let st = try #require(try f.flow.status(sessionInfo: mine.sessionInfo))
        #expect(st.attemptsLeft == 5)
    }

    @Test("an IPv6 client is its /64: another address in it gets the pending code back, another /64 does not")
    func ipv6Reentrancy() throws {
        let f = try PhoneFixture()
        let a = try f.send(victim, ip: "2001:db8:1:2::10")
        #expect(try f.send(victim, ip: "2001:db8:1:2:abcd::1").sessionInfo == a.sessionInfo)
        #expect(try f.send(victim, ip: "2001:db8:1:3::10").sessionInfo != a.sessionInfo)
    }

    @Test("the guesses against one number stay within its sends × attempts per code (50 a day, at most 100 in any 24 h)")
    func boundedGuesses() throws {
        let f = try PhoneFixture()
        var guesses = 0
        var client = 0
        // Many clients, each from its own /24, all day long: every send they can get, every guess it allows.
        for _ in 0..<24 {
            while true {
                client += 1
                let ip = "10.\(client / 256).\(client % 256).1"
                guard let s = try? f.send(victim, ip: ip) else { break }
                let code = try f.lastCode()
                while wireError({ try f.signIn(s.sessionInfo, wrong(code), ip: ip) }) == "INVALID_CODE" { guesses += 1 }
            }
            f.clock.advance(seconds: 3600)
        }
        #expect(guesses == f.project.phone.sendsPerNumberPerDay * f.project.phone.maxAttemptsPerSession)
        #expect(guesses <= 50)
    }

    @Test("send again replaces only the code it names: other clients' codes for the number stay valid")
    func resendSupersedesOnlyItsOwn() throws {
        let f = try PhoneFixture()
        let mine = try f.send(victim, app: "web", ip: owner)
        let myCode = try f.lastCode()
        let theirs = try f.send(victim, app: "web", ip: "198.51.100.1")
        f.clock.advance(seconds: 60)
        _ = try f.flow.resend(sessionInfo: theirs.sessionInfo, appToken: try f.appToken(app: "web"), remoteAddress: "198.51.100.1",
                              composeSMS: { $0 })
        guard case .signedIn = try f.signIn(mine.sessionInfo, myCode, ip: owner) else { Issue.record("not signed in"); return }
    }

    @Test("send again counts its limits in the same transaction as the new code")
    func resendAtomic() throws {
        let f = try PhoneFixture { $0.phone.sendsPerNumberPerHour = 2 }
        let s = try f.send(victim, app: "web")
        f.clock.advance(seconds: 60)
        let second = try f.flow.resend(sessionInfo: s.sessionInfo, appToken: try f.appToken(app: "web"), remoteAddress: owner, composeSMS: { $0 })
        f.clock.advance(seconds: 60)
        // Over the limit: refused, and the named code is not replaced either.
        #expect(wireError { try f.flow.resend(sessionInfo: second.sessionInfo, appToken: try f.appToken(app: "web"), remoteAddress: owner,
                                              composeSMS: { $0 }) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        guard case .signedIn = try f.signIn(second.sessionInfo, try f.lastCode()) else { Issue.record("not signed in"); return }
    }

    @Test("per-client send budgets key IPv6 on the /64 and a block (IPv4 /24, IPv6 /48) on 8 × the budget")
    func networkTiers() throws {
        // Destination budgets (SMS pumping) are not what this test is about.
        let f = try PhoneFixture { $0.phone.pumping.holdMinPrefixPerHour = 1000; $0.phone.pumping.smsPerPrefixPerHour = 1000 }
        // 10 sends per client per hour: the addresses of one /64 share them.
        for i in 0..<10 { try f.send("+3361234560\(i)", ip: "2001:db8:5:6::\(i + 1)") }
        #expect(wireError { try f.send("+33612345611", ip: "2001:db8:5:6:ffff::1") } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // One IPv4 /24 gets 80 however many addresses it uses; the next /24 is untouched.
        var sent = 0
        for host in 1...90 {
            if (try? f.send("+33612\(100_000 + host)", ip: "198.51.100.\(host)")) != nil { sent += 1 }
        }
        #expect(sent == 80)
        #expect(try f.send("+33612199999", ip: "198.51.101.1").smsQueued)
    }

    @Test("an app token is bound to the app it was minted for")
    func appTokenBinding() throws {
        let f = try PhoneFixture()
        let forWeb = try f.appToken(app: "web")
        #expect(wireError { try f.send(victim, app: "com.example.app", token: forWeb) }
                == "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - MALFORMED")
        let forApp = try f.appToken(app: "com.example.app")
        #expect(try f.send(victim, app: "com.example.app", token: forApp).smsQueued)
    }
}
