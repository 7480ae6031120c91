import AuthEngine

/// Copies every table of one store into another (`gatehouse store copy`): SQLite → PostgreSQL
/// to move a deployment to several machines, or back. Both stores are at the same schema
/// version (each is migrated when opened). Rows move in batches of `batchSize`, each batch one
/// multi-row INSERT in its own transaction; ids are kept (an outbox row's id, an audit row's) and
/// PostgreSQL's identity counters are moved past them. The copy is verified by counting every
/// table on both sides.
public struct StoreCopy {
    /// A column and how its values are read and bound.
    enum Kind { case int, text, blob }

    /// Every table (schema version 14) with its columns, parents before nothing (no foreign keys).
    static let tables: [(name: String, columns: [(String, Kind)])] = [
        ("accounts", [("project_id", .text), ("local_id", .text), ("email", .text), ("email_verified", .int), ("phone_number", .text),
                      ("display_name", .text), ("photo_url", .text), ("password_hash", .text), ("disabled", .int),
                      ("email_link_signin", .int), ("anonymous", .int), ("custom_attributes", .text), ("created_at", .int),
                      ("last_login_at", .int), ("last_refresh_at", .int), ("valid_since", .int), ("providers", .text), ("mfa", .text)]),
        ("phone_verifications", [("session_hash", .blob), ("project_id", .text), ("phone_number", .text), ("app_id", .text),
                                 ("code_hash", .blob), ("created_at", .int), ("expires_at", .int), ("attempts", .int), ("consumed_at", .int),
                                 ("is_test", .int), ("nonce", .blob), ("superseded_at", .int), ("client_hash", .blob), ("purpose", .text)]),
        ("phone_proofs", [("proof_hash", .blob), ("project_id", .text), ("phone_number", .text), ("created_at", .int), ("expires_at", .int)]),
        ("email_links", [("code_hash", .blob), ("project_id", .text), ("request_type", .text), ("email", .text), ("local_id", .text),
                         ("continue_url", .text), ("can_handle_in_app", .int), ("ios_bundle_id", .text), ("android_package", .text),
                         ("lang", .text), ("browser_binding", .blob), ("created_at", .int), ("expires_at", .int), ("consumed_at", .int)]),
        ("refresh_tokens", [("token_hash", .blob), ("family_id", .text), ("project_id", .text), ("local_id", .text), ("provider", .text),
                            ("auth_time", .int), ("created_at", .int), ("rotated_at", .int), ("revoked_at", .int), ("second_factor", .text),
                            ("developer_claims", .text)]),
        ("sessions", [("sid_hash", .blob), ("project_id", .text), ("local_id", .text), ("provider", .text), ("created_at", .int),
                      ("last_seen_at", .int), ("expires_at", .int), ("idle_timeout_seconds", .int), ("revoked_at", .int)]),
        ("signing_keys", [("kid", .text), ("algorithm", .text), ("private_pem", .text), ("public_pem", .text), ("certificate_pem", .text),
                          ("created_at", .int), ("retired_at", .int), ("expires_at", .int)]),
        ("secrets", [("name", .text), ("value", .blob), ("created_at", .int)]),
        ("limit_counters", [("bucket", .text), ("window_start", .int), ("count", .int), ("expires_at", .int)]),
        ("outbox", [("id", .int), ("project_id", .text), ("channel", .text), ("recipient", .text), ("subject", .text), ("body", .text),
                    ("html_body", .text), ("metadata", .text), ("status", .text), ("attempts", .int), ("next_attempt_at", .int),
                    ("lease_until", .int), ("last_error", .text), ("created_at", .int), ("sent_at", .int), ("lease_token", .int)]),
        ("app_tokens", [("token_hash", .blob), ("project_id", .text), ("api_key", .text), ("app_id", .text), ("created_at", .int),
                        ("expires_at", .int)]),
        ("app_verification_replays", [("challenge_id", .blob), ("project_id", .text), ("expires_at", .int)]),
        ("audit_log", [("id", .int), ("at", .int), ("project_id", .text), ("event", .text), ("local_id", .text), ("remote_address", .text),
                       ("detail", .text), ("actor", .text), ("outcome", .text)]),
        ("sms_holds", [("project_id", .text), ("kind", .text), ("key", .text), ("held_at", .int), ("expires_at", .int), ("released_at", .int),
                       ("recent_count", .int), ("baseline_count", .int)]),
        ("mfa_pending", [("credential_hash", .blob), ("project_id", .text), ("local_id", .text), ("first_factor", .text), ("auth_time", .int),
                         ("created_at", .int), ("expires_at", .int), ("consumed_at", .int)]),
        ("ios_receipts", [("receipt_hash", .blob), ("project_id", .text), ("bundle_id", .text), ("device_token_hash", .blob), ("sandbox", .int),
                          ("secret_hash", .blob), ("created_at", .int), ("expires_at", .int), ("uses", .int)]),
    ]
    /// The schema version the table list describes; a store at another version is refused.
    public static let schemaVersion = 14

