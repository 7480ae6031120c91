import AuthEngine
#if canImport(Glibc)
import Glibc
#endif

/// Delivers one outbox message (an SMS provider or an email transport). Throws to retry.
public protocol MessageSender: Sendable {
    /// Whether a successful send should keep the body at rest (only the dev outbox does).
    var keepsBody: Bool { get }
    func send(_ message: OutboxMessage) throws
}

/// A failure the sender knows is permanent (bad number, rejected address): no retry.
public struct PermanentDeliveryError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// The background delivery loop: leases due messages, sends them, marks them sent, retries with
/// exponential backoff (5 s × 2ⁿ, at most 1 h) and marks them dead after `maxAttempts`.
/// Messages committed before a crash are leased again once their lease expires.
public final class OutboxWorker: @unchecked Sendable {
    public static let leaseMillis: Millis = 60_000
    public let maxAttempts: Int
    let makeStore: () throws -> OutboxStore
    let senders: [OutboxMessage.Channel: MessageSender]
    let clock: Clock
    private let condition = WakeCondition()
    private var stopping = false
    private var woken = false
    private var thread: pthread_t?
    /// Periodic store clean-up run on this thread (expired limit counters and the like).
    let housekeeping: (() throws -> Void)?
    public static let housekeepingInterval: Millis = 600_000
    private var lastHousekeeping: Millis = 0

    public init(makeStore: @escaping () throws -> OutboxStore, senders: [OutboxMessage.Channel: MessageSender],
                clock: Clock = SystemClock(), maxAttempts: Int = 8, housekeeping: (() throws -> Void)? = nil) {
        self.makeStore = makeStore
        self.senders = senders
        self.clock = clock
        self.maxAttempts = maxAttempts
        self.housekeeping = housekeeping
    }

    public static func backoff(attempts: Int) -> Millis { min(5_000 << min(attempts - 1, 20), 3_600_000) }

    public func start(pollMillis: UInt32 = 500) {
        let box = Unmanaged.passRetained(RunBox { [self] in run(pollMillis: pollMillis) })
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            let box = Unmanaged<RunBox>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            Log.error("outbox: cannot start its thread: \(rc)")
            return
        }
        thread = tid
    }

    /// Asks the loop to look now (called after a flow commits a message).
    public func wake() {
        condition.lock()
        woken = true
        condition.signal()
        condition.unlock()
    }

    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }

    func run(pollMillis: UInt32) {
        var store: OutboxStore?
        while true {
            condition.lock()
            if !stopping && !woken { condition.wait(millis: Int(pollMillis)) }
            woken = false
            let stop = stopping
            condition.unlock()
            if stop { return }
            do {
                if store == nil { store = try makeStore() }
                while try deliverDue(store!) > 0 {}
                let now = clock.now()
                if let housekeeping, now - lastHousekeeping >= OutboxWorker.housekeepingInterval {
                    lastHousekeeping = now
                    try housekeeping()
                }
            } catch {
                Log.error("outbox: \(error)")
                store = nil
            }
        }
    }

    /// One pass: lease, send, mark. Returns how many messages it handled.
    @discardableResult
    public func deliverDue(_ store: OutboxStore, limit: Int = 16) throws -> Int {
        let now = clock.now()
        let batch = try store.leaseDue(now: now, leaseUntil: now + OutboxWorker.leaseMillis, limit: limit)
        for m in batch {
            guard let sender = senders[m.channel] else {
                try store.markFailed(id: m.id, error: "no sender for \(m.channel.rawValue)", nextAttemptAt: nil, at: now)
                continue
            }
            do {
                try sender.send(m)
                try store.markSent(id: m.id, at: clock.now(), keepBody: sender.keepsBody)
                Log.info("outbox: sent \(m.channel.rawValue) #\(m.id) after \(m.attempts + 1) attempt(s)")
            } catch {
                let attempts = m.attempts + 1
                let permanent = error is PermanentDeliveryError
                let next: Millis? = (permanent || attempts >= maxAttempts) ? nil : clock.now() + OutboxWorker.backoff(attempts: attempts)
                try store.markFailed(id: m.id, error: "\(error)", nextAttemptAt: next, at: clock.now())
                Log.warning("outbox: \(m.channel.rawValue) #\(m.id) attempt \(attempts) failed: \(error)" + (next == nil ? " (dead)" : ""))
            }
        }
        return batch.count
    }
}

/// The dev outbox: logs the message and keeps it readable at the emulator endpoints.
public struct DevSender: MessageSender {
    public init() {}
    public var keepsBody: Bool { true }
    public func send(_ m: OutboxMessage) throws {
        Log.info("dev outbox: \(m.channel.rawValue) to \(m.recipient): \(m.subject.map { $0 + " — " } ?? "")\(m.body)")
    }
}

/// The closure a new thread runs.
private final class RunBox {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// A mutex with one condition variable (pthread), for the worker's sleep between polls.
final class WakeCondition {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func signal() { pthread_cond_signal(cond) }

    /// Waits (lock held) until signalled or `millis` have passed; spurious wake-ups are allowed,
    /// as with any condition variable.
    func wait(millis: Int) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanos = Int(now.tv_nsec) + (millis % 1000) * 1_000_000
        var until = timespec(tv_sec: now.tv_sec + millis / 1000 + nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
        _ = pthread_cond_timedwait(cond, mutex, &until)
    }
}
