public import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
import Locking

/// A clock tests move by hand (2026-01-01 00:00 UTC unless told otherwise).
public final class FixedClock: Clock, @unchecked Sendable {
    private let lock = Lock()
    private var current: Millis
    public init(_ start: Millis = 1_767_225_600_000) { current = start }
    public func now() -> Millis { lock.withLock { current } }
    public func advance(seconds: Int64) { lock.withLock { current += seconds * 1000 } }
    public func advance(millis: Millis) { lock.withLock { current += millis } }
}

/// Deterministic randomness (xorshift64*), so that a failing test or a fuzz input replays exactly.
public final class SeededRandom: RandomSource, @unchecked Sendable {
    private let lock = Lock()
    private var state: UInt64
    public init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) { state = seed == 0 ? 1 : seed }
    public func bytes(_ count: Int) -> [UInt8] {
        lock.withLock {
            var out: [UInt8] = []
            out.reserveCapacity(count)
            while out.count < count {
                state ^= state >> 12; state ^= state << 25; state ^= state >> 27
                let v = state &* 0x2545_F491_4F6C_DD1D
                withUnsafeBytes(of: v) { out.append(contentsOf: $0.prefix(count - out.count)) }
            }
            return out
        }
    }
}

/// Runs `body` on a new thread; `join` waits for it (test servers and workers on real sockets).
public final class TestThread: @unchecked Sendable {
    private var tid = pthread_t()
    private final class Box { let body: () -> Void; init(_ b: @escaping () -> Void) { body = b } }
    public init(_ body: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Box(body))
        pthread_create(&tid, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, box.toOpaque())
    }
    public func join() { pthread_join(tid, nil) }
}
