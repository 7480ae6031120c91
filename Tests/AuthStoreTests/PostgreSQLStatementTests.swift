import AuthStore
import Foundation
import Testing

/// Prepared statements on one PostgreSQL connection (runs when `GATEHOUSE_TEST_POSTGRES_URL`
/// names a database, as `make test` does).
@Suite("PostgreSQL prepared statements")
struct PostgreSQLStatementTests {
    static let url = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    @Test("a statement the server forgot is prepared again under a name no other statement holds",
          .enabled(if: url != nil))
    func forgottenStatement() throws {
        let db = try PostgreSQLConnection(url: try #require(Self.url))
        // Lives as long as the session: still there at the end means nothing reconnected.
        try db.script("CREATE TEMP TABLE same_session (x INT)")
        #expect(try db.first("SELECT 1 + ?", [1]) { $0.int(0) } == 2)
        #expect(try db.first("SELECT 2 + ?", [1]) { $0.int(0) } == 3)
        // The server drops the first of the two only (as a pooler or a reset might).
        let first = try #require(try db.unpreparedRows("SELECT name FROM pg_prepared_statements WHERE statement LIKE 'SELECT 1 + %'") {
            $0.text(0)
        }.first)
        try db.script("DEALLOCATE \(first)")
        #expect(throws: PostgreSQLError.self) { try db.first("SELECT 1 + ?", [1]) { $0.int(0) } }
        // That use failed (26000) and forgot it; this one prepares it again, under a new name, not
        // one the server still holds (that would be refused: 42P05).
        #expect(try db.first("SELECT 1 + ?", [1]) { $0.int(0) } == 2)
        #expect(try db.first("SELECT 2 + ?", [1]) { $0.int(0) } == 3)
        #expect(try db.first("SELECT 3 + ?", [1]) { $0.int(0) } == 4)
        #expect(try db.first("SELECT count(*) FROM same_session") { $0.int(0) } == 0)
    }
}
