/// A row of either database's results, read by column position: SQLite's current statement row
/// or one row of a PostgreSQL result, valid while the callback that receives it runs. Records are
/// read through `Columns` (`Reading`), which names each column.
public struct SQLRow {
    enum Backing {
        case sqlite(SQLiteRow)
        case postgresql(PGRow)
    }
    let backing: Backing

    public func int(_ i: Int32) -> Int64 {
        switch backing { case let .sqlite(r): r.int(i); case let .postgresql(r): r.int(i) }
    }
    public func intOrNil(_ i: Int32) -> Int64? {
        switch backing { case let .sqlite(r): r.intOrNil(i); case let .postgresql(r): r.intOrNil(i) }
    }
    public func bool(_ i: Int32) -> Bool { int(i) != 0 }
    public func text(_ i: Int32) -> String { textOrNil(i) ?? "" }
    public func textOrNil(_ i: Int32) -> String? {
        switch backing { case let .sqlite(r): r.textOrNil(i); case let .postgresql(r): r.textOrNil(i) }
    }
    public func blob(_ i: Int32) -> [UInt8] { blobOrNil(i) ?? [] }
    public func blobOrNil(_ i: Int32) -> [UInt8]? {
        switch backing { case let .sqlite(r): r.blobOrNil(i); case let .postgresql(r): r.blobOrNil(i) }
    }
}

/// One connection to a SQL database, as the store uses it: every statement is SQL text with `?`
/// placeholders and bound values (never values spliced into the text), written once for both
/// databases; `dialect` holds the few forms that differ. `SQLStore` is written against this.
public protocol SQLDatabase: AnyObject {
    var dialect: SQLDialect { get }
    /// Whether a transaction is open on this connection.
    var inTransaction: Bool { get }
    /// Runs a statement that only reads, handing each row to `each`.
    func query(_ sql: String, _ values: [any SQLBindable], _ each: (SQLRow) throws -> Void) throws
    /// A statement that writes and returns rows (`RETURNING`), run where this connection's writes run.
    func writeQuery(_ sql: String, _ values: [any SQLBindable], _ each: (SQLRow) throws -> Void) throws
    /// A write; the number of rows it changed.
    @discardableResult func run(_ sql: String, _ values: [any SQLBindable]) throws -> Int
    /// Statements without parameters (schema changes), several at once.
    func script(_ sql: String) throws
    /// `BEGIN` … `COMMIT`, rolled back on any error; nested calls join the outer one.
    func transaction<T>(_ body: () throws -> T) throws -> T
    /// Every row of a read, mapped, handed to `body` in batches of `size` (a table of any size in
    /// bounded memory: SQLite steps through it, PostgreSQL fetches from a cursor).
    func eachBatch<T>(_ sql: String, size: Int, _ map: (SQLRow) throws -> T, _ body: ([T]) throws -> Void) throws
    /// The database's message for a uniqueness violation (it names the index or the columns), nil
    /// for any other error.
    func uniqueViolation(_ error: any Error) -> String?
}

extension SQLDatabase {
    /// A write without parameters.
    @discardableResult
    public func run(_ sql: String) throws -> Int { try run(sql, []) }

    /// The rows of a statement that only reads, each mapped.
    public func rows<T>(_ sql: String, _ values: [any SQLBindable] = [], _ map: (SQLRow) throws -> T) throws -> [T] {
        var out: [T] = []
        try query(sql, values) { out.append(try map($0)) }
        return out
    }

    public func first<T>(_ sql: String, _ values: [any SQLBindable] = [], _ map: (SQLRow) throws -> T) throws -> T? {
        var found: T?
        try query(sql, values) { if found == nil { found = try map($0) } }
        return found
    }

    func writeFirst<T>(_ sql: String, _ values: [any SQLBindable] = [], _ map: (SQLRow) throws -> T) throws -> T? {
        var found: T?
        try writeQuery(sql, values) { if found == nil { found = try map($0) } }
        return found
    }

    func count(_ sql: String, _ values: [any SQLBindable] = []) throws -> Int {
        Int(try first(sql, values) { $0.int(0) } ?? 0)
    }
}

/// What the two databases spell differently. Everything else in the store's SQL is the same text
/// on both (SQLite ≥ 3.35: `ON CONFLICT … DO`, `RETURNING`).
public struct SQLDialect: Sendable {
    public enum Kind: String, Sendable { case sqlite, postgresql }
    public let kind: Kind

