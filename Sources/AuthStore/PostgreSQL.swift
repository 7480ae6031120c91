public import AuthEngine
import CPostgreSQL
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL failure: the server's SQLSTATE and message, or a connection that is gone.
public struct PostgreSQLError: Error, CustomStringConvertible, StoreFailure {
    /// Five characters from the server; empty when no server answered (connection failures).
    public let sqlState: String
    public let message: String
    public let sql: String?
    public var description: String {
        "PostgreSQL error" + (sqlState.isEmpty ? "" : " \(sqlState)") + ": \(message)" + (sql.map { " in \($0)" } ?? "")
    }

    /// `disk_full`: nothing can be written until space is freed.
    public var isOutOfSpace: Bool { sqlState == "53100" }
    /// The database cannot be reached or is going away (connection exceptions, shutdown, start-up):
    /// the request may succeed once it is back, so it is answered 503.
    public var isUnavailable: Bool {
        sqlState.isEmpty || sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(sqlState)
    }
    /// Serialization failure or deadlock: the whole transaction may be run again.
    public var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
    public var isUniqueViolation: Bool { sqlState == "23505" }
}

/// One row of a PostgreSQL result, read by column index, with the accessors of SQLite's `Row`.
/// Results come in binary form; each column is read by its type (BIGINT, INTEGER, SMALLINT,
/// BOOLEAN, TEXT/VARCHAR, BYTEA).
struct PGRow {
    let result: OpaquePointer
    let row: Int32

    static let int8: Oid = 20, int4: Oid = 23, int2: Oid = 21, bool: Oid = 16, bytea: Oid = 17

    func isNull(_ i: Int32) -> Bool { gh_pq_getisnull(result, row, i) != 0 }

    func bytes(_ i: Int32) -> UnsafeRawBufferPointer {
        guard let p = gh_pq_getvalue(result, row, i) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: Int(gh_pq_getlength(result, row, i)))
    }

    public func intOrNil(_ i: Int32) -> Int64? {
        guard !isNull(i) else { return nil }
        let b = bytes(i)
        var v: Int64 = 0
        switch gh_pq_ftype(result, i) {
        case PGRow.int8, PGRow.int4, PGRow.int2, PGRow.bool:
            // Big-endian two's complement of the column's width.
            guard let first = b.first else { return 0 }
            v = first & 0x80 != 0 ? -1 : 0
            for byte in b { v = (v << 8) | Int64(byte) }
            return v
        default:
            // Text of a number (a column of another type read as an integer).
            return Int64(String(decoding: b, as: UTF8.self))
        }
    }
    public func int(_ i: Int32) -> Int64 { intOrNil(i) ?? 0 }
    public func bool(_ i: Int32) -> Bool { int(i) != 0 }
    public func textOrNil(_ i: Int32) -> String? { isNull(i) ? nil : String(decoding: bytes(i), as: UTF8.self) }
    public func text(_ i: Int32) -> String { textOrNil(i) ?? "" }
    public func blob(_ i: Int32) -> [UInt8] { isNull(i) ? [] : Array(bytes(i)) }
    public func blobOrNil(_ i: Int32) -> [UInt8]? { isNull(i) ? nil : Array(bytes(i)) }
}

/// One PostgreSQL connection (one per worker thread), re-opened after it is lost (outside a
/// transaction). libpq itself is loaded by the first connection (`gh_pq_load`). Only parameterised SQL: values are always bound, never spliced
/// into the text. The SQL is written with `?` placeholders, as for SQLite, and numbered (`$1`…)
/// here; each text is prepared once per connection. Integers are sent as text with type BIGINT,
/// byte strings in binary as BYTEA, text with its type left to the server; results come back in
/// binary.
public final class PostgreSQLConnection {
    public let url: String
    /// Every statement's limit on the server (`statement_timeout`).
    public let statementTimeoutMillis: Int
    private var conn: OpaquePointer?
    private var statements: [String: String] = [:]
    /// The number in the next statement's name. Never reused on a connection: a statement
    /// forgotten here (the server said it no longer knows it) may still exist on the server, and
    /// a name counted from `statements.count` could then be taken twice.
    private var statementNumber = 0
    private let nesting = TransactionNesting()
    /// How many times a transaction that hit a serialization failure or deadlock is run again.
    public static let transactionAttempts = 3

    public init(url: String, statementTimeoutMillis: Int = 10_000, connectNow: Bool = true) throws {
        self.url = url
        self.statementTimeoutMillis = statementTimeoutMillis
        if connectNow { try connect() }
    }

    deinit { if let conn { gh_pq_finish(conn) } }

