import AuthEngine
import AuthStore

/// A clock tests move by hand.
final class FixedClock: Clock, @unchecked Sendable {
    private let lock = NSLockLike()
    private var current: Millis
    init(_ start: Millis = 1_767_225_600_000) { current = start }
    func now() -> Millis { lock.withLock { current } }
    func advance(seconds: Int64) { lock.withLock { current += seconds * 1000 } }
    func advance(millis: Millis) { lock.withLock { current += millis } }
}

/// Deterministic randomness (xorshift64*), so a failing test replays exactly.
final class SeededRandom: RandomSource, @unchecked Sendable {
    private let lock = NSLockLike()
    private var state: UInt64
    init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) { state = seed == 0 ? 1 : seed }
    func bytes(_ count: Int) -> [UInt8] {
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

/// A real store on a private in-memory SQLite database (same code as production, no server).
func makeStore() throws -> SQLiteStore { try SQLiteStore(path: ":memory:") }
