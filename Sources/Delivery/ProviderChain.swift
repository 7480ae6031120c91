public import AuthEngine
import Locking

/// A second provider for the phone channels (`sms.secondary`) behind a circuit breaker on the
/// first. The rule that keeps a message from being sent by both: a message goes to the second
/// provider in the same attempt only when the first provably did not take it (it could not be
/// reached, answered 5xx, 408 or 429, or the breaker is open); a send that may have reached the
/// first without an answer (`UncertainDelivery`) stays with it (the outbox pins the message to it
/// and retries it there only), and a message pinned to either goes only to that one.
struct ProviderChain: MessageSender {
    let primary: (name: String, sender: any MessageSender)
    let secondary: (name: String, sender: any MessageSender)
    let breaker: CircuitBreaker

    var keepsBody: Bool { primary.sender.keepsBody && secondary.sender.keepsBody }
    /// One attempt may try both.
    var timeLimit: Millis { primary.sender.timeLimit + secondary.sender.timeLimit }

    func send(_ m: OutboxMessage) throws { _ = try deliver(m) }

    func deliver(_ m: OutboxMessage) throws -> ProviderAcceptance? {
        if m.provider == secondary.name { return try named(secondary, m) }
        if m.provider == primary.name || breaker.admits() {
            do {
                let accepted = try primary.sender.deliver(m)
                breaker.succeeded()
                return accepted ?? ProviderAcceptance(provider: primary.name, messageID: nil)
            } catch let failure as DeliveryFailure {
                breaker.failed()
                // Pinned to the first (an earlier attempt may have reached it): retried there only.
                if m.provider == primary.name { throw failure }
            } catch let uncertain as UncertainDelivery {
                breaker.failed()
                throw uncertain
            }
        }
        return try named(secondary, m)
    }

    func named(_ p: (name: String, sender: any MessageSender), _ m: OutboxMessage) throws -> ProviderAcceptance? {
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
    let inner = Locked(Inner())

    init(name: String, clock: any Clock = SystemClock(), log: Log = Log()) {
        self.name = name; self.clock = clock; self.log = log
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
        if reopened { log.info("sms: \(name) answers again; messages go to it") }
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
            return was == .closed
        }
        if opened {
            log.warning("sms: \(name) failed \(CircuitBreaker.threshold) times in a row; messages go to the secondary provider for \(CircuitBreaker.openMillis / 1000) s")
        }
    }
}
