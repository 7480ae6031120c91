import AuthEngine
@testable import AuthStore
import Foundation
import Testing

/// The declared schema is what the databases hold: a new database made from the declarations
/// has, table for table, column for column and index for index, what a database made by the
/// release of `Fixtures/` has once migrated (on SQLite and on PostgreSQL); `store copy` and the
/// record readers use the same declarations.
@Suite("Declared schema")
struct SchemaTests {
    /// A database's tables as its catalogue describes them, in one comparable text per table.
    static func sqliteStructure(_ store: SQLStore) throws -> [String: [String]] {
        let tables = try store.db.rows("""
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name
            """, []) { $0.text(0) }
        var out: [String: [String]] = [:]
        for t in tables {
            // A primary key column is NOT NULL whether or not its declaration says so (WITHOUT ROWID).
            var lines = try store.db.rows("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", [t]) {
                "column \($0.text(0)) \($0.text(1)) notnull=\($0.int(2) != 0 || $0.int(4) != 0) default=\($0.textOrNil(3) ?? "-") pk=\($0.int(4))"
            }
            lines += try store.db.rows("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [t]) {
                "index " + $0.text(0).split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
                    .replacingOccurrences(of: " (", with: "(")
            }
            out[t] = lines.sorted()
        }
        return out
    }

    static func postgresqlStructure(_ store: SQLStore) throws -> [String: [String]] {
        let schema = try #require(try store.db.first("SELECT current_schema()", []) { $0.text(0) })
        var out: [String: [String]] = [:]
        try store.db.rows("""
            SELECT table_name, column_name, data_type, is_nullable, COALESCE(column_default, '-'), is_identity
            FROM information_schema.columns WHERE table_schema = current_schema()
            """, []) { r in (r.text(0), "column \(r.text(1)) \(r.text(2)) nullable=\(r.text(3)) default=\(r.text(4)) identity=\(r.text(5))") }
            .forEach { out[$0.0, default: []].append($0.1) }
        try store.db.rows("SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = current_schema()", []) {
            ($0.text(0), "index " + $0.text(1).replacingOccurrences(of: schema + ".", with: ""))
        }.forEach { out[$0.0, default: []].append($0.1) }
        return out.mapValues { $0.sorted() }
    }

    @Test("the declared tables are the database's tables, and their columns")
    func declaredTables() throws {
        let store = try SQLStore(path: ":memory:")
        let found = try Self.sqliteStructure(store)
        #expect(Set(found.keys) == Set((Schema.tables + [SchemaMigrationColumn.table]).map(\.name)))
        for t in Schema.tables {
            #expect(found[t.name]?.filter { $0.hasPrefix("column ") }.count == t.columns.count, "\(t.name)")
            #expect(found[t.name]?.filter { $0.hasPrefix("index ") }.count == t.indexes.count, "\(t.name)")
        }
    }

    @Test("SQLite: a new file and the schema-14 fixture once migrated are the same, table for table")
    func sqliteMatchesTheFixture() throws {
        let path = NSTemporaryDirectory() + "gatehouse-schema-\(UInt64.random(in: 0...UInt64.max)).db"
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        try FileManager.default.copyItem(atPath: StoreMigrationFixtureTests.fixtures + "store-sqlite.db", toPath: path)
        let migrated = try Self.sqliteStructure(try SQLStore(path: path))
        let fresh = try Self.sqliteStructure(try SQLStore(path: ":memory:"))
        #expect(fresh.keys.sorted() == migrated.keys.sorted())
        for (table, lines) in fresh { #expect(lines == migrated[table] ?? [], "\(table)") }
    }

    @Test("PostgreSQL: a new database and the schema-14 fixture once migrated are the same, table for table",
          .enabled(if: Backend.postgresURL != nil))
    func postgresqlMatchesTheFixture() throws {
        let old = try TestDatabase(.postgresql)
        try PostgreSQLConnection(url: old.location).script(
            try String(contentsOfFile: StoreMigrationFixtureTests.fixtures + "store-postgresql.sql", encoding: .utf8))
        let migrated = try Self.postgresqlStructure(try SQLStore(url: old.location))
        let fresh = try Self.postgresqlStructure(try SQLStore(url: try TestDatabase(.postgresql).location))
        #expect(fresh.keys.sorted() == migrated.keys.sorted())
        for (table, lines) in fresh { #expect(lines == migrated[table] ?? [], "\(table)") }
    }

    @Test("a value a column does not allow is refused, naming the column")
    func unknownValues() throws {
        let store = try SQLStore(path: ":memory:")
        try store.db.run("""
            INSERT INTO outbox (project_id, channel, recipient, body, next_attempt_at, created_at) VALUES ('p', 'carrier-pigeon', 'x', 'b', 0, 0)
            """, [])
        #expect { try store.lease(id: 1, now: 0, until: 10) } throws: { error in
            "\(error)".contains("outbox.channel holds \"carrier-pigeon\"")
        }
        let error = #expect(throws: UnreadableColumn.self) { try store.outboxBacklog() }
        #expect(error?.column == "channel" && error?.table == "outbox")
        try store.db.run("INSERT INTO accounts (project_id, local_id, created_at, mfa) VALUES ('p', 'u', 0, '[{\"mfaEnrollmentId\":\"e\",\"enrolledAt\":1,\"webauthn\":{}}]')", [])
        let unknownFactor = #expect(throws: UnreadableColumn.self) { try store.account(project: "p", localID: "u") }
        #expect(unknownFactor?.column == "mfa")
    }
}

@Suite("Phone code purposes as stored")
struct PhoneCodePurposeStorageTests {
    @Test("each purpose reads back as written; stored text of no purpose is refused, naming the column")
    func roundTrip() throws {
        for p: PhoneCodePurpose in [.signIn, .enrolment(localID: "u:1"), .secondFactor(pending: [0xab, 0x01])] {
            #expect(PhoneCodePurpose(stored: p.stored) == p)
        }
        #expect(PhoneCodePurpose(stored: "signIn") == nil)
        let store = try SQLStore(path: ":memory:")
        try store.db.run("""
            INSERT INTO phone_verifications (session_hash, project_id, phone_number, code_hash, created_at, expires_at, purpose)
            VALUES (x'01', 'p', '+1', x'02', 0, 10, 'mfa-unknown:x')
            """)
        let error = #expect(throws: UnreadableColumn.self) { try store.phoneVerification(sessionHash: [1]) }
        #expect(error?.table == "phone_verifications" && error?.column == "purpose")
    }
}
