import AuthEngine
import Locking

/// A second provider for the phone channels (`sms.secondary`) behind a circuit breaker on the
/// first. The rule that keeps a message from being sent by both: a message goes to the second
/// provider in the same attempt only when the first provably did not take it (it could not be
/// reached, answered 5xx, 408 or 429, or the breaker is open); a send that may have reached the
/// first without an answer (`UncertainDelivery`) stays with it (the outbox pins the message to it
/// and retries it there only), and a message pinned to either goes only to that one. A channel
/// only one of the two carries (WhatsApp, calls) goes to that one, whatever the breaker says.
struct ProviderChain: MessageSender {
    let primary: (name: String, sender: any MessageSender)
    let secondary: (name: String, sender: any MessageSender)
    let breaker: CircuitBreaker

    var keepsBody: Bool { primary.sender.keepsBody && secondary.sender.keepsBody }
    /// One attempt may try both.
    var timeLimit: Millis { primary.sender.timeLimit + secondary.sender.timeLimit }
    var provider: String { primary.name }
    func carries(_ channel: OutboxMessage.Channel) -> Bool { primary.sender.carries(channel) || secondary.sender.carries(channel) }

    func send(_ m: OutboxMessage) throws { _ = try deliver(m) }

    func deliver(_ m: OutboxMessage) throws -> ProviderAcceptance? {
        if m.provider == secondary.name { return try named(secondary, m) }
        // Pinned to the first (an earlier attempt may have reached it), or the only one of the
        // two that carries this channel (a call when only the first has a voice number): the
        // first whatever the breaker says.
        if m.provider == primary.name || !secondary.sender.carries(m.channel) {
            switch try viaFirst(m) {
            case let .taken(accepted): return accepted
            case let .notTaken(failure): throw failure
            }
        }
        if primary.sender.carries(m.channel), breaker.admits(), case let .taken(accepted) = try viaFirst(m) { return accepted }
        return try named(secondary, m)
    }

    enum FirstOutcome {
        case taken(ProviderAcceptance)
        /// The first provably did not take it: the second may send it.
        case notTaken(DeliveryFailure)
    }

    /// Sends by the first provider and tells the breaker how it went. Any failure other than one
    /// the first provably did not take the message in is thrown (an uncertain one pins the
    /// message to the first).
    func viaFirst(_ m: OutboxMessage) throws -> FirstOutcome {
        do {
            let accepted = try named(primary, m)
            breaker.succeeded()
            return .taken(accepted)
        } catch let failure as DeliveryFailure {
            breaker.failed()
            return .notTaken(failure)
        } catch let refusal as PermanentDeliveryError {
            // It answered (a bad number, say): it is up, whatever it made of this message. Counting
            // it also ends a half-open probe, which would otherwise keep the first from every message.
            breaker.succeeded()
            throw refusal
        } catch {
            breaker.failed()
            throw error
        }
    }

    func named(_ p: (name: String, sender: any MessageSender), _ m: OutboxMessage) throws -> ProviderAcceptance {
        try p.sender.deliver(m) ?? ProviderAcceptance(provider: p.name, messageID: nil)
    }
}

/// The first provider's breaker, per process: closed (every message tries it); after
/// `threshold` failures in a row, open for `openMillis` (messages go to the second provider);
/// then half-open: one message probes the first, and its success closes the breaker, its failure
/// opens it again.
final class CircuitBreaker: Sendable {
    enum State: Equatable { case closed, open, halfOpen }
    static let threshold = 3
    static let openMillis: Millis = 30_000

    struct Inner {
        var failures = 0
        var openUntil: Millis = 0
        var state = State.closed
        var probing = false
    }

    let name: String
    let clock: any Clock
    let log: Log
    let telemetry: Telemetry
    let inner = Locked(Inner())

    init(name: String, clock: any Clock = SystemClock(), log: Log = Log(), telemetry: Telemetry = .off) {
        self.name = name; self.clock = clock; self.log = log; self.telemetry = telemetry
        report(.closed)
    }

    /// The state gauge (`gatehouse_sms_breaker_state`): 0 closed, 1 open, 2 half-open.
    func report(_ state: State) {
        telemetry.gauge(Telemetry.Name.breakerState, [name], state == .closed ? 0 : state == .open ? 1 : 2)
    }

    var state: State { inner.withLock { $0.state } }

    /// Whether this message may try the first provider (taking the half-open probe if it is due).
    func admits() -> Bool {
        let now = clock.now()
        return inner.withLock { s in
            switch s.state {
            case .closed: return true
            case .open:
                guard now >= s.openUntil else { return false }
                s.state = .halfOpen
                s.probing = true
                report(.halfOpen)
                return true
            case .halfOpen:
                if s.probing { return false }
                s.probing = true
                return true
            }
        }
    }

    func succeeded() {
        let reopened = inner.withLock { s -> Bool in
            defer { s = Inner() }
            return s.state != .closed
        }
        if reopened {
            report(.closed)
            log.info("sms: \(name) answers again; messages go to it")
        }
    }

    func failed() {
        let now = clock.now()
        let opened = inner.withLock { s -> Bool in
            s.failures += 1
            s.probing = false
            guard s.state == .halfOpen || s.failures >= CircuitBreaker.threshold else { return false }
            let was = s.state
            s.state = .open
            s.openUntil = now + CircuitBreaker.openMillis
            if was != .open { report(.open) }
            return was == .closed
        }
        if opened {
            log.warning("sms: \(name) failed \(CircuitBreaker.threshold) times in a row; messages go to the secondary provider for \(CircuitBreaker.openMillis / 1000) s")
        }
    }
}