    /// The server's version (`server_version_num`, e.g. 150018), for `config check`.
    public var serverVersion: Int {
        guard let conn else { return 0 }
        return Int(gh_pq_server_version(conn))
    }

    func connect() throws {
        guard gh_pq_load() != 0 else { throw PostgreSQLError(sqlState: "", message: String(cString: gh_pq_load_error()), sql: nil) }
        if let conn { gh_pq_finish(conn) }
        conn = nil
        statements = [:]
        statementNumber = 0
        guard let c = gh_pq_connectdb(url) else { throw PostgreSQLError(sqlState: "", message: "out of memory", sql: nil) }
        guard gh_pq_status(c) == CONNECTION_OK else {
            let message = PostgreSQLConnection.trimmed(gh_pq_error_message(c))
            gh_pq_finish(c)
            throw PostgreSQLError(sqlState: "", message: "cannot connect: \(message)", sql: nil)
        }
        conn = c
        _ = try query("SELECT set_config('statement_timeout', ?, false), set_config('client_min_messages', 'warning', false)",
                      [String(statementTimeoutMillis)]) { _ in }
    }

    /// The live connection; a lost one is re-opened, unless a transaction was open on it (its
    /// work is gone: the caller's transaction fails and may be retried as a whole).
    func live() throws -> OpaquePointer {
        if let conn, gh_pq_status(conn) == CONNECTION_OK { return conn }
        guard !nesting.isOpen else { throw PostgreSQLError(sqlState: "", message: "connection lost in a transaction", sql: nil) }
        try connect()
        guard let conn else { throw PostgreSQLError(sqlState: "", message: "no connection", sql: nil) }
        return conn
    }

    static func trimmed(_ p: UnsafePointer<CChar>?) -> String {
        guard let p else { return "" }
        var s = String(cString: p)
        while s.last == "\n" || s.last == " " { s.removeLast() }
        return s
    }

