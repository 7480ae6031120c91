import AuthEngine
import AuthStore
import Testing

/// Counters several at a time (`LimitStore.incrementCounters`, `counters`), the way a client's two
/// tiers are counted, on every backend: the totals come back in the order asked, whatever order
/// the database returns rows in; a counter named twice in one call is counted twice; an absent
/// counter reads 0; and under contention every increment is counted exactly once.
@Suite("Store contract: counters several at a time (SQLite and PostgreSQL)")
struct StoreContractCounters {
    static func inc(_ bucket: String, _ window: Millis, _ amount: Int = 1) -> CounterIncrement {
        CounterIncrement(CounterKey(bucket: bucket, windowStart: window), amount: amount, expiresAt: window + 10)
    }

    @Test("new and existing counters at once: totals in the order asked; reads in order, 0 for none", arguments: Backend.available)
    func inOrder(backend: Backend) throws {
        try with(backend) { _, s throws in
            #expect(try s.incrementCounter(bucket: "m", windowStart: 0, amount: 4, expiresAt: 10) == 4)
            // "z" sorts after "m" and "a" before it: the answer follows the call, not the index.
            #expect(try s.incrementCounters([Self.inc("z", 0, 2), Self.inc("m", 0, 3), Self.inc("a", 0)]) == [2, 7, 1])
            #expect(try s.incrementCounters([Self.inc("m", 0), Self.inc("m", 10, 5)]) == [8, 5])
            #expect(try s.counters([CounterKey(bucket: "m", windowStart: 10), CounterKey(bucket: "none", windowStart: 0),
                                    CounterKey(bucket: "z", windowStart: 0), CounterKey(bucket: "m", windowStart: 0)]) == [5, 0, 2, 8])
            #expect(try s.counters([]) == [] && s.incrementCounters([]) == [])
            #expect(try s.counters([CounterKey(bucket: "a", windowStart: 0)]) == [1])
            // A bucket's text is a value, never SQL.
            let odd = "x'), ('y\u{7f}"
            #expect(try s.incrementCounters([Self.inc(odd, 0), Self.inc("b", 0)]) == [1, 1])
            #expect(try s.counter(bucket: odd, windowStart: 0) == 1)
        }
    }

    @Test("one counter twice in a call is counted twice, the totals as one after the other", arguments: Backend.available)
    func repeated(backend: Backend) throws {
        try with(backend) { _, s throws in
            #expect(try s.incrementCounters([Self.inc("r", 0, 2), Self.inc("q", 0), Self.inc("r", 0, 3)]) == [2, 1, 5])
            #expect(try s.counter(bucket: "r", windowStart: 0) == 5)
        }
    }

    @Test("8 connections counting the same two counters together, 25 times each: 200 on both", arguments: Backend.available)
    func contention(backend: Backend) throws {
        try with(backend) { db, s throws in
            let totals = try db.race(threads: 8) { s -> [[Int]] in
                try (0..<25).map { _ in try s.incrementCounters([Self.inc("narrow", 0), Self.inc("wide", 0)]) }
            }
            #expect(try s.counters([CounterKey(bucket: "narrow", windowStart: 0), CounterKey(bucket: "wide", windowStart: 0)]) == [200, 200])
            // Every total from 1 to 200 was handed out once per counter: no increment was lost or
            // counted twice between connections.
            for tier in 0..<2 { #expect(totals.flatMap { $0 }.map { $0[tier] }.sorted() == Array(1...200)) }
        }
    }
}
