import AuthEngine
import AuthStore
import Foundation
import Testing

/// `SQLiteConnection.sharedRead`: one snapshot for the reads, never hiding the connection's own writes.
@Suite("SQLite shared read transaction")
struct SharedReadTests {
    func tempPath() -> String {
        NSTemporaryDirectory() + "gatehouse-shared-read-\(UInt64.random(in: 0...UInt64.max)).db"
    }

    func remove(_ path: String) {
        for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
    }

    @Test("reads inside share one snapshot: another connection's commit is seen only after it")
    func snapshot() throws {
        let path = tempPath()
        defer { remove(path) }
        let reader = try SQLStore(path: path)
        let writer = try SQLStore(path: path)
        try writer.insertAccount(Account(projectID: "p", localID: "u1", createdAt: 1))
        let count = "SELECT COUNT(*) FROM accounts"
        try #require(reader.sqlite).sharedRead {
            #expect(try reader.db.first(count) { $0.int(0) } == 1)
            try writer.insertAccount(Account(projectID: "p", localID: "u2", createdAt: 2))
            #expect(try reader.db.first(count) { $0.int(0) } == 1)
        }
        #expect(try reader.db.first(count) { $0.int(0) } == 2)
    }

    @Test("a write inside ends the shared read, so the reads after it see the write and later commits")
    func ownWrites() throws {
        let path = tempPath()
        defer { remove(path) }
        let store = try SQLStore(path: path)
        let other = try SQLStore(path: path)
        let count = "SELECT COUNT(*) FROM accounts"
        try #require(store.sqlite).sharedRead {
            #expect(try store.db.first(count) { $0.int(0) } == 0)
            try other.insertAccount(Account(projectID: "p", localID: "u1", createdAt: 1))
            try store.insertAccount(Account(projectID: "p", localID: "u2", createdAt: 2))
            #expect(try store.db.first(count) { $0.int(0) } == 2)
            try store.transaction { try store.insertAccount(Account(projectID: "p", localID: "u3", createdAt: 3)) }
            #expect(try store.account(project: "p", localID: "u3") != nil)
        }
        #expect(try other.db.first(count) { $0.int(0) } == 3)
    }
}
