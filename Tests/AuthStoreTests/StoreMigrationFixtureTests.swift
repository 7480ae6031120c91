import AuthEngine
import AuthStore
import Foundation
import Testing

/// Databases a release made (`Fixtures/`: schema 14, every table with rows, written by
/// `StoreFixtureWriter` through that release's store), opened by this build: each migrates in
/// place and keeps every row, read back through the ports.
@Suite("Store fixtures migrate in place")
struct StoreMigrationFixtureTests {
    static let fixtures = String(#filePath.dropLast("StoreMigrationFixtureTests.swift".count)) + "Fixtures/"

    @Test("a SQLite file of schema 14 migrates and keeps every row")
    func sqlite() throws {
        let path = NSTemporaryDirectory() + "gatehouse-fixture-\(UInt64.random(in: 0...UInt64.max)).db"
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        try FileManager.default.copyItem(atPath: Self.fixtures + "store-sqlite.db", toPath: path)
        let store = try SQLStore(path: path)
        #expect(try store.probe() == Schema.version)
        try StoreFixture.check(store)
        // Opening it again finds nothing to do.
        #expect(try SQLStore(path: path).probe() == Schema.version)
    }

    @Test("a PostgreSQL database of schema 14 migrates and keeps every row", .enabled(if: Backend.postgresURL != nil))
    func postgresql() throws {
        let db = try TestDatabase(.postgresql)
        let dump = try String(contentsOfFile: Self.fixtures + "store-postgresql.sql", encoding: .utf8)
        try PostgreSQLConnection(url: db.location).script(dump)
        let store = try SQLStore(url: db.location)
        #expect(try store.probe() == Schema.version)
        try StoreFixture.check(store)
        #expect(try SQLStore(url: db.location).probe() == Schema.version)
    }
}
