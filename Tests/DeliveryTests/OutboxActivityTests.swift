import AuthEngine
import AuthStore
@testable import Delivery
import Testing
import TestSupport

/// The console's count of SMS and emails sent: written by the worker with the send's record,
/// per project and channel; never for a failure, a push, or an outcome another worker's lease
/// overrode.
@Suite("Outbox worker: the console's sent counts")
struct OutboxActivityTests {
    @Test("a recorded send counts once per project and channel; a failure, a push and a lost lease count nothing")
    func sentCounts() throws {
        let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        let now = clock.now()
        for (project, channel) in [("p", OutboxMessage.Channel.sms), ("p", .sms), ("p", .email), ("q", .email), ("p", .push)] {
            _ = try store.enqueue(OutboxMessage(projectID: project, channel: channel, recipient: "r", body: "b", nextAttemptAt: now, createdAt: now))
        }
        let failing = try store.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "fail", body: "b", nextAttemptAt: now, createdAt: now))
        let sender = ScriptedSender { m in if m.recipient == "fail" { throw PermanentDeliveryError("refused") } }
        let worker = OutboxWorker(makeStore: { store }, senders: [.sms: sender, .email: sender, .push: sender], clock: clock)
        #expect(try worker.deliverDue(store) == 6)
        func count(_ bucket: String) throws -> Int {
            try store.counter(bucket: ActivityCounters.bucket(bucket.hasPrefix("q") ? "q" : "p", String(bucket.dropFirst(2))),
                              windowStart: now / ActivityCounters.hour * ActivityCounters.hour)
        }
        #expect(try count("p:sent:sms") == 2 && count("p:sent:email") == 1 && count("q:sent:email") == 1)
        #expect(try count("p:sent:push") == 0)
        #expect(try store.all().first { $0.id == failing }?.status == .dead)
        // A lease taken over: the first worker's outcome is not recorded, nor counted.
        let late = try store.enqueue(OutboxMessage(projectID: "p", channel: .email, recipient: "r", body: "b", nextAttemptAt: now, createdAt: now))
        guard case let .leased(first) = try store.lease(id: late, now: now, until: now + 1, maxAttempts: 8) else { Issue.record("not leased"); return }
        guard case .leased = try store.lease(id: late, now: now + 2, until: now + 100_000, maxAttempts: 8) else { Issue.record("not taken over"); return }
        #expect(try !worker.markSent(first, store, keepBody: false))
        #expect(try count("p:sent:email") == 1)
    }
}