    /// `?` → `$1`, `$2`…, outside quotes and comments-free SQL (the store's own texts).
    static func numbered(_ sql: String) -> String {
        var out = ""
        var n = 0
        var quote: Character? = nil
        for c in sql {
            if let q = quote {
                if c == q { quote = nil }
                out.append(c)
            } else if c == "'" || c == "\"" {
                quote = c
                out.append(c)
            } else if c == "?" {
                n += 1
                out += "$\(n)"
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// Runs one statement and hands each row to `each`.
    public func query(_ sql: String, _ values: [any SQLBindable] = [], _ each: (SQLRow) throws -> Void) throws {
        let result = try execute(sql, values)
        defer { gh_pq_clear(result) }
        let rows = gh_pq_ntuples(result)
        var r: Int32 = 0
        while r < rows {
            try each(SQLRow(backing: .postgresql(PGRow(result: result, row: r))))
            r += 1
        }
    }

    /// Runs a write; returns the number of rows it changed.
    @discardableResult
    public func run(_ sql: String, _ values: [any SQLBindable] = []) throws -> Int {
        let result = try execute(sql, values)
        defer { gh_pq_clear(result) }
        guard let tuples = gh_pq_cmd_tuples(result) else { return 0 }
        return Int(String(cString: tuples)) ?? 0
    }

    /// Rows of one fixed statement that cannot be prepared (`FETCH` from a cursor); no parameters.
    public func unpreparedRows<T>(_ sql: String, _ map: (SQLRow) throws -> T) throws -> [T] {
        let c = try live()
        guard let result = gh_pq_exec_binary(c, sql) else { throw lostError(sql) }
        defer { gh_pq_clear(result) }
        try check(result, sql)
        var out: [T] = []
        var r: Int32 = 0
        while r < gh_pq_ntuples(result) {
            out.append(try map(SQLRow(backing: .postgresql(PGRow(result: result, row: r)))))
            r += 1
        }
        return out
    }

    /// A fixed script of several statements (migrations); no parameters.
    public func script(_ sql: String) throws {
        let c = try live()
        guard let result = gh_pq_exec(c, sql) else { throw lostError(sql) }
        defer { gh_pq_clear(result) }
        try check(result, sql)
    }

    func lostError(_ sql: String?) -> PostgreSQLError {
        PostgreSQLError(sqlState: "", message: PostgreSQLConnection.trimmed(conn.map { gh_pq_error_message($0) } ?? nil), sql: sql)
    }

    func check(_ result: OpaquePointer, _ sql: String?) throws {
        switch gh_pq_result_status(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default:
            let state = gh_pq_result_error_field(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = PostgreSQLConnection.trimmed(gh_pq_result_error_message(result))
            throw PostgreSQLError(sqlState: state, message: message, sql: sql)
        }
    }

    /// Prepares `sql` on first use on this connection, then executes it with `values`.
    func execute(_ sql: String, _ values: [any SQLBindable]) throws -> OpaquePointer {
        let c = try live()
        let bound = values.map(\.sqlValue)
        for case let .text(t) in bound { try StoreText.check(t) }
        let name: String
        if let known = statements[sql] {
            name = known
        } else {
            statementNumber += 1
            name = "g\(statementNumber)"
            let types: [Oid] = bound.map { v in
                switch v {
                case .int: return PGRow.int8
                case .blob: return PGRow.bytea
                case .text, .null: return 0
                }
            }
            guard let prepared = gh_pq_prepare(c, name, PostgreSQLConnection.numbered(sql), Int32(types.count), types) else {
                throw lostError(sql)
            }
            defer { gh_pq_clear(prepared) }
            try check(prepared, sql)
            statements[sql] = name
        }
        // Every value's bytes in one buffer (text NUL-terminated), pointers taken inside it.
        var buffer: [UInt8] = []
        var spans: [(offset: Int, length: Int, binary: Bool)?] = []
        for v in bound {
            switch v {
            case .null: spans.append(nil)
            case let .int(n):
                let s = Array(String(n).utf8)
                spans.append((buffer.count, s.count, false)); buffer += s; buffer.append(0)
            case let .text(t):
                let s = Array(t.utf8)
                spans.append((buffer.count, s.count, false)); buffer += s; buffer.append(0)
            case let .blob(b):
                spans.append((buffer.count, b.count, true)); buffer += b; buffer.append(0)
            }
        }
        let result: OpaquePointer? = buffer.withUnsafeBufferPointer { buf in
            let base = UnsafeRawPointer(buf.baseAddress)
            let pointers: [UnsafePointer<CChar>?] = spans.map { span in
                guard let span, let base else { return nil }
                return (base + span.offset).assumingMemoryBound(to: CChar.self)
            }
            let lengths = spans.map { Int32($0?.length ?? 0) }
            let formats = spans.map { Int32($0?.binary == true ? 1 : 0) }
            return gh_pq_exec_prepared(c, name, Int32(spans.count), pointers, lengths, formats, 1)
        }
        guard let result else { throw lostError(sql) }
        do { try check(result, sql) } catch {
            gh_pq_clear(result)
            // A statement the server no longer knows (a pooler or a reset dropped it) is prepared again next time.
            if let e = error as? PostgreSQLError, e.sqlState == "26000" { statements[sql] = nil }
            throw error
        }
        return result
    }

    /// Whether a transaction is open on this connection.
    public var inTransaction: Bool { nesting.isOpen }

    /// `BEGIN` … `COMMIT` (READ COMMITTED: every flow's writes are conditional on the rows they
    /// change), rolled back on any error; nested calls join the outer one. A serialization
    /// failure or deadlock runs the whole body again, at most `transactionAttempts` times.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if nesting.isOpen { return try nesting.join(body) }
        var attempt = 1
        while true {
            do {
                return try nesting.outermost(begin: { try script("BEGIN") }, commit: { try script("COMMIT") }, rollback: {
                    if let conn, gh_pq_status(conn) == CONNECTION_OK { try? script("ROLLBACK") }
                }, body)
            } catch let e as PostgreSQLError where e.isRetryable && attempt < PostgreSQLConnection.transactionAttempts {
                attempt += 1
            }
        }
    }

}

extension PostgreSQLConnection: SQLDatabase {
    public var dialect: SQLDialect { SQLDialect(kind: .postgresql) }

    public func writeQuery(_ sql: String, _ values: [any SQLBindable], _ each: (SQLRow) throws -> Void) throws {
        try query(sql, values, each)
    }

    public func uniqueViolation(_ error: any Error) -> String? {
        guard let e = error as? PostgreSQLError, e.isUniqueViolation else { return nil }
        return e.message
    }
}

extension PostgreSQLConnection {
    /// Through a cursor, in its own transaction (a cursor lives in one).
    public func eachBatch<T>(_ sql: String, size: Int, _ map: (SQLRow) throws -> T, _ body: ([T]) throws -> Void) throws {
        try transaction {
            try script("DECLARE gatehouse_batches NO SCROLL CURSOR FOR \(sql)")
            while true {
                let rows = try unpreparedRows("FETCH \(size) FROM gatehouse_batches", map)
                if !rows.isEmpty { try body(rows) }
                if rows.count < size { break }
            }
            try script("CLOSE gatehouse_batches")
        }
    }
}
