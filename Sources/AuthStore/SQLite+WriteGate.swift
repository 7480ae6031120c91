import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// The write side of one database file in this process, shared by all its connections.
///
/// - A mutex: writers queue on it instead of colliding inside SQLite, whose busy handler sleeps
///   (1, 2, 5 … 100 ms) between retries. Other processes sharing the file are still arbitrated by
///   SQLite's own locks.
/// - The checkpoint schedule. SQLite's auto-checkpoint runs inside COMMIT, so under the mutex,
///   and once the WAL holds 1,000 frames it runs after *every* commit while readers keep the WAL
///   from restarting: two `fdatasync`s per write transaction with every other writer waiting.
///   Instead each connection's WAL hook reports the WAL's size, a passive checkpoint is due once
///   `checkpointFrames` frames were added since the last one this process started, and the
///   committing thread runs it after releasing the mutex (a passive checkpoint never blocks
///   writers; a second one at the same time returns at once).
final class WriteGate: @unchecked Sendable {
    static let checkpointFrames: Int32 = 1000

    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// WAL frames when this process last started a checkpoint (read and written under `mutex`).
    private var mark: Int32 = 0

    private init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    private static var registryLock = pthread_mutex_t()
    private static let registryReady: Bool = { pthread_mutex_init(&registryLock, nil); return true }()
    nonisolated(unsafe) private static var gates: [String: WriteGate] = [:]

    /// The gate of `path`; nil for in-memory databases (private to their connection).
    static func `for`(path: String) -> WriteGate? {
        guard path != ":memory:", !path.isEmpty, registryReady else { return nil }
        pthread_mutex_lock(&registryLock)
        defer { pthread_mutex_unlock(&registryLock) }
        if let g = gates[path] { return g }
        let g = WriteGate()
        gates[path] = g
        return g
    }

    /// Called under `mutex` after a commit left `frames` frames in the WAL.
    func checkpointDue(frames: Int32) -> Bool {
        if frames < mark { mark = 0 }  // the WAL was restarted
        guard frames - mark >= WriteGate.checkpointFrames else { return false }
        mark = frames
        return true
    }

    /// A passive checkpoint on `db`, called without `mutex`.
    func checkpoint(_ db: OpaquePointer) {
        _ = sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }
}
