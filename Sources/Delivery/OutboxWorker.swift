public import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
import Locking

/// Delivers one outbox message (an SMS provider or an email transport). Throws to retry.
public protocol MessageSender: Sendable {
    /// Whether a successful send should keep the body at rest (only the dev outbox does).
    var keepsBody: Bool { get }
    /// The longest one `send` can take (its configured timeout, connecting included). The
    /// worker's lease outlasts it, so no other worker takes a message while this one sends it.
    var timeLimit: Millis { get }
    /// The provider's name in metrics, receipts and the outbox row: an SMS provider's configured
    /// `name`; by default the type's name without `Sender`/`Transport` (`smtp`, `apns`).
    var provider: String { get }
    /// Whether this sender can carry messages of `channel` at all (a Twilio account without a
    /// WhatsApp sender cannot): a message it cannot carry goes to a provider that can.
    func carries(_ channel: OutboxMessage.Channel) -> Bool
    func send(_ message: OutboxMessage) throws
    /// Sends and says which provider took the message and its id there (what its receipts
    /// name); nil from a sender without receipts. The default sends and answers nil.
    func deliver(_ message: OutboxMessage) throws -> ProviderAcceptance?
}

extension MessageSender {
    public func deliver(_ message: OutboxMessage) throws -> ProviderAcceptance? {
        try send(message)
        return nil
    }
}

/// A send that may have reached `provider` although no answer came (a timeout, a connection
/// dropped after the request was written): the message is retried there only, so no other
/// provider sends it a second time.
public struct UncertainDelivery: Error, CustomStringConvertible {
    public let provider: String
    public let underlying: String
    public init(provider: String, underlying: String) { self.provider = provider; self.underlying = underlying }
    public var description: String { underlying }
}

extension MessageSender {
    public var provider: String {
        var name = String(describing: type(of: self))
        for suffix in ["Sender", "Transport"] where name.hasSuffix(suffix) && name.count > suffix.count { name.removeLast(suffix.count) }
        return name.lowercased()
    }

    public func carries(_ channel: OutboxMessage.Channel) -> Bool { true }
}

/// A failure the sender knows is permanent (bad number, rejected address): no retry.
public struct PermanentDeliveryError: Error, CustomStringConvertible {
    public let description: String
    /// The configured name of the provider that refused (metrics), when the sender knows it.
    public let provider: String?
    public init(_ d: String, provider: String? = nil) { description = d; self.provider = provider }
}

/// The background delivery loop. It lists due messages and, one at a time, leases a message just
/// before sending it (a conditional write only one worker wins), sends it and records the outcome
/// under that lease: sent, retried with exponential backoff (5 s × 2ⁿ, at most 1 h), or dead
/// after `maxAttempts` or a permanent failure. Several instances may share the database: the
/// lease outlasts the slowest send (`leaseMillis`), and an outcome recorded under a lease that
/// was taken over is dropped. Messages leased before a crash are sent again once their lease
/// expires, and that lost attempt counts towards `maxAttempts`: a message whose send ends the
/// process (a crash in a provider's library, an OOM kill) is dead after `maxAttempts` leases
/// instead of being sent, and ending the process, forever.
// @unchecked: the worker's pthread and the flags its condition variable guards are reached only
// with that condition's lock held.
public final class OutboxWorker: @unchecked Sendable {
    /// Added to the senders' longest time limit: the writes around a send, a stalled process.
    public static let leaseMargin: Millis = 30_000
    /// How long `stop()` waits for the message in hand, counted from the first stop request:
    /// within systemd's `TimeoutStopSec` (30 s, deploy/gatehouse.service) with room to exit.
    public static let stopGrace: Millis = 20_000
    public let maxAttempts: Int
    /// How long a message is leased: the longest time limit of the senders plus `leaseMargin`.
    public let leaseMillis: Millis
    let makeStore: () throws -> any OutboxStore
    let senders: [OutboxMessage.Channel: any MessageSender]
    /// The channels this worker delivers (those it has a sender for); another worker may deliver
    /// the others (pushes have their own, so a slow SMS provider never delays them).
    let channels: [OutboxMessage.Channel]
    let clock: any Clock
    let telemetry: Telemetry
    let log: Log
    private let condition = Condition()
    private var stopping = false
    private var stopRequestedAt: Millis = 0
    private var finished = false
    private var woken = false
    private var thread: pthread_t?
    /// Periodic store clean-up run on this thread (expired limit counters and the like).
    let housekeeping: (() throws -> Void)?
    public static let housekeepingInterval: Millis = 600_000
    private var lastHousekeeping: Millis = 0
    /// Work run after each delivery pass on this worker's store (the phone codes' automatic
    /// fallback): cheap when nothing is due; an error is logged and the loop goes on.
    let sweeps: [(any OutboxStore) throws -> Void]