    /// Appended to a read of a row the transaction will write back. PostgreSQL (READ COMMITTED)
    /// locks the row until the transaction ends; SQLite's `BEGIN IMMEDIATE` already holds the
    /// file's write lock.
    var lockRows: String { kind == .postgresql ? " FOR UPDATE" : "" }
    /// Appended to a subquery choosing a row to claim: PostgreSQL skips a row another instance is
    /// claiming instead of waiting for it; SQLite's write lock serialises the claim.
    var skipLocked: String { kind == .postgresql ? " FOR UPDATE SKIP LOCKED" : "" }
    /// Appended to a text column compared or sorted: byte order whatever the database's locale
    /// (SQLite's `BINARY` is already byte order).
    var byteOrder: String { kind == .postgresql ? " COLLATE \"C\"" : "" }
    /// Whether an `INSERT … RETURNING` costs no more than the statement and a look-up. SQLite 3.40
    /// gathers RETURNING rows in an ephemeral table (a counter's upsert: 34.7 k instructions with
    /// it, 18.2 k with a second look-up, BENCHMARKS.md); PostgreSQL saves a round trip.
    var returningIsCheap: Bool { kind == .postgresql }
    /// Whether each statement is a round trip to a server, so that one statement for several rows
    /// saves time (PostgreSQL); SQLite runs in the process, where one statement a row is cheapest.
    var statementIsRoundTrip: Bool { kind == .postgresql }

    /// A condition that holds when the JSON array in `column` has an element whose `field`s equal
    /// the bound values, in order (one `?` per field).
    func jsonArrayHas(_ column: String, fields: [String]) -> String {
        switch kind {
        case .sqlite:
            let tests = fields.map { "json_extract(value, '$.\($0)') = ?" }.joined(separator: " AND ")
            return "EXISTS (SELECT 1 FROM json_each(\(column)) WHERE \(tests))"
        case .postgresql:
            let tests = fields.map { "e.value->>'\($0)' = ?" }.joined(separator: " AND ")
            return "EXISTS (SELECT 1 FROM jsonb_array_elements(\(column)::jsonb) AS e(value) WHERE \(tests))"
        }
    }

    /// Taken inside the migrating transaction: instances starting together migrate one after the
    /// other (PostgreSQL's advisory lock, released at commit; SQLite's write lock is already held).
    var migrationLock: String? {
        kind == .postgresql ? "SELECT pg_advisory_xact_lock(\(0x6761_7465_686f_7573 as Int64))" : nil  // "gatehous" in ASCII
    }

    /// After rows were inserted with their ids given: the statement that moves the table's id
    /// counter past them (SQLite's rowid and AUTOINCREMENT follow the largest id by themselves).
    func moveIdentity(table: String, column: String) -> String? {
        guard kind == .postgresql else { return nil }
        return "SELECT setval(pg_get_serial_sequence('\(table)', '\(column)'), COALESCE(MAX(\(column)), 0) + 1, false) FROM \(table)"
    }

    /// A query with one row and one boolean-ish column: whether `table` exists (one `?`: its name).
    var tableExists: String {
        switch kind {
        case .sqlite: return "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
        case .postgresql: return "SELECT CASE WHEN to_regclass(?) IS NULL THEN 0 ELSE 1 END"
        }
    }
}

/// A connection's transaction nesting: a nested `transaction` joins the open one; the outermost
/// begins, commits, and rolls back on any error. Both connections keep one.
final class TransactionNesting {
    private var depth = 0
    var isOpen: Bool { depth > 0 }

    /// Runs `body` inside the open transaction.
    func join<T>(_ body: () throws -> T) rethrows -> T {
        depth += 1
        defer { depth -= 1 }
        return try body()
    }

    /// `begin`, `body`, `commit`; `rollback` (whose own failure is not reported) on any error.
    func outermost<T>(begin: () throws -> Void, commit: () throws -> Void, rollback: () -> Void, _ body: () throws -> T) throws -> T {
        try begin()
        depth = 1
        do {
            let result = try body()
            depth = 0
            try commit()
            return result
        } catch {
            depth = 0
            rollback()
            throw error
        }
    }
}
