import Testing
@testable import AuthEngine

@Suite("Phone sign-in: SMS pumping protection (budgets per destination, automatic holds)")
struct SMSPumpingTests {
    /// A production-mode project whose per-number and per-address limits stay out of the way
    /// (every send below goes to a new number), with `pumping` adjusted.
    func fixture(_ adjust: (inout SMSPumpingPolicy) -> Void = { _ in }) throws -> PhoneFixture {
        try PhoneFixture { p in
            p.phone.sendsPerIPPerHour = 10000
            adjust(&p.phone.pumping)
        }
    }

    /// The `i`-th number of the 10,000-number block `block` (`+3712012` → `+37120120007`).
    func number(_ block: String, _ i: Int) -> String {
        let digits = String(i)
        return block + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The `b`-th Latvian mobile block (`+3712` and three digits).
    func lvBlock(_ b: Int) -> String { "+3712" + String(number("", b).suffix(3)) }

    let lv = "+3712012", lvOther = "+3712013", fr = "+3361234", de = "+491512345"

    func holds(_ f: PhoneFixture) throws -> [String] {
        try SMSPumpingGuard.activeHolds(store: f.store, project: f.project.id, at: f.clock.now()).map { $0.kind.rawValue + " " + $0.key }
    }

    @Test("the prefix is the number without its last digits, never shorter than the calling code and one digit")
    func prefixes() {
        #expect(SMSPumpingGuard.prefix(of: "+33612345678", region: "FR", dropping: 4) == "+3361234")
        #expect(SMSPumpingGuard.prefix(of: "+33612345678", region: "FR", dropping: 6) == "+33612")
        #expect(SMSPumpingGuard.prefix(of: "+6834002", region: "NU", dropping: 4) == "+6834")
        #expect(SMSPumpingGuard.prefix(of: "+14155550123", region: "US", dropping: 4) == "+1415555")
    }

    @Test("the project's daily budget: a rolling 24 hours, then TOO_MANY_ATTEMPTS_TRY_LATER")
    func dailyBudget() throws {
        let f = try fixture { $0.smsPerProjectPerDay = 5 }
        for i in 0..<3 { try f.send(number(fr, i)) }
        f.clock.advance(seconds: 12 * 3600)
        for i in 0..<2 { try f.send(number(de, i)) }
        #expect(wireError { try f.send(number(fr, 9)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.smsMessages().count == 5)
        // The first three leave the window 24 hours after they were sent.
        f.clock.advance(seconds: 12 * 3600)
        for i in 10..<13 { #expect(try f.send(number(fr, i)).smsQueued) }
        #expect(wireError { try f.send(number(fr, 20)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
    }

    @Test("a region gets at most sms_per_region_per_hour SMS in any hour; other regions are not affected")
    func regionVelocity() throws {
        let f = try fixture { $0.smsPerRegionPerHour = 4; $0.holdMinRegionPerHour = 1000; $0.holdMinPrefixPerHour = 1000 }
        for i in 0..<4 { try f.send(number("+336123\(i)", i)) }
        #expect(wireError { try f.send(number(fr, 50)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.send(number(de, 1)).smsQueued)
        f.clock.advance(seconds: 3600)
        #expect(try f.send(number(fr, 51)).smsQueued)
        #expect(try holds(f).isEmpty)
    }

    @Test("a prefix gets at most sms_per_prefix_per_hour SMS in any hour; the next block is not affected")
    func prefixVelocity() throws {
        let f = try fixture { $0.smsPerPrefixPerHour = 3; $0.holdMinRegionPerHour = 1000; $0.holdMinPrefixPerHour = 1000 }
        for i in 0..<3 { try f.send(number(fr, i)) }
        #expect(wireError { try f.send(number(fr, 3)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.send(number("+3361235", 3)).smsQueued)
        // A rolling hour: 30 minutes later the three are still in it; an hour after them, not.
        f.clock.advance(seconds: 1800)
        #expect(wireError { try f.send(number(fr, 4)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        f.clock.advance(seconds: 1800)
        #expect(try f.send(number(fr, 5)).smsQueued)
    }

    @Test("a refused send counts nothing: neither the other destination budgets nor the per-address limit")
    func refusalDoesNotCount() throws {
        let f = try PhoneFixture { p in
            p.phone.sendsPerIPPerHour = 3
            p.phone.pumping.smsPerPrefixPerHour = 1
            p.phone.pumping.smsPerRegionPerHour = 3
            p.phone.pumping.holdMinPrefixPerHour = 1000
            p.phone.pumping.holdMinRegionPerHour = 1000
        }
        let ip = "198.51.100.4"
        try f.send(number(fr, 1), ip: ip)
        for i in 2..<6 { #expect(wireError { try f.send(number(fr, i), ip: ip) } == "TOO_MANY_ATTEMPTS_TRY_LATER") }
        // Two more from the same address to other French blocks: the address's 3 and the region's 3.
        #expect(try f.send(number("+3361235", 1), ip: ip).smsQueued)
        #expect(try f.send(number("+3361236", 1), ip: ip).smsQueued)
        #expect(try f.smsMessages().count == 3)
        #expect(try f.store.counterSum(bucket: "sms-project:" + f.project.id, from: 0, to: Millis.max) == 3)
    }

    @Test("a quiet prefix's first sends are not held; the send that reaches the minimum with a jump holds it")
    func holdOnJump() throws {
        let f = try fixture()
        for i in 0..<19 { try f.send(number(lv, i)) }
        #expect(try holds(f).isEmpty, "fewer than sms_hold_min_prefix_per_hour (20) SMS never hold a prefix")
        #expect(try f.send(number(lv, 19)).smsQueued, "the send that crosses the line still goes out")
        #expect(try holds(f) == ["prefix +3712012"])
        #expect(wireError { try f.send(number(lv, 20)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // The hold is per prefix: the next block of the same country and other countries still get SMS.
        #expect(try f.send(number(lvOther, 1)).smsQueued)
        #expect(try f.send(number(fr, 1)).smsQueued)
        #expect(try f.send(number(de, 1)).smsQueued)
        #expect(try f.smsMessages().count == 23)
        let hold = try f.store.smsHold(project: f.project.id, kind: .prefix, key: lv)
        #expect(hold?.recentCount == 20 && hold?.baselineCount == 0 && hold?.expiresAt == nil)
        // It stays until released.
        f.clock.advance(seconds: 7 * 86400)
        #expect(wireError { try f.send(number(lv, 21)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
    }

    @Test("traffic at its usual rate is not held, even above the minimum; ten times the usual rate is")
    func steadyTrafficNotHeld() throws {
        let f = try fixture { $0.holdMinPrefixPerHour = 5; $0.smsPerPrefixPerHour = 100 }
        var i = 0
        func send(_ count: Int, every seconds: Int64) throws {
            for _ in 0..<count { #expect(try f.send(number(fr, i)).smsQueued); i += 1; f.clock.advance(seconds: seconds) }
        }
        // A day at 4 an hour (below the minimum), then an hour at three times that.
        try send(24 * 4, every: 900)
        try send(12, every: 300)
        #expect(try holds(f).isEmpty)
        // Then one a minute: held once the last hour has more than 10 × the mean hour of the day before.
        var sent = 0
        while try holds(f).isEmpty, sent < 60 { try send(1, every: 60); sent += 1 }
        #expect(try holds(f) == ["prefix +3361234"])
        let hold = try f.store.smsHold(project: f.project.id, kind: .prefix, key: fr)
        #expect(sent > 30 && (hold?.recentCount ?? 0) * 24 > 10 * (hold?.baselineCount ?? 0), "\(sent) \(String(describing: hold))")
    }

    @Test("a region whose rate jumps is held as a whole; other regions are not")
    func regionHold() throws {
        let f = try fixture()
        // Numbers spread over 100 blocks: no prefix reaches its minimum, the region does.
        for b in 0..<100 { try f.send(number(lvBlock(b), b)) }
        #expect(try holds(f) == ["region LV"])
        #expect(wireError { try f.send(number(lvBlock(500), 1)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.send(number(fr, 1)).smsQueued)
        #expect(try f.smsMessages().count == 101)
    }

    @Test("release: the destination gets SMS again and is not held again automatically for a day")
    func release() throws {
        let f = try fixture()
        for i in 0..<20 { try f.send(number(lv, i)) }
        #expect(try holds(f) == ["prefix +3712012"])
        #expect(try !SMSPumpingGuard.release("+3712099", project: f.project.id, store: f.store, at: f.clock.now()))
        #expect(try !SMSPumpingGuard.release("+3712012", project: "other-project", store: f.store, at: f.clock.now()))
        #expect(try SMSPumpingGuard.release("+3712012", project: f.project.id, store: f.store, at: f.clock.now()))
        #expect(try holds(f).isEmpty)
        for i in 20..<40 { #expect(try f.send(number(lv, i)).smsQueued) }
        #expect(try holds(f).isEmpty)
        // The budget still applies (50 an hour by default).
        for i in 40..<50 { try f.send(number(lv, i)) }
        #expect(wireError { try f.send(number(lv, 50)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try holds(f).isEmpty)
        // A day later a new jump holds it again (the 50 are in its baseline: it takes more than 20.8 an hour).
        f.clock.advance(seconds: 86400)
        for i in 51..<71 { try f.send(number(lv, i)) }
        #expect(try holds(f).isEmpty)
        try f.send(number(lv, 71))
        #expect(try holds(f) == ["prefix +3712012"])
        // Regions are released by their code, in any case.
        let g = try fixture()
        for b in 0..<100 { try g.send(number(lvBlock(b), b)) }
        #expect(try SMSPumpingGuard.release("lv", project: g.project.id, store: g.store, at: g.clock.now()))
        #expect(try g.send(number(lvBlock(500), 1)).smsQueued)
    }

    @Test("a hold with sms_hold_hours expires by itself")
    func holdExpiry() throws {
        let f = try fixture { $0.holdHours = 2 }
        for i in 0..<20 { try f.send(number(lv, i)) }
        #expect(try f.store.smsHold(project: f.project.id, kind: .prefix, key: lv)?.expiresAt == f.clock.now() + 2 * 3_600_000)
        f.clock.advance(seconds: 3600)
        #expect(wireError { try f.send(number(lv, 20)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        f.clock.advance(seconds: 3600)
        #expect(try f.send(number(lv, 21)).smsQueued)
        #expect(try holds(f).isEmpty)
    }

    @Test("test numbers and dev mode are exempt and count nothing")
    func testNumbersAndDevExempt() throws {
        let f = try fixture { $0.smsPerProjectPerDay = 1 }
        for _ in 0..<5 { #expect(try f.send(PhoneFixture.testNumber).isTest); f.clock.advance(seconds: 301) }
        #expect(try f.send(number(fr, 1)).smsQueued)
        #expect(wireError { try f.send(number(fr, 2)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.send(PhoneFixture.testNumber).isTest, "the spent budget does not stop test numbers")
        let d = try PhoneFixture(dev: true) { $0.phone.pumping.smsPerProjectPerDay = 1 }
        for i in 0..<12 { #expect(try d.send(number(lv, i)).smsQueued) }
        #expect(try d.store.counterSum(bucket: "sms-project:" + d.project.id, from: 0, to: Millis.max) == 0)
        #expect(try SMSPumpingGuard.activeHolds(store: d.store, project: nil, at: d.clock.now()).isEmpty)
    }

    @Test("the hosted page's send again is guarded too")
    func resendGuarded() throws {
        let f = try fixture { $0.smsPerPrefixPerHour = 1; $0.holdMinPrefixPerHour = 1 }
        let s = try f.send(number(fr, 1))
        f.clock.advance(seconds: 61)
        #expect(wireError { try f.flow.resend(sessionInfo: s.sessionInfo, appToken: try f.appToken(), apiKey: "key-1",
                                               remoteAddress: "203.0.113.7", composeSMS: { $0 }) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.smsMessages().count == 1)
    }
}
