@testable import AuthStore
import Testing

/// `gatehouse store copy` copies what the schema holds: its table list is the migrated schema's,
/// column for column, at the latest version of both stores.
@Suite("Store copy covers the schema")
struct StoreCopyTests {
    @Test("the copy's version is both stores' latest, and its tables and columns are SQLite's, exactly")
    func tablesMatchTheSchema() throws {
        let latest = Migrations.all.map(\.version).max() ?? 0
        #expect(StoreCopy.schemaVersion == latest)
        #expect(PostgreSQLMigrations.latest == latest)
        let store = try SQLiteStore(path: ":memory:")
        let tables = try store.db.rows("""
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations' ORDER BY name
            """) { $0.text(0) }
        #expect(tables.sorted() == StoreCopy.tables.map(\.name).sorted())
        for (name, columns) in StoreCopy.tables {
            let actual = try store.db.rows("SELECT name FROM pragma_table_info(?)", [name]) { $0.text(0) }
            #expect(actual.sorted() == columns.map(\.0).sorted(), "table \(name)")
        }
    }
}
