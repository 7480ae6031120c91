import AuthEngine
import AuthStore
import Foundation
import Testing
import Locking

/// The contract of what providers report (`DeliveryStore`) on every backend: acceptance recorded
/// with the send, receipts forward only, the fallback time a receipt cancels or brings forward,
/// a pinned provider, the counts by channel, provider, region and state; and the races that
/// matter on READ COMMITTED: terminal receipts for one message at once, and workers claiming one
/// fallback at once.
@Suite("Store contract: delivery receipts and fallbacks (SQLite and PostgreSQL)")
struct StoreContractDelivery {
    /// A phone code's message, queued at 1 000, its fallback planned at `fallbackAt`, accepted by
    /// `provider` (unless nil).
    func accepted(_ s: any ContractStore, project: String = "p", region: String = "FR", fallbackAt: Millis? = 31_000,
                  provider: String? = "twilio") throws -> Int64 {
        let id = try s.enqueue(OutboxMessage(projectID: project, channel: .sms, recipient: "+33612345678", body: "code", nextAttemptAt: 1_000,
                                             createdAt: 1_000, region: region, language: "fr", fallbackAt: fallbackAt, sessionHash: [1, 2, 3]))
        if let provider {
            let lease = try #require(try s.lease(id: id, now: 1_000, until: 60_000))
            #expect(try s.markSent(lease, at: 1_500, keepBody: false, accepted: ProviderAcceptance(provider: provider, messageID: "SM\(id)")))
        }
        return id
    }

