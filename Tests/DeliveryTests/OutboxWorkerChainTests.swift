import AuthEngine
import AuthStore
@testable import Delivery
import Glibc
import Testing
import TestSupport

/// The worker with two providers on a real store: what each attempt records (the provider that
/// took the message, its id there, the provider a doubtful attempt pins it to), the metrics by
/// the providers' configured names, and the sweeps run after each pass.
@Suite("Outbox worker: two providers and sweeps")
struct OutboxWorkerChainTests {
    typealias Scripted = CircuitBreakerTests.Scripted

    struct World {
        let store: SQLStore
        let clock = FixedClock()
        let first = Scripted("twilio"), second = Scripted("backup")
        let telemetry = Telemetry(enabled: true)
        let worker: OutboxWorker

        init() throws {
            // The sender runs on this thread (`deliverDue` is called here).
            nonisolated(unsafe) let store = try SQLStore(path: ":memory:")
            self.store = store
            let chain = ProviderChain(primary: ("twilio", first), secondary: ("backup", second),
                                      breaker: CircuitBreaker(name: "twilio", clock: clock))
            worker = OutboxWorker(makeStore: { store }, senders: [.sms: chain, .voice: chain], clock: clock, telemetry: telemetry)
        }

        func deliveries(_ provider: String, _ result: String, channel: String = "sms") -> Double {
            telemetry.registry?.value(Telemetry.Name.deliveries, [channel, provider, result]) ?? 0
        }

        func row(_ id: Int64) throws -> OutboxMessage? { try store.outboxMessage(id: id) }

        /// Past any backoff.
        func later() { clock.advance(millis: 3_600_000) }
    }

    @Test("a doubtful attempt pins the message to the first; every retry goes there only, the breaker open or not")
    func pinned() throws {
        let w = try World()
        let id = try #require(try w.store.enqueueTexts(1, at: w.clock.now()).first)
        w.first.answer = .uncertain
        #expect(try w.worker.deliverDue(w.store) == 1)
        var m = try #require(try w.row(id))
        #expect(m.status == .pending && m.provider == "twilio" && m.attempts == 1 && m.delivery == nil)
        // Two more fail outright: the breaker opens, and the message still goes to the first only.
        w.first.answer = .down
        for _ in 0..<2 {
            w.later()
            #expect(try w.worker.deliverDue(w.store) == 1)
        }
        #expect(w.second.tried == 0)
        w.first.answer = .ok
        w.later()
        #expect(try w.worker.deliverDue(w.store) == 1)
        m = try #require(try w.row(id))
        #expect(m.status == .sent && m.provider == "twilio" && m.providerMessageID == "id\(id)" && m.delivery == .sent)
        #expect(w.second.tried == 0 && w.first.sent == [id])
        #expect(w.deliveries("twilio", "failed") == 3 && w.deliveries("twilio", "sent") == 1)
    }

    @Test("a 5xx from the first: the second takes it in the same attempt, recorded and counted as the second's")
    func passedOn() throws {
        let w = try World()
        let ids = try w.store.enqueueTexts(4, at: w.clock.now())
        w.first.answer = .down
        #expect(try w.worker.deliverDue(w.store) == 4)
        for id in ids {
            let m = try #require(try w.row(id))
            #expect(m.status == .sent && m.attempts == 0 && m.provider == "backup" && m.providerMessageID == "id\(id)")
        }
        #expect(w.first.tried == 3, "the fourth found the breaker open")
        #expect(w.first.sent.isEmpty && w.second.sent == ids)
        #expect(w.deliveries("backup", "sent") == 4 && w.deliveries("twilio", "failed") == 0)
    }

    @Test("a message pinned to the second goes there only; a bad number is dead at once, counted against the provider that refused it")
    func pinnedToSecond() throws {
        let w = try World()
        let id = try w.store.enqueue(OutboxMessage(projectID: "p", channel: .voice, recipient: "+15550001", body: "1, 2", nextAttemptAt: w.clock.now(),
                                                   createdAt: w.clock.now()))
        guard case let .leased(lease) = try w.store.lease(id: id, now: w.clock.now(), until: w.clock.now() + 1_000, maxAttempts: 8) else {
            Issue.record("not leased")
            return
        }
        #expect(try w.store.markFailed(lease, error: "timed out", nextAttemptAt: w.clock.now(), at: w.clock.now(), pinnedTo: "backup"))
        w.second.answer = .refused
        #expect(try w.worker.deliverDue(w.store) == 1)
        #expect(w.first.tried == 0)
        let m = try #require(try w.row(id))
        #expect(m.status == .dead && m.provider == "backup")
        #expect(w.deliveries("backup", "dead", channel: "voice") == 1)
    }

    @Test("drain runs the sweeps after its passes and delivers what they queue; a failing sweep is logged, the drain goes on")
    func drainSweeps() throws {
        nonisolated(unsafe) let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        let sent = Shared<[Int64]>([])
        let runs = Shared(0)
        let worker = OutboxWorker(makeStore: { store }, senders: [.sms: ScriptedSender { m in sent.update { $0.append(m.id) } }], clock: clock,
                                  sweeps: [
                                      { _ in struct Broken: Error {}; throw Broken() },
                                      { s in
                                          runs.update { $0 += 1 }
                                          // The first run queues one message (a fallback would), later runs nothing.
                                          if runs.value == 1 { try s.enqueueTexts(1, at: clock.now()) }
                                      },
                                  ])
        try store.enqueueTexts(2, at: clock.now())
        #expect(try worker.drain() == 3)
        #expect(sent.value.count == 3)
        #expect(runs.value == 2, "once after the first passes, and once more when that found nothing due")
    }

    @Test("the running worker runs its sweeps after every pass, failing or not")
    func runSweeps() throws {
        let db = TempDatabase()
        defer { db.remove() }
        let failing = Shared(0), fine = Shared(0)
        let worker = OutboxWorker(makeStore: { try db.open() }, senders: [.sms: ScriptedSender { _ in }],
                                  sweeps: [{ _ in failing.update { $0 += 1 }; throw PermanentDeliveryError("sweep broke") },
                                           { _ in fine.update { $0 += 1 } }])
        worker.start(pollMillis: 10)
        #expect(eventually { failing.value >= 3 && fine.value >= 3 })
        #expect(worker.stop())
    }
}
