import CSQLite
#if canImport(Glibc)
import Glibc
#endif
import Locking

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
///   committing thread hands it to the file's `Checkpointer` thread (see `checkpoint(own:)`), so
///   that no request waits for a checkpoint's `fdatasync`s: under load they left workers
///   blocked on the disk and the processor idle.
// @unchecked: the writer's SQLite handle and the counters are reached only with `lock` held.
final class WriteGate: @unchecked Sendable {
    /// 4,000 frames of 4 KB: a WAL of ~16 MB at most between restarts. At 1,000 a sign-in flow
    /// paid ~1.4 more `pwrite`s and ~1.5 more `pread`s (hot pages copied four times as often),
    /// and the catch-up step's `fdatasync`s held the mutex four times as often.
    static let checkpointFrames: Int32 = 4000

    /// The file's write lock, held for each write transaction of the process.
    let lock = Lock()
    let path: String
    let busyTimeoutMillis: Int32
    /// WAL frames when this process last started a checkpoint (read and written under `lock`).
    private var mark: Int32 = 0
    /// Under `lock`.
    private var handle: SQLiteHandle?
    private var connections = 0
    /// Under `lock`: the thread that runs due checkpoints, started by the first one.
    private var checkpointer: Checkpointer?

    private init(path: String, busyTimeoutMillis: Int32) {
        self.path = path
        self.busyTimeoutMillis = busyTimeoutMillis
    }

    /// The writer handle; call with `lock` held.
    func writer() throws -> SQLiteHandle {
        if let handle { return handle }
        let h = try SQLiteHandle(path: path, busyTimeoutMillis: busyTimeoutMillis, writer: true)
        handle = h
        return h
    }

    func attach() {
        lock.withLock { connections += 1 }
    }

    /// The last connection of the file closes the writer (the file may be deleted and made anew)
    /// and stops the checkpoint thread, whose own handle closes with it.
    func detach() {
        let stopped: Checkpointer? = lock.withLock {
            connections -= 1
            guard connections == 0 else { return nil }
            handle = nil
            mark = 0
            defer { checkpointer = nil }
            return checkpointer
        }
        // Outside `lock`: the thread may be waiting for it to finish a checkpoint.
        stopped?.stop()
    }

    /// Every file's gate in this process, by path.
    private static let gates = Locked<[String: WriteGate]>([:])

    /// The gate of `path`; nil for in-memory databases (private to their connection).
    static func `for`(path: String, busyTimeoutMillis: Int32) -> WriteGate? {
        guard path != ":memory:", !path.isEmpty else { return nil }
        return gates.withLock { gates in
            if let g = gates[path] { return g }
            let g = WriteGate(path: path, busyTimeoutMillis: busyTimeoutMillis)
            gates[path] = g
            return g
        }
    }

    /// Called under `lock` after a commit left `frames` frames in the WAL. Hands a due
    /// checkpoint to the file's checkpoint thread; true when there is none (it could not be
    /// started) and the caller must run `checkpoint(own:)` itself once it released `lock`.
    func committed(frames: Int32) -> Bool {
        if frames < mark { mark = 0 }  // the WAL was restarted
        guard frames - mark >= WriteGate.checkpointFrames else { return false }
        mark = frames
        if checkpointer == nil {
            checkpointer = Checkpointer(path: path, busyTimeoutMillis: busyTimeoutMillis) { [unowned self] own in
                self.checkpoint(own: own)
            }
        }
        guard let checkpointer else { return true }
        checkpointer.request()
        return false
    }

    /// Called without `lock`. First a passive checkpoint on the caller's own handle copies the
    /// bulk of the WAL while writers go on. Then a second one on the writer, holding `lock`,
    /// copies only the frames committed meanwhile (if none, it writes and syncs nothing). The WAL
    /// is then fully copied when the next write begins, which lets that write start the WAL over
    /// (SQLite restarts it only then); without this step, under steady writes the WAL never caught
    /// up and grew without bound. Each step syncs the files it wrote.
    func checkpoint(own: SQLiteHandle) {
        _ = sqlite3_wal_checkpoint_v2(own.db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        lock.lock()
        defer { lock.unlock() }
        // Not `writer()`: once the file's last connection has closed the writer, a checkpoint
        // still running must not open it again (it would outlive every connection, keeping the
        // WAL from being checkpointed and removed at the last close).
        if let writer = handle {
            _ = sqlite3_wal_checkpoint_v2(writer.db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }
}

/// The thread that runs one database file's checkpoints for this process, on a handle of its
/// own. A request asks for one and goes on; requests made while one runs fold into the next.
// @unchecked: a pthread and the flags its condition guards, reached only with that lock held.
final class Checkpointer: @unchecked Sendable {
    private let wake = Condition()
    /// Under `wake.lock`.
    private var requested = false
    private var stopping = false
    private var thread = pthread_t()
    private let path: String
    private let busyTimeoutMillis: Int32
    private let work: (SQLiteHandle) -> Void

    /// Starts the thread; nil if it cannot be started.
    init?(path: String, busyTimeoutMillis: Int32, work: @escaping (SQLiteHandle) -> Void) {
        self.path = path
        self.busyTimeoutMillis = busyTimeoutMillis
        self.work = work
        let me = Unmanaged.passRetained(self)
        let rc = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<Checkpointer>.fromOpaque(raw!).takeRetainedValue()
            me.run()
            return nil
        }, me.toOpaque())
        guard rc == 0 else {
            me.release()
            return nil
        }
    }

    func request() {
        wake.lock.withLock {
            requested = true
            wake.signal()
        }
    }

    /// Lets a running checkpoint finish, then ends the thread and closes its handle.
    func stop() {
        wake.lock.withLock {
            stopping = true
            wake.signal()
        }
        pthread_join(thread, nil)
    }

    private func run() {
        var own: SQLiteHandle?
        wake.lock.lock()
        while true {
            while !requested, !stopping { wake.wait() }
            if stopping { break }
            requested = false
            wake.lock.unlock()
            if own == nil { own = try? SQLiteHandle(path: path, busyTimeoutMillis: busyTimeoutMillis, writer: false) }
            if let own { work(own) }
            wake.lock.lock()
        }
        wake.lock.unlock()
        own = nil
    }
}
