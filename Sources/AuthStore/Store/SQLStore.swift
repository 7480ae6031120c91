public import AuthEngine

/// The store: every port of the engine over one SQL connection, written once for SQLite and
/// PostgreSQL (`SQLDatabase`, `SQLDialect` for what they spell differently). One instance per
/// worker thread, each owning its connection. Every single-use consumption and every counter is
/// one conditional statement (or one transaction), so workers and instances never race between a
/// read and a write. One file per feature (`SQLStore+*.swift`).
public final class SQLStore: Transactional, HealthProbe {
    public let db: any SQLDatabase
    /// Secrets already read: they are inserted once (first writer wins) and never change.
    var secretCache: [String: [UInt8]] = [:]
    /// The `before` of this connection's last phone-record purge.
    var lastPhonePurge: Millis?
    /// The accounts the open transaction has read: only those may be written back.
    let accountRows = AccountRowGuard()

    init(db: any SQLDatabase) { self.db = db }

    /// The SQLite connection, for what only SQLite has (`sharedRead`); nil on PostgreSQL.
    public var sqlite: SQLiteConnection? { db as? SQLiteConnection }

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if db.inTransaction { return try body() }
        // Each attempt (PostgreSQL runs the body again after a serialization failure) starts afresh.
        return try db.transaction {
            accountRows.begin()
            return try body()
        }
    }

    public func probe() throws -> Int { try Schema.recordedVersion(db) }

    /// Inserts `record` as a row of `C`'s table.
    func insert<C: RecordColumns>(_ record: C.Record, _: C.Type) throws {
        try db.run(C.table.insert, C.values(record))
    }

    /// The record of `C`'s table whose primary key is `key`.
    func find<C: RecordColumns>(_: C.Type, _ key: any SQLBindable...) throws -> C.Record? {
        try db.first(C.table.selectByKey, key, C.read)
    }

    /// `(?, ?), (?, ?)`: `rows` groups of `columns` placeholders, for a statement over several rows
    /// (the text depends on the counts only, never on a value).
    static func rowPlaceholders(_ rows: Int, _ columns: Int) -> String {
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
        return Array(repeating: row, count: rows).joined(separator: ", ")
    }
}

extension SQLStore {
    /// The store on a SQLite file (one process, or several on one machine: WAL): opens (creating
    /// if needed) the database at `path` and, with `migrate`, brings its schema up to date.
    public convenience init(path: String, migrate: Bool = true, now: Millis? = nil) throws {
        let db = try SQLiteConnection(path: path)
        if migrate { try Schema.migrate(db, now: now ?? SystemClock().now()) }
        self.init(db: db)
    }

    /// The store on PostgreSQL, for several instances on several machines (docs/scaling.md), at
    /// `url` (a libpq URI or `key=value` string; libpq's environment and service files
    /// apply). With `migrate` it connects at once and brings the schema up to date; without, it
    /// connects on first use, so a worker opened while the database is down answers 503 and
    /// connects once it is back.
    public convenience init(url: String, migrate: Bool = true, statementTimeoutMillis: Int = 10_000, now: Millis? = nil) throws {
        let db = try PostgreSQLConnection(url: url, statementTimeoutMillis: statementTimeoutMillis, connectNow: migrate)
        if migrate { try Schema.migrate(db, now: now ?? SystemClock().now()) }
        self.init(db: db)
    }
}
