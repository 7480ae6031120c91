import CSQLite
import Synchronization

/// One open SQLite database handle (WAL, `synchronous=NORMAL`, foreign keys on) and its
/// prepared statements. Used by one thread at a time: a connection's own handle by its thread,
/// a file's writer handle by whichever thread holds the file's write lock.
final class SQLiteHandle {
    let db: OpaquePointer
    private var cache: [String: OpaquePointer] = [:]
    /// Frames in the WAL after this handle's last commit (writer handles, from the WAL hook).
    var walFrames: Int32?

    /// A writer handle reports its commits to `walFrames` instead of checkpointing inside COMMIT
    /// (see `WriteGate`); other handles keep SQLite's auto-checkpoint.
    init(path: String, busyTimeoutMillis: Int32, writer: Bool) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let msg = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(code: rc, message: msg, sql: nil)
        }
        db = handle
        sqlite3_busy_timeout(db, busyTimeoutMillis)
        sqlite3_extended_result_codes(db, 1)
        if SQLiteConnection.oneRequest {
            // The process that closes the file last deletes its -wal and -shm files, and the next
            // one creates them again (and sizes the -shm with eight writes): two file creations
            // and two deletions a CGI request on a quiet server. Kept, they are reused.
            var persist: Int32 = 1
            sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        }
        do {
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA synchronous=NORMAL")
            try execute("PRAGMA foreign_keys=ON")
            if SQLiteConnection.oneRequest {
                // A kept -wal is truncated by the last closer once its frames are checkpointed.
                // Left at its size, its frames stay valid: every later process rebuilt its index
                // from them and checkpointed them again as it closed, rewriting pages already in
                // the database with three fdatasync calls, a write request or not.
                try execute("PRAGMA journal_size_limit=0")
            }
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
        if writer {
            sqlite3_wal_hook(db, { context, _, _, frames in
                guard let context else { return SQLITE_OK }
                Unmanaged<SQLiteHandle>.fromOpaque(context).takeUnretainedValue().walFrames = frames
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    deinit {
        for (_, s) in cache { sqlite3_finalize(s) }
        sqlite3_close_v2(db)
    }

    func check(_ rc: Int32, _ sql: String?) throws {
        guard rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(db)), sql: sql)
        }
    }

    /// Runs SQL text with no parameters. Several statements allowed.
    func execute(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? "error"
            sqlite3_free(err)
            throw SQLiteError(code: rc, message: msg, sql: sql)
        }
    }

    func prepared(_ sql: String) throws -> OpaquePointer {
        if let s = cache[sql] { return s }
        var stmt: OpaquePointer?
        try check(sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil), sql)
        guard let stmt else { throw SQLiteError(code: SQLITE_MISUSE, message: "empty statement", sql: sql) }
        cache[sql] = stmt
        return stmt
    }
}

extension SQLiteConnection {
    /// Set by `configureForOneRequest`: every connection writes on its own handle (no file-wide
    /// writer handle or write lock: a second open of the file buys nothing in a process that
    /// serves one request on one thread).
    private static let oneRequestMode = Atomic<Bool>(false)
    public static var oneRequest: Bool { oneRequestMode.load(ordering: .relaxed) }

    /// For a process that serves one request (CGI), before its first connection.
    public static func configureForOneRequest() { oneRequestMode.store(true, ordering: .relaxed) }
}
