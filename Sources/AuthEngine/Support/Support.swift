#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The one lock type of the code base: a `Synchronization.Mutex` guarding no value, for state a
/// class keeps in ordinary properties. The mutex lives in the class's storage, at a stable
/// address for the object's life (a `pthread_mutex_t` stored inline and passed as `&` is not
/// guaranteed one). State that can live inside the lock uses `Mutex<Value>` directly.
public final class Lock: Sendable {
    private let mutex = Mutex<Void>(())
    public init() {}
    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try mutex.withLock { _ in try body() }
    }
}
