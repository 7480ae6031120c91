@testable import AuthEngine
@testable import Delivery
import Testing

/// The first SMS provider's breaker and the chain in front of the two providers.
@Suite("Second provider: circuit breaker and chain")
struct CircuitBreakerTests {
    final class Clock0: Clock, @unchecked Sendable {
        var at: Millis = 1_000_000
        func now() -> Millis { at }
    }

    /// A provider that fails as told and records what it was asked to send.
    final class Scripted: MessageSender, @unchecked Sendable {
        enum Answer { case ok, down, uncertain, refused }
        var answer = Answer.ok
        var sent: [Int64] = []
        var tried = 0
        let name: String
        init(_ name: String) { self.name = name }
        var keepsBody: Bool { false }
        var timeLimit: Millis { 1_000 }
        func send(_ m: OutboxMessage) throws { _ = try deliver(m) }
        func deliver(_ m: OutboxMessage) throws -> ProviderAcceptance? {
            tried += 1
            switch answer {
            case .ok: sent.append(m.id); return ProviderAcceptance(provider: name, messageID: "id\(m.id)")
            case .down: throw DeliveryFailure("\(name): HTTP 503")
            case .uncertain: throw UncertainDelivery(provider: name, underlying: "\(name): timed out")
            case .refused: throw PermanentDeliveryError("\(name): HTTP 400")
            }
        }
    }

    func message(_ id: Int64, pinned: String? = nil) -> OutboxMessage {
        var m = OutboxMessage(id: id, projectID: "p", channel: .sms, recipient: "+33612345678", body: "x", nextAttemptAt: 0, createdAt: 0)
        m.provider = pinned
        return m
    }

    @Test("three failures open it for 30 s; then one probe at a time; a success closes it")
    func breaker() {
        let clock = Clock0()
        let b = CircuitBreaker(name: "twilio", clock: clock)
        for _ in 0..<2 { #expect(b.admits()); b.failed() }
        #expect(b.state == .closed)
        #expect(b.admits()); b.failed()
        #expect(b.state == .open && !b.admits())
        clock.at += 29_999
        #expect(!b.admits())
        clock.at += 1
        #expect(b.admits() && b.state == .halfOpen)
        #expect(!b.admits(), "one probe at a time")
        b.failed()
        #expect(b.state == .open && !b.admits(), "a failed probe opens it again")
        clock.at += 30_000
        #expect(b.admits())
        b.succeeded()
        #expect(b.state == .closed && b.admits() && b.admits())
    }

    @Test("the chain: the second only when the first provably did not take the message; never both")
    func chain() throws {
        let clock = Clock0()
        let first = Scripted("twilio"), second = Scripted("backup")
        let chain = ProviderChain(primary: ("twilio", first), secondary: ("backup", second), breaker: CircuitBreaker(name: "twilio", clock: clock))
        #expect(try chain.deliver(message(1))?.provider == "twilio")
        first.answer = .down
        #expect(try chain.deliver(message(2))?.provider == "backup", "5xx: not taken, the second sends it")
        first.answer = .uncertain
        #expect(throws: UncertainDelivery.self) { try chain.deliver(message(3)) }
        #expect(!second.sent.contains(3), "may have been taken by the first: never the second")
        first.answer = .refused
        #expect(throws: PermanentDeliveryError.self) { try chain.deliver(message(4)) }
        // Pinned messages go to their provider only.
        first.answer = .down
        #expect(throws: DeliveryFailure.self) { try chain.deliver(message(5, pinned: "twilio")) }
        #expect(!second.sent.contains(5))
        #expect(try chain.deliver(message(6, pinned: "backup"))?.provider == "backup")
        // Open now (3 failures in a row): the first is not even tried.
        let before = first.tried
        #expect(try chain.deliver(message(7))?.provider == "backup")
        #expect(first.tried == before)
        #expect(Set(first.sent).isDisjoint(with: second.sent))
    }
}
