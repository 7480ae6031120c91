#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one lock type of the code base: a pthread mutex allocated once with the object, so it
/// sits at a stable address for the object's life (a `pthread_mutex_t` stored in a property and
/// passed as `&` is not guaranteed one). `Synchronization.Mutex` was measured in its place: on
/// Linux it is a priority-inheritance futex, which takes a system call on every contended lock,
/// and the verify and phone-page caches, taken by every worker on every request, lost 8–10 % of
/// their kept-connection throughput with it (BENCHMARKS.md Findings).
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value only reached under its `Lock`.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    @inline(__always)
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}
