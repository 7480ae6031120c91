#if canImport(Glibc)
public import Glibc
#elseif canImport(Darwin)
public import Darwin
#endif

/// The one lock type of the code base: a pthread mutex allocated once with the object, so it
/// sits at a stable address for the object's life (a `pthread_mutex_t` stored in a property and
/// passed as `&` is not guaranteed one). `Synchronization.Mutex` was measured in its place: on
/// Linux it is a priority-inheritance futex, which takes a system call on every contended lock,
/// and the verify and phone-page caches, taken by every worker on every request, cost verify 15 %
/// and the phone page 13–17 % of their kept-connection throughput with it (BENCHMARKS.md, "One
/// lock type").
// @unchecked: the mutex is a C handle; every access to what it guards goes through it.
public final class Lock: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

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

    @inlinable @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// For a hold that spans calls (a write transaction taken in one and released in another),
    /// or one taken only under a condition; prefer `withLock`.
    @inlinable @inline(__always)
    public func lock() { pthread_mutex_lock(mutex) }

    @inlinable @inline(__always)
    public func unlock() { pthread_mutex_unlock(mutex) }
}

/// A value only reached under its `Lock`.
// @unchecked: `value` is only reached under `lock`.
public final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let lock = Lock()
    @usableFromInline var value: Value

    public init(_ value: Value) { self.value = value }

    /// Inlined where it is called (the callers' caches sit on every request's path), so it is
    /// specialised for the value and the closure instead of running generically.
    @inlinable @inline(__always)
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}

/// A condition a thread waits for under a `Lock` (a pthread condition variable): `wait` releases
/// the lock while it sleeps and holds it again when woken; `signal` wakes one waiter.
// @unchecked: the condition variable is a C handle, used only with its lock held.
public final class Condition: @unchecked Sendable {
    public let lock: Lock
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init(lock: Lock = Lock()) {
        self.lock = lock
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deinitialize(count: 1)
        cond.deallocate()
    }

    /// Call with `lock` held.
    public func wait() { pthread_cond_wait(cond, lock.mutex) }

    /// Call with `lock` held.
    public func signal() { pthread_cond_signal(cond) }

    /// Wakes every waiter. Call with `lock` held.
    public func broadcast() { pthread_cond_broadcast(cond) }

    /// Waits (lock held) until signalled or `millis` have passed; spurious wake-ups are allowed,
    /// as with any condition variable.
    public func wait(millis: Int) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanos = Int(now.tv_nsec) + (millis % 1000) * 1_000_000
        var until = timespec(tv_sec: now.tv_sec + millis / 1000 + nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
        _ = pthread_cond_timedwait(cond, lock.mutex, &until)
    }
}
