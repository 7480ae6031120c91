public import AuthEngine
import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A SQLite failure with the library's own message.
public struct SQLiteError: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public let sql: String?
    public var description: String { "SQLite error \(code): \(message)" + (sql.map { " in \($0)" } ?? "") }
    public var isConstraint: Bool { code & 0xFF == SQLITE_CONSTRAINT }
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }
}

/// A value bound to or read from a statement.
public enum SQLValue: Sendable, Equatable {
    case null
    case int(Int64)
    case text(String)
    case blob([UInt8])
}

public protocol SQLBindable { var sqlValue: SQLValue { get } }
extension Int64: SQLBindable { public var sqlValue: SQLValue { .int(self) } }
extension Int: SQLBindable { public var sqlValue: SQLValue { .int(Int64(self)) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .int(self ? 1 : 0) } }
extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Array: SQLBindable where Element == UInt8 { public var sqlValue: SQLValue { .blob(self) } }
extension SQLValue: SQLBindable { public var sqlValue: SQLValue { self } }
extension Optional: SQLBindable where Wrapped: SQLBindable { public var sqlValue: SQLValue { self?.sqlValue ?? .null } }

/// One row of a result, read by column index.
struct SQLiteRow {
    let stmt: OpaquePointer
    public func int(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }
    public func intOrNil(_ i: Int32) -> Int64? { sqlite3_column_type(stmt, i) == SQLITE_NULL ? nil : sqlite3_column_int64(stmt, i) }
    public func bool(_ i: Int32) -> Bool { sqlite3_column_int64(stmt, i) != 0 }
    public func text(_ i: Int32) -> String { textOrNil(i) ?? "" }
    public func textOrNil(_ i: Int32) -> String? {
        guard sqlite3_column_type(stmt, i) != SQLITE_NULL, let p = sqlite3_column_text(stmt, i) else { return nil }
        // By its length, as it was bound: a NUL inside the text is kept, not an end.
        return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, i))), as: UTF8.self)
    }
    public func blobOrNil(_ i: Int32) -> [UInt8]? { sqlite3_column_type(stmt, i) == SQLITE_NULL ? nil : blob(i) }
    public func blob(_ i: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(stmt, i))
        guard n > 0, let p = sqlite3_column_blob(stmt, i) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}

/// One SQLite connection (one per worker thread). Statements are prepared once and cached.
/// Only parameterised SQL: values are always bound, never spliced into the text.
///
/// Reads outside a transaction run on the connection's own handle. Writes (`transaction`, and
/// `run` outside one) take the file's write lock and run on the file's one writer handle
/// (`WriteGate`): writes are serialised anyway, and a handle that only this process's writers
/// use keeps its page cache across transactions, where a handle that another connection wrote
/// behind must drop its cache and read every page again.
public final class SQLiteConnection {
    private let own: SQLiteHandle
    /// `own`, or the file's writer while this connection holds the write lock.
    private var active: SQLiteHandle
    var db: OpaquePointer { active.db }
    public let path: String
    private let nesting = TransactionNesting()
    private var lastRowID: Int64 = 0
    let gate: WriteGate?
    /// Inside `sharedRead`: reads outside a transaction join one read transaction on `own`.
    private var sharing = false
    /// The shared read transaction is open (`BEGIN` ran on `own`).
    private var readOpen = false
    /// Inside `writing`: statements are writes (or reads of a write transaction).
    private var inWrite = false

    public init(path: String, busyTimeoutMillis: Int32 = 5000) throws {
        own = try SQLiteHandle(path: path, busyTimeoutMillis: busyTimeoutMillis, writer: false)
        active = own
        self.path = path
        gate = SQLiteConnection.oneRequest ? nil : WriteGate.for(path: path, busyTimeoutMillis: busyTimeoutMillis)
        gate?.attach()
    }

    deinit { gate?.detach() }

    func check(_ rc: Int32, _ sql: String?) throws { try active.check(rc, sql) }

    /// Runs SQL text with no parameters (schema, pragmas). Several statements allowed. A pragma
    /// outside a transaction is also applied to the file's writer (e.g. `seed`'s larger cache).
    public func execute(_ sql: String) throws {
        endSharedRead()
        try active.execute(sql)
        if !nesting.isOpen, gate != nil, sql.hasPrefix("PRAGMA") {
            try writing { try active.execute(sql) }
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer { try active.prepared(sql) }

    private func bind(_ stmt: OpaquePointer, _ values: [any SQLBindable], sql: String) throws {
        precondition(Int(sqlite3_bind_parameter_count(stmt)) == values.count, "parameter count mismatch in \(sql)")
        for (i, v) in values.enumerated() {
            let idx = Int32(i + 1)
            let rc: Int32
            switch v.sqlValue {
            case .null: rc = sqlite3_bind_null(stmt, idx)
            case let .int(n): rc = sqlite3_bind_int64(stmt, idx, n)
            case let .text(s):
                try StoreText.check(s)
                // Bound by its byte length: with -1 SQLite would stop at a NUL, and `"victim\u{0}x"`
                // would then name `victim`'s row.
                var text = s
                rc = text.withUTF8 { u in
                    u.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text64(stmt, idx, $0.baseAddress ?? gh_sqlite_empty_text(), sqlite3_uint64($0.count),
                                            gh_sqlite_transient(), UInt8(SQLITE_UTF8))
                    }
                }
            case let .blob(b):
                rc = b.withUnsafeBytes { sqlite3_bind_blob(stmt, idx, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(b.count), gh_sqlite_transient()) }
            }
            try check(rc, sql)
        }
    }

    /// Runs a statement, calling `each` for every row.
    public func query(_ sql: String, _ values: [any SQLBindable] = [], _ each: (SQLRow) throws -> Void) throws {
        if sharing, !readOpen, !inWrite, !nesting.isOpen {
            try own.execute("BEGIN")
            readOpen = true
        }
        let stmt = try prepared(sql)
        defer { sqlite3_reset(stmt); sqlite3_clear_bindings(stmt) }
        try bind(stmt, values, sql: sql)
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_ROW { try each(SQLRow(backing: .sqlite(SQLiteRow(stmt: stmt)))); continue }
            if rc == SQLITE_DONE { break }
            try check(rc, sql)
        }
    }

