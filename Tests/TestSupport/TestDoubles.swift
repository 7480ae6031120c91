import AuthEngine

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
