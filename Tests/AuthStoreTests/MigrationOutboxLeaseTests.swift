import AuthEngine
import AuthStore
import Glibc
import Testing

/// Migration 10 adds the outbox's lease token to a database at version 9, keeping every message.
@Suite("Migration 10 (outbox lease token)")
struct MigrationOutboxLeaseTests {
    @Test("a version-9 outbox keeps its messages, pending, leased and sent, and leases them with tokens")
    func migrateNine() throws {
        let path = "/tmp/gatehouse-m10-\(UInt64.random(in: 0...UInt64.max)).db"
        defer { for s in ["", "-wal", "-shm"] { unlink(path + s) } }
        do {
            let old = try SQLiteStore(path: path, migrate: false)
            #expect(try Migrations.migrate(old.db, upTo: 9) == 9)
            for (i, status) in ["pending", "sending", "sent"].enumerated() {
                try old.db.run("""
                    INSERT INTO outbox (project_id, channel, recipient, body, status, attempts, next_attempt_at, lease_until, created_at)
                    VALUES ('p', 'sms', ?, ?, ?, ?, 0, ?, 0)
                    """, ["+\(i)", "code \(i)", status, i, status == "sending" ? 50 : nil])
            }
        }

        let store = try SQLiteStore(path: path)
        #expect(try store.probe() == Migrations.all.map(\.version).max())
        let rows = try store.messages(project: "p", channel: .sms, limit: 10)
        #expect(rows.map(\.status) == [.pending, .sending, .sent])
        #expect(rows.map(\.body) == ["code 0", "code 1", "code 2"] && rows.map(\.attempts) == [0, 1, 2])
        #expect(try store.db.rows("SELECT lease_token FROM outbox ORDER BY id") { $0.int(0) } == [0, 0, 0])

        // The pending message and the one whose old lease expired are due; the sent one is not.
        #expect(try store.dueMessageIDs(now: 40, limit: 10, channels: [.sms, .email, .push]) == [rows[0].id])
        #expect(try store.dueMessageIDs(now: 50, limit: 10, channels: [.sms, .email, .push]) == [rows[0].id, rows[1].id])
        let taken = try #require(try store.lease(id: rows[1].id, now: 50, until: 150))
        // Taking over its expired lease counts the attempt that lease was.
        #expect(taken.token == 1 && taken.message.attempts == 2)
        #expect(try store.markSent(taken, at: 60, keepBody: false))
        #expect(try store.lease(id: rows[2].id, now: 50, until: 150) == nil)
    }
}
