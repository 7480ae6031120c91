import AuthEngine
import AuthStore
@testable import Delivery
import Glibc
import Testing
import TestSupport

/// The worker against a real SQLite file shared by several workers, as several instances share it.
@Suite("Outbox worker: leases")
struct OutboxWorkerTests {
    @Test("two workers on one database with a slow sender never send a message twice")
    func twoWorkersSlowSender() throws {
        let db = TempDatabase()
        defer { db.remove() }
        let clock = FixedClock()
        let ids = try db.open().enqueueTexts(6, at: clock.now())
        let log = SendLog()
        // The senders run on this thread (`deliverDue` is called here): B's store is only used here.
        let storeA = try db.open()
        nonisolated(unsafe) let storeB = try db.open()
        let b = OutboxWorker(makeStore: { storeB }, senders: [.sms: ScriptedSender { log.record("B", $0.id) }], clock: clock)
        // Each of A's sends takes its sender's whole time limit; B runs during A's third send.
        let a = OutboxWorker(makeStore: { storeA }, senders: [.sms: ScriptedSender(timeLimit: 20_000) { m in
            log.record("A", m.id)
            clock.advance(millis: 20_000)
            if log.count("A") == 3 { while try b.deliverDue(storeB) > 0 {} }
        }], clock: clock)
        while try a.deliverDue(storeA) > 0 {}
        while try b.deliverDue(storeB) > 0 {}

        #expect(log.ids.sorted() == ids)
        #expect(log.count("B") == 3)
        #expect(try storeA.all().allSatisfy { $0.status == .sent && $0.attempts == 0 })
    }

    @Test("the outcome of a worker whose lease was taken over does not overwrite the new holder's")
    func lateOutcomeIsDropped() throws {
        let db = TempDatabase()
        defer { db.remove() }
        let clock = FixedClock()
        try db.open().enqueueTexts(1, at: clock.now())
        // The senders run on this thread (`deliverDue` is called here): B's store is only used here.
        let storeA = try db.open()
        nonisolated(unsafe) let storeB = try db.open()
        let b = OutboxWorker(makeStore: { storeB }, senders: [.sms: ScriptedSender { _ in throw PermanentDeliveryError("HTTP 400 bad number") }],
                             clock: clock)
        // A's send stalls past any lease (a stopped process, a clock jump): B takes the message over.
        let a = OutboxWorker(makeStore: { storeA }, senders: [.sms: ScriptedSender { _ in
            clock.advance(millis: 600_000)
            let taken = try b.deliverDue(storeB)
            #expect(taken == 1)
        }], clock: clock)
        #expect(try a.deliverDue(storeA) == 1)

        let m = try #require(try storeA.all().first)
        // A's attempt, whose lease B took over, counts too.
        #expect(m.status == .dead && m.attempts == 2 && m.sentAt == nil)
        #expect(m.lastError == "HTTP 400 bad number")
    }

    @Test("a message whose send ends the process every time is dead after maxAttempts leases, not sent forever")
    func lostLeasesCount() throws {
        let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        let id = try #require(try store.enqueueTexts(1, at: clock.now()).first)
        let sends = Shared(0)
        let worker = OutboxWorker(makeStore: { store }, senders: [.sms: ScriptedSender { _ in sends.update { $0 += 1 } }], clock: clock,
                                  maxAttempts: 3)
        // Three processes lease it and die during the send: nothing recorded, each lease expires.
        for attempt in 0..<3 {
            let leasing = try store.lease(id: id, now: clock.now(), until: clock.now() + worker.leaseMillis, maxAttempts: worker.maxAttempts)
            guard case let .leased(lease) = leasing else { Issue.record("attempt \(attempt + 1): \(leasing)"); return }
            #expect(lease.message.attempts == attempt)
            clock.advance(millis: worker.leaseMillis)
        }
        // The next worker finds its attempts used up: dead, never handed to the sender again.
        #expect(try worker.deliverDue(store) == 1)
        #expect(sends.value == 0)
        let m = try #require(try store.all().first)
        #expect(m.status == .dead && m.attempts == 3 && m.body.isEmpty && m.lastError == OutboxLeasing.lostAttemptError)
        #expect(try worker.deliverDue(store) == 0)
    }

    @Test("a message is leased only when its turn comes, for longer than the slowest sender's time limit")
    func leaseCoversTheTimeLimit() throws {
        // Its sender runs on this thread (`deliverDue` is called here).
        nonisolated(unsafe) let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        try store.enqueueTexts(3, at: clock.now())
        let during = Shared<[(status: String, leaseUntil: Millis?)]>([])
        let worker = OutboxWorker(makeStore: { store }, senders: [
            .sms: ScriptedSender(timeLimit: 10_000) { m in
                let rows = try store.db.rows("SELECT status, lease_until FROM outbox ORDER BY id") { ($0.text(0), $0.intOrNil(1)) }
                during.update { if $0.isEmpty { $0 = rows.map { (status: $0.0, leaseUntil: $0.1) } } }
            },
            .email: ScriptedSender(timeLimit: 120_000) { _ in },
        ], clock: clock)
        #expect(worker.leaseMillis == 120_000 + OutboxWorker.leaseMargin)
        #expect(try worker.deliverDue(store) == 3)
        #expect(during.value.map(\.status) == ["sending", "pending", "pending"])
        #expect(during.value.first?.leaseUntil == clock.now() + 120_000 + OutboxWorker.leaseMargin)
    }

    @Test("stop() returns after the message in hand and leaves the backlog queued")
    func stopAfterMessageInHand() throws {
        let db = TempDatabase()
        defer { db.remove() }
        try db.open().enqueueTexts(8, at: realNow() - 1_000)
        let log = SendLog()
        let worker = OutboxWorker(makeStore: { try db.open() }, senders: [.sms: ScriptedSender { m in
            log.record("A", m.id)
            usleep(300_000)
        }])
        worker.start(pollMillis: 20)
        #expect(eventually { log.count("A") == 1 })
        let asked = realNow()
        #expect(worker.stop())
        let took = realNow() - asked
        #expect(took < 1_000, "stop took \(took) ms")
        #expect(log.count("A") == 1)
        let rows = try db.open().all()
        #expect(rows.filter { $0.status == .sent }.count == 1)
        #expect(rows.filter { $0.status == .pending && $0.attempts == 0 }.count == 7)
    }
}
