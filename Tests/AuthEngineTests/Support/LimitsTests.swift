import AuthStore
@testable import AuthEngine
import Testing
import TestSupport

/// The budget rules over a real store: a client's two tiers counted and read together, a
/// destination's rules read together, and amounts that cannot fit refused rather than overflowing.
@Suite("Limits: both tiers at once, a destination's rules at once, no overflow")
struct LimitsTests {
    let store: SQLStore
    let clock = FixedClock()
    var limits: Limits { Limits(store: store, clock: clock) }
    init() throws { store = try makeStore() }

    @Test("a client's block refuses once its wider budget is spent, though each client is within its own")
    func tiers() throws {
        let rule = Limits.Rule("t", max: 2, per: 60)
        // Wide factor 8 by default: the /24 takes 16 events; 8 clients of one block take 2 each.
        for host in 1...8 { for _ in 0..<2 { #expect(try limits.record(rule, client: ClientAddress("198.51.100.\(host)"), scope: "p")) } }
        let ninth = ClientAddress("198.51.100.9")
        #expect(try !limits.allows(rule, client: ninth, scope: "p"), "the block is spent")
        #expect(try !limits.record(rule, client: ninth, scope: "p"))
        // Both counters were counted, the client's and the block's.
        #expect(try limits.count(rule, client: ninth, scope: "p") == 1)
        #expect(try limits.count(Limits.Rule("t.wide", max: 16, per: 60), key: "p|" + ninth.wide) == 17)
        // Another block and another scope are untouched.
        #expect(try limits.allows(rule, client: ClientAddress("203.0.113.1"), scope: "p"))
        #expect(try limits.allows(rule, client: ninth, scope: "q"))
        // A new window starts over.
        clock.advance(seconds: 60)
        #expect(try limits.record(rule, client: ninth, scope: "p"))
    }

    @Test("a destination's budget names the first rule it breaks; the block's reserve lets the owner through")
    func destination() throws {
        let hour = Limits.Rule("d-hour", max: 2, per: 3600), day = Limits.Rule("d-day", max: 3, per: 86400)
        let budget = Limits.DestinationBudget([hour, day], reserve: Limits.Rule("d-reserve", max: 1, per: 86400))
        let stranger = ClientAddress("192.0.2.1"), owner = ClientAddress("203.0.113.7")
        for _ in 0..<2 {
            #expect(try limits.admits(budget, key: "+33612345678", client: stranger) == .budget)
            try limits.count(budget, key: "+33612345678", client: stranger, as: .budget)
        }
        #expect(try limits.admits(budget, key: "+33612345678", client: stranger) == .reserve, "the stranger's block has its own reserve")
        try limits.count(budget, key: "+33612345678", client: stranger, as: .reserve)
        #expect(try limits.admits(budget, key: "+33612345678", client: stranger) == nil)
        #expect(try limits.admits(budget, key: "+33612345678", client: owner) == .reserve)
        #expect(try limits.admits(budget, key: "+33699999999", client: stranger) == .budget)
    }

    @Test("an amount no budget can hold is refused, not an overflow")
    func noOverflow() throws {
        let rule = Limits.Rule("o", max: Int.max, per: 60)
        #expect(try limits.record(rule, key: "k"))
        #expect(try !limits.allows(rule, key: "k", amount: Int.max))
        let client = ClientAddress("198.51.100.1")
        #expect(try limits.allows(rule, client: client, scope: "p", amount: Int.max), "nothing counted yet: it fits exactly")
        #expect(try limits.record(rule, client: client, scope: "p"))
        #expect(try !limits.allows(rule, client: client, scope: "p", amount: Int.max))
    }
}