    public init(makeStore: @escaping () throws -> any OutboxStore, senders: [OutboxMessage.Channel: any MessageSender],
                clock: any Clock = SystemClock(), maxAttempts: Int = 8, telemetry: Telemetry = .off, log: Log = Log(),
                housekeeping: (() throws -> Void)? = nil, sweeps: [(any OutboxStore) throws -> Void] = []) {
        self.makeStore = makeStore
        self.telemetry = telemetry
        self.log = log
        self.senders = senders
        channels = OutboxMessage.Channel.allCases.filter { senders[$0] != nil }
        self.clock = clock
        self.maxAttempts = maxAttempts
        self.housekeeping = housekeeping
        self.sweeps = sweeps
        leaseMillis = (senders.values.map(\.timeLimit).max() ?? 0) + OutboxWorker.leaseMargin
    }

    public static func backoff(attempts: Int) -> Millis { min(5_000 << min(max(attempts - 1, 0), 20), 3_600_000) }

    public func start(pollMillis: UInt32 = 500) {
        let box = Unmanaged.passRetained(RunBox { [self] in
            run(pollMillis: pollMillis)
            condition.lock.lock()
            finished = true
            condition.broadcast()
            condition.lock.unlock()
        })
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            let box = Unmanaged<RunBox>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            log.error("outbox: cannot start its thread: \(rc)")
            return
        }
        thread = tid
    }

    /// Asks the loop to look now (called after a flow commits a message).
    public func wake() {
        condition.lock.lock()
        woken = true
        condition.broadcast()
        condition.lock.unlock()
    }

    /// Asks the loop to stop after the message in hand; returns at once.
    public func requestStop() {
        condition.lock.lock()
        if !stopping {
            stopping = true
            stopRequestedAt = SystemClock().now()
        }
        condition.broadcast()
        condition.lock.unlock()
    }

    var isStopping: Bool {
        condition.lock.lock()
        defer { condition.lock.unlock() }
        return stopping
    }

    /// Stops the loop: it finishes the message in hand (a send ends within its sender's time
    /// limit) and starts no other. Waits at most `stopGrace` from the first stop request; a send
    /// still running then is left to its lease (the process exits and the message is sent again
    /// once the lease expires). Returns whether the loop ended.
    @discardableResult
    public func stop() -> Bool {
        requestStop()
        guard let thread else { return true }
        condition.lock.lock()
        let deadline = stopRequestedAt + OutboxWorker.stopGrace
        while !finished {
            let left = deadline - SystemClock().now()
            if left <= 0 { break }
            condition.wait(millis: Int(min(left, 1_000)))
        }
        let ended = finished
        condition.lock.unlock()
        self.thread = nil
        if ended {
            pthread_join(thread, nil)
        } else {
            pthread_detach(thread)
            log.warning("outbox: a send was still running \(OutboxWorker.stopGrace / 1000) s after the stop request; its message is sent again once its lease expires")
        }
        return ended
    }

    func run(pollMillis: UInt32) {
        var store: (any OutboxStore)?
        while true {
            condition.lock.lock()
            if !stopping && !woken { condition.wait(millis: Int(pollMillis)) }
            woken = false
            let stop = stopping
            condition.lock.unlock()
            if stop { return }
            do {
                let current = try store ?? makeStore()
                store = current
                while try deliverDue(current) > 0 {}
                sweep(current)
                let now = clock.now()
                if let housekeeping, !isStopping, now - lastHousekeeping >= OutboxWorker.housekeepingInterval {
                    lastHousekeeping = now
                    try housekeeping()
                }
            } catch {
                log.error("outbox: \(error)")
                store = nil
            }
        }
    }

    /// Delivers what is due now on a connection of its own, without the worker's thread (`gatehouse
    /// outbox deliver`, for a host where no process runs between requests): passes until none is
    /// due (a failed message waits for its backoff, so it is not due again) or `limit` were
    /// leased. Returns how many were.
    public func drain(limit: Int = 10_000) throws -> Int {
        let store = try makeStore()
        var total = 0
        while total < limit {
            var n = try deliverDue(store, limit: min(16, limit - total))
            // A fallback queues a message due now: deliver it in this drain too.
            if n == 0, !sweeps.isEmpty {
                sweep(store)
                n = try deliverDue(store, limit: min(16, limit - total))
            }
            if n == 0 { break }
            total += n
        }
        return total
    }

    /// Runs every sweep once; a failure is logged, never ends the loop.
    func sweep(_ store: any OutboxStore) {
        for s in sweeps {
            do { try s(store) } catch { log.error("outbox: sweep: \(error)") }
        }
    }

    /// One pass over the messages due now, each leased on its own just before it is sent (or made
    /// dead, its attempts used up). Stops early once a stop is requested. Returns how many
    /// messages it leased or made dead.
    @discardableResult
    public func deliverDue(_ store: any OutboxStore, limit: Int = 16) throws -> Int {
        var handled = 0
        for id in try store.dueMessageIDs(now: clock.now(), limit: limit, channels: channels) {
            if isStopping { break }
            let now = clock.now()
            switch try store.lease(id: id, now: now, until: now + leaseMillis, maxAttempts: maxAttempts) {
            case .unavailable:
                continue
            case let .exhausted(m):
                handled += 1
                telemetry.delivery(channel: m.channel.rawValue, provider: m.provider ?? senders[m.channel]?.provider ?? "none", result: "dead")
                log.warning("outbox: \(m.channel.rawValue) #\(m.id) dead after \(m.attempts) attempt(s): \(m.lastError ?? "attempts used up")")
            case let .leased(lease):
                handled += 1
                try deliver(lease, store)
            }
        }
        return handled
    }

    /// Sends one leased message and records the outcome under its lease.
    func deliver(_ lease: OutboxLease, _ store: any OutboxStore) throws {
        let m = lease.message
        let attempts = m.attempts + 1
        let line = "outbox: \(m.channel.rawValue) #\(m.id)"
        let recorded: Bool
        guard let sender = senders[m.channel] else {
            recorded = try store.markFailed(lease, error: "no sender for \(m.channel.rawValue)", nextAttemptAt: nil, at: clock.now())
            telemetry.delivery(channel: m.channel.rawValue, provider: "none", result: "dead")
            log.warning("\(line) has no sender (dead)" + OutboxWorker.notRecorded(recorded))
            return
        }
        // A send's failure is recorded as a failed attempt; a store error after a successful send
        // records nothing and leaves the lease to expire (the next lease counts it as an attempt).
        let failure: (any Error)?
        var accepted: ProviderAcceptance?
        do {
            accepted = try sender.deliver(m)
            failure = nil
        } catch {
            failure = error
        }
        if let error = failure {
            let permanent = error is PermanentDeliveryError
            let next: Millis? = (permanent || attempts >= maxAttempts) ? nil : clock.now() + OutboxWorker.backoff(attempts: attempts)
            recorded = try store.markFailed(lease, error: "\(error)", nextAttemptAt: next, at: clock.now(),
                                            pinnedTo: (error as? UncertainDelivery)?.provider)
            telemetry.delivery(channel: m.channel.rawValue, provider: OutboxWorker.provider(of: error) ?? sender.provider,
                               result: next == nil ? "dead" : "failed")
            log.warning("\(line) attempt \(attempts) failed: \(error)" + (next == nil ? " (dead)" : "") + OutboxWorker.notRecorded(recorded))
        } else {
            // A sender without receipts is still the provider that took it (the console's table).
            recorded = try markSent(lease, store, keepBody: sender.keepsBody,
                                    accepted: accepted ?? ProviderAcceptance(provider: sender.provider, messageID: nil))
            telemetry.delivery(channel: m.channel.rawValue, provider: accepted?.provider ?? sender.provider, result: "sent")
            log.info("\(line) sent after \(attempts) attempt(s)" + OutboxWorker.notRecorded(recorded))
        }
    }

    /// Records the send and, with it, the console's count of SMS and emails sent (a store that
    /// keeps counters: every real one does).
    func markSent(_ lease: OutboxLease, _ store: any OutboxStore, keepBody: Bool, accepted: ProviderAcceptance? = nil) throws -> Bool {
        let m = lease.message, now = clock.now()
        guard let counters = store as? any LimitStore, m.channel != .push else {
            return try store.markSent(lease, at: now, keepBody: keepBody, accepted: accepted)
        }
        return try store.transaction {
            guard try store.markSent(lease, at: now, keepBody: keepBody, accepted: accepted) else { return false }
            try ActivityCounters.sent(counters, project: m.projectID, channel: m.channel, at: now)
            return true
        }
    }

    /// The provider a failure names (the one of two that failed last), for metrics.
    static func provider(of error: any Error) -> String? {
        switch error {
        case let e as UncertainDelivery: e.provider
        case let e as DeliveryFailure: e.provider
        case let e as PermanentDeliveryError: e.provider
        default: nil
        }
    }

    static func notRecorded(_ recorded: Bool) -> String {
        recorded ? "" : "; not recorded: another worker took the lease over"
    }
}

/// The dev outbox: logs the message and keeps it readable at the emulator endpoints.
public struct DevSender: MessageSender {
    let log: Log
    public let provider: String
    public init(log: Log = Log(), name: String = "dev") { self.log = log; provider = name }
    public var keepsBody: Bool { true }
    public var timeLimit: Millis { 0 }
    public func send(_ m: OutboxMessage) throws {
        log.info("dev outbox: \(m.channel.rawValue) to \(m.recipient): \(m.subject.map { $0 + " — " } ?? "")\(m.body)")
    }
}

/// The closure a new thread runs.
private final class RunBox {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