    /// Runs a write; returns the number of rows changed. Outside a transaction it takes the
    /// process's write lock for its duration.
    @discardableResult
    public func run(_ sql: String, _ values: [any SQLBindable] = []) throws -> Int {
        if !nesting.isOpen { return try writing { try write(sql, values) } }
        return try write(sql, values)
    }

    private func write(_ sql: String, _ values: [any SQLBindable]) throws -> Int {
        try query(sql, values) { _ in }
        lastRowID = sqlite3_last_insert_rowid(db)
        return Int(sqlite3_changes(db))
    }

    /// The rowid of this connection's last `run` INSERT.
    public var lastInsertRowID: Int64 { lastRowID }

    /// Whether a transaction is open on this connection.
    public var inTransaction: Bool { nesting.isOpen }

    /// `BEGIN IMMEDIATE` … `COMMIT`, rolled back on any error; nested calls join the outer one.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if nesting.isOpen { return try nesting.join(body) }
        return try writing {
            try nesting.outermost(begin: { try query("BEGIN IMMEDIATE", []) { _ in } }, commit: { try query("COMMIT", []) { _ in } },
                                  rollback: { try? query("ROLLBACK", []) { _ in } }, body)
        }
    }


    /// Runs `body` holding the file's write lock. A checkpoint that the commit made due goes to
    /// the file's checkpoint thread (or, if that cannot start, runs here after the lock is released).
    private func writing<T>(_ body: () throws -> T) throws -> T {
        endSharedRead()
        inWrite = true
        defer { inWrite = false }
        guard let gate else { return try body() }
        gate.lock.lock()
        let writer: SQLiteHandle
        do { writer = try gate.writer() } catch { gate.lock.unlock(); throw error }
        writer.walFrames = nil
        active = writer
        var due = false
        defer { if due { gate.checkpoint(own: own) } }
        defer {
            active = own
            if let frames = writer.walFrames { due = gate.committed(frames: frames) }
            gate.lock.unlock()
        }
        return try body()
    }

    /// Runs `body` with its reads outside transactions sharing one read transaction (one
    /// snapshot; SQLite's file and WAL read locks taken once instead of once per statement). A
    /// write ends it, so it never hides this process's own writes: the next read begins a new one.
    /// For work that reads many times and writes rarely, such as one CGI request.
    public func sharedRead<T>(_ body: () throws -> T) rethrows -> T {
        guard !sharing else { return try body() }
        sharing = true
        defer {
            endSharedRead()
            sharing = false
        }
        return try body()
    }

    private func endSharedRead() {
        guard readOpen else { return }
        readOpen = false
        // A read transaction has nothing to commit; after an I/O error SQLite may have ended it.
        _ = try? own.execute("COMMIT")
    }
}

extension SQLiteConnection: SQLDatabase {
    public var dialect: SQLDialect { SQLDialect(kind: .sqlite) }

    /// Outside a transaction it takes the process's write lock, as `run` does.
    public func writeQuery(_ sql: String, _ values: [any SQLBindable], _ each: (SQLRow) throws -> Void) throws {
        if !nesting.isOpen { return try writing { try query(sql, values, each) } }
        try query(sql, values, each)
    }

    public func script(_ sql: String) throws { try execute(sql) }

    public func uniqueViolation(_ error: any Error) -> String? {
        guard let e = error as? SQLiteError, e.isConstraint else { return nil }
        return e.message
    }
}

extension SQLiteConnection {
    /// Stepping through the statement's rows as they come.
    public func eachBatch<T>(_ sql: String, size: Int, _ map: (SQLRow) throws -> T, _ body: ([T]) throws -> Void) throws {
        var pending: [T] = []
        try query(sql, []) { r in
            pending.append(try map(r))
            if pending.count == size { try body(pending); pending = [] }
        }
        if !pending.isEmpty { try body(pending) }
    }
}

extension SQLiteError: StoreFailure {
    /// `SQLITE_FULL`: the disk (or the process's file-size limit) has no room for the write.
    public var isOutOfSpace: Bool { code & 0xFF == SQLITE_FULL }
    /// An embedded file is never unreachable.
    public var isUnavailable: Bool { false }
}
