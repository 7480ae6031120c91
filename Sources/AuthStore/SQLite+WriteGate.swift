import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// The write side of one database file in this process, shared by all its connections.
///
/// - A mutex: writers queue on it instead of colliding inside SQLite, whose busy handler sleeps
///   (1, 2, 5 … 100 ms) between retries. Other processes sharing the file are still arbitrated by
///   SQLite's own locks.
/// - The writer handle every write of the process runs on, under the mutex (its page cache stays
///   valid from one transaction to the next). Opened on first write, closed with the last
///   connection of the file.
/// - The checkpoint schedule. SQLite's auto-checkpoint runs inside COMMIT, so under the mutex,
///   and once the WAL holds 1,000 frames it runs after *every* commit while readers keep the WAL
///   from restarting: two `fdatasync`s per write transaction with every other writer waiting.
///   Instead the writer's WAL hook reports the WAL's size, a checkpoint is due once
///   `checkpointFrames` frames were added since the last one this process started, and the
///   committing thread runs it after releasing the mutex (see `checkpoint(own:)`).
final class WriteGate: @unchecked Sendable {
    static let checkpointFrames: Int32 = 1000

    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    let path: String
    let busyTimeoutMillis: Int32
    /// WAL frames when this process last started a checkpoint (read and written under `mutex`).
    private var mark: Int32 = 0
    /// Under `mutex`.
    private var handle: SQLiteHandle?
    private var connections = 0

    private init(path: String, busyTimeoutMillis: Int32) {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        self.path = path
        self.busyTimeoutMillis = busyTimeoutMillis
    }

    /// The writer handle; call with `mutex` held.
    func writer() throws -> SQLiteHandle {
        if let handle { return handle }
        let h = try SQLiteHandle(path: path, busyTimeoutMillis: busyTimeoutMillis, writer: true)
        handle = h
        return h
    }

    func attach() {
        pthread_mutex_lock(mutex)
        connections += 1
        pthread_mutex_unlock(mutex)
    }

    /// The last connection of the file closes the writer (the file may be deleted and made anew).
    func detach() {
        pthread_mutex_lock(mutex)
        connections -= 1
        if connections == 0 { handle = nil; mark = 0 }
        pthread_mutex_unlock(mutex)
    }

    private static var registryLock = pthread_mutex_t()
    private static let registryReady: Bool = { pthread_mutex_init(&registryLock, nil); return true }()
    nonisolated(unsafe) private static var gates: [String: WriteGate] = [:]

    /// The gate of `path`; nil for in-memory databases (private to their connection).
    static func `for`(path: String, busyTimeoutMillis: Int32) -> WriteGate? {
        guard path != ":memory:", !path.isEmpty, registryReady else { return nil }
        pthread_mutex_lock(&registryLock)
        defer { pthread_mutex_unlock(&registryLock) }
        if let g = gates[path] { return g }
        let g = WriteGate(path: path, busyTimeoutMillis: busyTimeoutMillis)
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

    /// Called without `mutex` when `checkpointDue` said so. First a passive checkpoint on the
    /// caller's own handle copies the bulk of the WAL while other writers go on; then, holding
    /// `mutex`, a second one on the writer copies only the frames committed meanwhile. The WAL is
    /// then fully copied when the next write begins, which lets that write start the WAL over
    /// (SQLite restarts it only then); without this step, under steady writes the WAL never
    /// caught up and grew without bound. Each step syncs the files it wrote.
    func checkpoint(own: SQLiteHandle) {
        _ = sqlite3_wal_checkpoint_v2(own.db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if let writer = try? writer() {
            _ = sqlite3_wal_checkpoint_v2(writer.db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }
}