    @Test("acceptance and receipts: recorded with the send, forward only, the provider's first 'sent' taken once",
          arguments: Backend.available)
    func forwardOnly(backend: Backend) throws {
        try with(backend) { _, s in
            let id = try accepted(s)
            var m = try #require(try s.outboxMessage(id: id))
            #expect(m.provider == "twilio" && m.providerMessageID == "SM\(id)" && m.delivery == .sent && m.deliveryAt == nil)
            #expect(m.region == "FR" && m.language == "fr" && m.sessionHash == [1, 2, 3] && m.fallbackAt == 31_000)
            #expect(try s.recordReceipt(id: id, state: .sent, error: nil, at: 2_000), "the provider's own first report")
            #expect(try !s.recordReceipt(id: id, state: .sent, error: nil, at: 2_100), "a second one is a replay")
            #expect(try !s.recordReceipt(id: id, state: .queued, error: nil, at: 2_200), "never backwards")
            #expect(try s.recordReceipt(id: id, state: .delivered, error: nil, at: 3_000))
            for state in [DeliveryState.delivered, .undelivered, .failed, .sent] {
                #expect(try !s.recordReceipt(id: id, state: state, error: "30003", at: 4_000), "past an end: \(state)")
            }
            m = try #require(try s.outboxMessage(id: id))
            #expect(m.delivery == .delivered && m.deliveryAt == 3_000 && m.deliveryError == nil && m.fallbackAt == nil,
                    "a delivered receipt cancels the fallback")
            // A message no provider accepted takes no receipt.
            let pending = try accepted(s, provider: nil)
            #expect(try !s.recordReceipt(id: pending, state: .delivered, error: nil, at: 5_000))
            #expect(try !s.recordReceipt(id: 999_999, state: .delivered, error: nil, at: 5_000))
        }
    }

    @Test("an undelivered or failed receipt, or the message dying, brings the fallback forward; none planned stays none",
          arguments: Backend.available)
    func fallbackTimes(backend: Backend) throws {
        try with(backend) { _, s in
            let a = try accepted(s)
            #expect(try s.recordReceipt(id: a, state: .undelivered, error: "30003", at: 2_000))
            var m = try #require(try s.outboxMessage(id: a))
            #expect(m.fallbackAt == 2_000 && m.deliveryError == "30003" && m.delivery == .undelivered)
            let none = try accepted(s, fallbackAt: nil)
            #expect(try s.recordReceipt(id: none, state: .failed, error: "30008", at: 2_000))
            #expect(try s.outboxMessage(id: none)?.fallbackAt == nil)
            // Dying unsent: pinned to the provider the last attempt may have reached.
            let dying = try accepted(s, provider: nil)
            let lease = try #require(try s.lease(id: dying, now: 1_000, until: 60_000))
            #expect(try s.markFailed(lease, error: "timed out", nextAttemptAt: nil, at: 7_000, pinnedTo: "twilio"))
            m = try #require(try s.outboxMessage(id: dying))
            #expect(m.status == .dead && m.fallbackAt == 7_000 && m.provider == "twilio" && m.delivery == nil)
            #expect(try s.dueFallbacks(now: 7_000, limit: 10) == [a, dying])
            #expect(try s.dueFallbacks(now: 1_999, limit: 10).isEmpty)
            #expect(try s.claimFallback(id: a, now: 7_000)?.id == a)
            #expect(try s.claimFallback(id: a, now: 7_000) == nil, "claimed once")
            #expect(try s.dueFallbacks(now: 7_000, limit: 10) == [dying])
        }
    }

    @Test("a retried send keeps the provider it was pinned to", arguments: Backend.available)
    func pinned(backend: Backend) throws {
        try with(backend) { _, s in
            let id = try accepted(s, provider: nil)
            let lease = try #require(try s.lease(id: id, now: 1_000, until: 60_000))
            #expect(try s.markFailed(lease, error: "timed out", nextAttemptAt: 2_000, at: 1_500, pinnedTo: "twilio"))
            let again = try #require(try s.lease(id: id, now: 2_000, until: 60_000))
            #expect(again.message.provider == "twilio")
            #expect(try s.markFailed(again, error: "HTTP 503", nextAttemptAt: 3_000, at: 2_500, pinnedTo: nil))
            #expect(try s.outboxMessage(id: id)?.provider == "twilio", "a failure that says nothing keeps the pin")
        }
    }

    @Test("counts by channel, provider, region and state, of one project, since a time", arguments: Backend.available)
    func counts(backend: Backend) throws {
        try with(backend) { _, s in
            let a = try accepted(s)
            let b = try accepted(s, region: "DE")
            _ = try accepted(s, region: "DE")
            _ = try accepted(s, provider: nil)
            _ = try accepted(s, project: "q")
            #expect(try s.recordReceipt(id: a, state: .delivered, error: nil, at: 2_000))
            #expect(try s.recordReceipt(id: b, state: .failed, error: "30008", at: 2_000))
            let counts = try s.deliveryCounts(project: "p", since: 0)
            #expect(counts == [
                DeliveryCount(channel: .sms, provider: "", region: "FR", state: .queued, count: 1),
                DeliveryCount(channel: .sms, provider: "twilio", region: "DE", state: .failed, count: 1),
                DeliveryCount(channel: .sms, provider: "twilio", region: "DE", state: .sent, count: 1),
                DeliveryCount(channel: .sms, provider: "twilio", region: "FR", state: .delivered, count: 1),
            ])
            #expect(try s.deliveryCounts(project: "p", since: 1_001).isEmpty)
        }
    }

    @Test("race: 8 connections report different ends of one message at once: exactly one wins, the row holds its state",
          arguments: Backend.available)
    func receiptRace(backend: Backend) throws {
        try with(backend) { db, s in
            for round in 0..<5 {
                let id = try accepted(s)
                let states: [DeliveryState] = [.delivered, .undelivered, .failed, .delivered, .failed, .undelivered, .delivered, .failed]
                let turn = Locked(0)
                let won = try db.race(threads: 8) { store -> DeliveryState? in
                    let state = states[turn.withLock { t -> Int in defer { t += 1 }; return t }]
                    return try store.recordReceipt(id: id, state: state, error: "e", at: 2_000) ? state : nil
                }.compactMap { $0 }
                #expect(won.count == 1, "round \(round)")
                #expect(try s.outboxMessage(id: id)?.delivery == won.first)
            }
        }
    }

    @Test("race: 8 workers claim one due fallback: exactly one takes it", arguments: Backend.available)
    func claimRace(backend: Backend) throws {
        try with(backend) { db, s in
            for round in 0..<5 {
                let id = try accepted(s)
                let taken = try db.race(threads: 8) { store in try store.claimFallback(id: id, now: 40_000) != nil }
                #expect(taken.filter { $0 }.count == 1, "round \(round)")
            }
        }
    }
}
