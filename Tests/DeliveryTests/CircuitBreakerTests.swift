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
        var channels: Set<OutboxMessage.Channel> = [.sms, .whatsapp, .voice]
        init(_ name: String) { self.name = name }
        var keepsBody: Bool { false }
        var timeLimit: Millis { 1_000 }
        var provider: String { name }
        func carries(_ channel: OutboxMessage.Channel) -> Bool { channels.contains(channel) }
        func send(_ m: OutboxMessage) throws { _ = try deliver(m) }
        func deliver(_ m: OutboxMessage) throws -> ProviderAcceptance? {
            tried += 1
            switch answer {
            case .ok: sent.append(m.id); return ProviderAcceptance(provider: name, messageID: "id\(m.id)")
            case .down: throw DeliveryFailure("\(name): HTTP 503", provider: name)
            case .uncertain: throw UncertainDelivery(provider: name, underlying: "\(name): timed out")
            case .refused: throw PermanentDeliveryError("\(name): HTTP 400", provider: name)
            }
        }
    }

    func message(_ id: Int64, pinned: String? = nil, channel: OutboxMessage.Channel = .sms) -> OutboxMessage {
        var m = OutboxMessage(id: id, projectID: "p", channel: channel, recipient: "+33612345678", body: "x", nextAttemptAt: 0, createdAt: 0)
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
        first.answer = .refused
        #expect(throws: PermanentDeliveryError.self) { try chain.deliver(message(4)) }
        first.answer = .down
        #expect(try chain.deliver(message(2))?.provider == "backup", "5xx: not taken, the second sends it")
        first.answer = .uncertain
        #expect(throws: UncertainDelivery.self) { try chain.deliver(message(3)) }
        #expect(!second.sent.contains(3), "may have been taken by the first: never the second")
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

    @Test("a channel only one provider carries goes to it, whatever the breaker says")
    func channels() throws {
        let clock = Clock0()
        let first = Scripted("twilio"), second = Scripted("backup")
        second.channels = [.sms, .whatsapp]
        let chain = ProviderChain(primary: ("twilio", first), secondary: ("backup", second), breaker: CircuitBreaker(name: "twilio", clock: clock))
        #expect(chain.carries(.voice))
        first.answer = .down
        for id: Int64 in 1...3 { #expect(try chain.deliver(message(id))?.provider == "backup") }
        #expect(chain.breaker.state == .open)
        // Calls: only the first has a number; tried although the breaker is open, never passed on.
        #expect(throws: DeliveryFailure.self) { try chain.deliver(message(4, channel: .voice)) }
        #expect(!second.sent.contains(4))
        first.answer = .ok
        #expect(try chain.deliver(message(5, channel: .voice))?.provider == "twilio")
        #expect(chain.breaker.state == .closed, "its success counts")
        // WhatsApp only at the second: it goes there with the first up.
        first.channels = [.sms, .voice]
        second.channels = [.sms, .whatsapp]
        let before = first.tried
        #expect(try chain.deliver(message(6, channel: .whatsapp))?.provider == "backup")
        #expect(first.tried == before)
    }

    @Test("a refusal is an answer: it ends a half-open probe and closes the breaker")
    func refusalEndsProbe() throws {
        let clock = Clock0()
        let first = Scripted("twilio"), second = Scripted("backup")
        let chain = ProviderChain(primary: ("twilio", first), secondary: ("backup", second), breaker: CircuitBreaker(name: "twilio", clock: clock))
        first.answer = .down
        for id: Int64 in 1...3 { _ = try chain.deliver(message(id)) }
        clock.at += CircuitBreaker.openMillis
        first.answer = .refused
        #expect(throws: PermanentDeliveryError.self) { try chain.deliver(message(4)) }
        #expect(!second.sent.contains(4), "a bad number is not sent elsewhere")
        #expect(chain.breaker.state == .closed)
        first.answer = .ok
        #expect(try chain.deliver(message(5))?.provider == "twilio")
    }

    @Test("an uncertain send counts against the first and stays with it; once open, new messages go to the second and the pinned one still to the first")
    func uncertainCounts() throws {
        let clock = Clock0()
        let first = Scripted("twilio"), second = Scripted("backup")
        let chain = ProviderChain(primary: ("twilio", first), secondary: ("backup", second), breaker: CircuitBreaker(name: "twilio", clock: clock))
        first.answer = .uncertain
        for id: Int64 in 1...3 {
            #expect { try chain.deliver(message(id)) } throws: { ($0 as? UncertainDelivery)?.provider == "twilio" }
        }
        #expect(chain.breaker.state == .open && second.sent.isEmpty)
        #expect(try chain.deliver(message(4))?.provider == "backup")
        let before = first.tried
        first.answer = .ok
        #expect(try chain.deliver(message(1, pinned: "twilio"))?.provider == "twilio")
        #expect(first.tried == before + 1 && !second.sent.contains(1))
    }

    @Test("the breaker's state is a gauge per provider: 0 closed, 1 open, 2 half-open")
    func gauge() {
        let clock = Clock0()
        let telemetry = Telemetry(enabled: true)
        let b = CircuitBreaker(name: "tw-eu", clock: clock, telemetry: telemetry)
        func value() -> Double? { telemetry.registry?.value(Telemetry.Name.breakerState, ["tw-eu"]) }
        #expect(value() == 0)
        for _ in 0..<3 { _ = b.admits(); b.failed() }
        #expect(value() == 1)
        clock.at += CircuitBreaker.openMillis
        #expect(b.admits())
        #expect(value() == 2)
        b.failed()
        #expect(value() == 1)
        clock.at += CircuitBreaker.openMillis
        _ = b.admits()
        b.succeeded()
        #expect(value() == 0)
    }
}