    /// One side of a copy.
    public enum Endpoint {
        case sqlite(SQLiteStore)
        case postgresql(PostgreSQLStore)

        var version: Int {
            get throws {
                switch self {
                case let .sqlite(s): return try s.probe()
                case let .postgresql(p): return try p.probe()
                }
            }
        }

        func count(_ table: String) throws -> Int {
            let sql = "SELECT COUNT(*) FROM \(table)"
            switch self {
            case let .sqlite(s): return Int(try s.db.first(sql) { $0.int(0) } ?? 0)
            case let .postgresql(p): return Int(try p.db.first(sql) { $0.int(0) } ?? 0)
            }
        }

        func run(_ sql: String, _ values: [SQLBindable]) throws {
            switch self {
            case let .sqlite(s): try s.db.run(sql, values)
            case let .postgresql(p): try p.db.run(sql, values)
            }
        }

        func transaction(_ body: () throws -> Void) throws {
            switch self {
            case let .sqlite(s): try s.transaction(body)
            case let .postgresql(p): try p.transaction(body)
            }
        }

        /// Streams every row of `table` (SQLite reads as it goes; PostgreSQL through a cursor).
        func each(_ table: String, _ columns: [(String, Kind)], batch: Int, _ body: ([[SQLValue]]) throws -> Void) throws {
            let list = columns.map(\.0).joined(separator: ", ")
            func values<R: StoreRow>(_ r: R) -> [SQLValue] {
                columns.enumerated().map { i, c in
                    let index = Int32(i)
                    switch c.1 {
                    case .int: return r.intOrNil(index).map { .int($0) } ?? .null
                    case .text: return r.textOrNil(index).map { .text($0) } ?? .null
                    case .blob: return r.textOrNil(index) == nil ? .null : .blob(r.blob(index))
                    }
                }
            }
            var pending: [[SQLValue]] = []
            switch self {
            case let .sqlite(s):
                try s.db.query("SELECT \(list) FROM \(table)") { r in
                    pending.append(values(r))
                    if pending.count == batch { try body(pending); pending = [] }
                }
            case let .postgresql(p):
                try p.db.transaction {
                    try p.db.script("DECLARE gatehouse_copy NO SCROLL CURSOR FOR SELECT \(list) FROM \(table)")
                    while true {
                        let rows = try p.db.unpreparedRows("FETCH \(batch) FROM gatehouse_copy") { values($0) }
                        if !rows.isEmpty { try body(rows) }
                        if rows.count < batch { break }
                    }
                    try p.db.script("CLOSE gatehouse_copy")
                }
            }
            if !pending.isEmpty { try body(pending) }
        }
    }

    public let from: Endpoint
    public let to: Endpoint
    public var batchSize = 500

    public init(from: Endpoint, to: Endpoint) { self.from = from; self.to = to }

    /// Rows in every table of the target (to refuse a non-empty one).
    public func targetRows() throws -> Int { try StoreCopy.tables.reduce(0) { try $0 + to.count($1.name) } }

    /// Copies every table; `replace` empties the target's tables first. Returns each table's
    /// count, checked equal on both sides (a mismatch throws).
    @discardableResult
    public func run(replace: Bool, progress: (String, Int) -> Void = { _, _ in }) throws -> [(String, Int)] {
        for side in [from, to] where try side.version != StoreCopy.schemaVersion {
            throw StoreCopyError("both stores must be at schema version \(StoreCopy.schemaVersion) (this build's); one is at \(try side.version)")
        }
        if replace { try to.transaction { for t in StoreCopy.tables { try to.run("DELETE FROM \(t.name)", []) } } }
        var counts: [(String, Int)] = []
        for table in StoreCopy.tables {
            let names = table.columns.map(\.0).joined(separator: ", ")
            let row = "(" + Array(repeating: "?", count: table.columns.count).joined(separator: ", ") + ")"
            var copied = 0
            try from.each(table.name, table.columns, batch: batchSize) { rows in
                let sql = "INSERT INTO \(table.name) (\(names)) VALUES " + Array(repeating: row, count: rows.count).joined(separator: ", ")
                try to.transaction { try to.run(sql, rows.flatMap { $0 }) }
                copied += rows.count
            }
            if case let .postgresql(p) = to, table.columns.first?.0 == "id" {
                _ = try p.db.rows("SELECT setval(pg_get_serial_sequence('\(table.name)', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM \(table.name)",
                                  []) { _ in 0 }
            }
            let (source, target) = (try from.count(table.name), try to.count(table.name))
            guard source == target, target == copied else {
                throw StoreCopyError("\(table.name): \(source) rows in the source, \(target) in the target after the copy")
            }
            progress(table.name, target)
            counts.append((table.name, target))
        }
        return counts
    }
}

public struct StoreCopyError: Error, CustomStringConvertible {
    public let description: String
    init(_ d: String) { description = d }
}
