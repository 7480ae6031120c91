import AuthEngine
import AuthStore
import Delivery
import Glibc
import TestSupport

/// A pthread mutex for test state touched from the worker's thread and the test's.
final class TestLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    init() { pthread_mutex_init(mutex, nil) }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value the worker's thread and the test both touch.
final class Shared<T>: @unchecked Sendable {
    private let lock = TestLock()
    private var current: T
    init(_ value: T) { current = value }
    var value: T { lock.withLock { current } }
    func update(_ body: (inout T) -> Void) { lock.withLock { body(&current) } }
}

/// Which worker sent which message, in order.
final class SendLog: @unchecked Sendable {
    private let lock = TestLock()
    private var entries: [(worker: String, id: Int64)] = []
    func record(_ worker: String, _ id: Int64) { lock.withLock { entries.append((worker, id)) } }
    var ids: [Int64] { lock.withLock { entries.map(\.id) } }
    func count(_ worker: String) -> Int { lock.withLock { entries.filter { $0.worker == worker }.count } }
}

/// A sender whose behaviour each test writes.
struct ScriptedSender: MessageSender {
    let timeLimit: Millis
    let script: @Sendable (OutboxMessage) throws -> Void
    var keepsBody: Bool { false }
    init(timeLimit: Millis = 10_000, _ script: @escaping @Sendable (OutboxMessage) throws -> Void) {
        self.timeLimit = timeLimit
        self.script = script
    }
    func send(_ message: OutboxMessage) throws { try script(message) }
}

/// A database file for tests that open it more than once (several workers, a worker's thread);
/// removed with its WAL when the test ends.
struct TempDatabase {
    let path = "/tmp/gatehouse-delivery-\(UInt64.random(in: 0...UInt64.max)).db"
    func open() throws -> SQLStore { try SQLStore(path: path) }
    func remove() { for s in ["", "-wal", "-shm"] { unlink(path + s) } }
}

extension OutboxStore {
    /// Queues `count` text messages due at `at`; returns their ids.
    @discardableResult
    func enqueueTexts(_ count: Int, at: Millis, channel: OutboxMessage.Channel = .sms) throws -> [Int64] {
        try (0..<count).map {
            try enqueue(OutboxMessage(projectID: "p", channel: channel, recipient: channel == .sms ? "+1555000\($0)" : "user\($0)@example.com",
                                      subject: channel == .email ? "Sign in" : nil, body: "code \($0)", nextAttemptAt: at, createdAt: at))
        }
    }

    func all(_ channel: OutboxMessage.Channel = .sms) throws -> [OutboxMessage] { try messages(project: "p", channel: channel, limit: 100) }
}

/// Real milliseconds (`SystemClock`), for timing the worker's thread and real sockets.
func realNow() -> Millis { SystemClock().now() }

/// Waits up to `millis` for `condition`.
func eventually(within millis: Millis = 5_000, _ condition: () throws -> Bool) rethrows -> Bool {
    let end = realNow() + millis
    while realNow() < end {
        if try condition() { return true }
        usleep(5_000)
    }
    return try condition()
}
