import AuthEngine
@testable import AuthStore
import Foundation
import Testing

@Suite("SQLite store")
struct MigrationTests {
    func tempPath() -> String {
        NSTemporaryDirectory() + "gatehouse-test-\(UInt64.random(in: 0...UInt64.max)).db"
    }

    @Test("a new file gets the declared schema at once, recorded, and reopening changes nothing")
    func migrate() throws {
        let path = tempPath()
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        #expect(try SQLStore(path: path).probe() == Schema.version)
        let again = try SQLStore(path: path)
        #expect(try Schema.migrate(again.db, now: 5).isEmpty)
        let rows = try again.db.rows("SELECT version, applied_at FROM schema_migrations", []) { [$0.int(0), $0.int(1)] }
        #expect(rows.count == 1 && rows.first?.first == Int64(Schema.version))
        // Milliseconds, as every other time.
        #expect((rows.first?.last ?? 0) > 1_600_000_000_000)
        let mode = try again.db.first("PRAGMA journal_mode") { $0.text(0) }
        #expect(mode == "wal")
    }

    @Test("migrations follow the oldest version upgraded, in order, up to the declared version")
    func ordering() {
        let versions = Schema.migrations.map(\.version)
        #expect(versions == Array((Schema.oldestUpgradable + 1)...Schema.version))
    }

    @Test("a database older than the oldest upgradable, or newer than this build, is refused and left as it was")
    func refusedVersions() throws {
        for version in [Schema.oldestUpgradable - 1, Schema.version + 1] {
            let path = tempPath()
            defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
            let raw = try SQLiteConnection(path: path)
            try raw.script("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)")
            try raw.run("INSERT INTO schema_migrations VALUES (?, 1)", [version])
            #expect(throws: PortError.self) { try SQLStore(path: path) }
            #expect(try Schema.recordedVersion(raw) == version)
        }
    }

    @Test("a failing transaction rolls back every write")
    func rollback() throws {
        let store = try SQLStore(path: ":memory:")
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try store.transaction {
                try store.insertAccount(Account(projectID: "p", localID: "u1", createdAt: 1))
                throw Boom()
            }
        }
        #expect(try store.account(project: "p", localID: "u1") == nil)
    }

    @Test("email and phone are unique per project and map to the wire errors")
    func uniqueness() throws {
        let store = try SQLStore(path: ":memory:")
        var a = Account(projectID: "p", localID: "u1", createdAt: 1)
        a.email = "a@example.com"
        a.phoneNumber = "+16505550100"
        a.providers = [ProviderInfo(providerID: "phone", rawID: "+16505550100", phoneNumber: "+16505550100")]
        try store.insertAccount(a)
        var b = Account(projectID: "p", localID: "u2", createdAt: 1)
        b.email = "a@example.com"
        #expect(throws: AuthError(.emailExists)) { try store.insertAccount(b) }
        b.email = nil
        b.phoneNumber = "+16505550100"
        #expect(throws: AuthError(.phoneNumberExists)) { try store.insertAccount(b) }
        #expect(throws: AuthError(.duplicateLocalID)) { try store.insertAccount(Account(projectID: "p", localID: "u1", createdAt: 2)) }
        var other = b
        other.projectID = "q"
        try store.insertAccount(other)
        #expect(try store.account(project: "p", email: "A@example.com")?.localID == "u1")
        #expect(try store.account(project: "p", localID: "u1")?.providers == a.providers)
    }

    @Test("the outbox leases a message once, scrubs it when sent, and re-leases it after a lease expires")
    func outbox() throws {
        let store = try SQLStore(path: ":memory:")
        let id = try store.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+1", body: "code 123456", nextAttemptAt: 0, createdAt: 0))
        #expect(try store.dueMessageIDs(now: 10, limit: 5, channels: [.sms, .email, .push]) == [id])
        let first = try #require(try store.lease(id: id, now: 10, until: 100))
        #expect(first.message.body == "code 123456" && first.message.status == .sending && first.until == 100)
        #expect(try store.lease(id: id, now: 20, until: 120) == nil)
        #expect(try store.dueMessageIDs(now: 20, limit: 5, channels: [.sms, .email, .push]).isEmpty)
        #expect(try store.dueMessageIDs(now: 100, limit: 5, channels: [.sms, .email, .push]) == [id])
        let second = try #require(try store.lease(id: id, now: 101, until: 200))
        #expect(second.token == first.token + 1)
        #expect(try store.markSent(second, at: 150, keepBody: false))
        let m = try store.messages(project: "p", channel: .sms, limit: 5)
        #expect(m.first?.status == .sent && m.first?.body == "")
        #expect(try store.lease(id: id, now: 1_000, until: 2_000) == nil)
    }

    @Test("an outcome recorded under a lease that was taken over changes nothing")
    func lateOutcome() throws {
        let store = try SQLStore(path: ":memory:")
        let id = try store.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+1", body: "code 1", nextAttemptAt: 0, createdAt: 0))
        let late = try #require(try store.lease(id: id, now: 10, until: 100))
        let current = try #require(try store.lease(id: id, now: 100, until: 200))
        #expect(try store.markFailed(current, error: "HTTP 400", nextAttemptAt: nil, at: 120))
        #expect(try !store.markSent(late, at: 130, keepBody: false))
        #expect(try !store.markFailed(late, error: "timeout", nextAttemptAt: 500, at: 130))
        let m = try #require(try store.messages(project: "p", channel: .sms, limit: 5).first)
        // Two attempts: the one whose lease expired, and the one that failed.
        #expect(m.status == .dead && m.attempts == 2 && m.lastError == "HTTP 400" && m.sentAt == nil)

        // The same lease, expired but not taken over, still records its outcome.
        let other = try store.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+2", body: "code 2", nextAttemptAt: 0, createdAt: 0))
        let slow = try #require(try store.lease(id: other, now: 10, until: 100))
        #expect(try store.markSent(slow, at: 300, keepBody: true))
        #expect(try store.messages(project: "p", channel: .sms, limit: 5).last?.status == .sent)
    }

    @Test("limit counters add up within a window and are separate across windows")
    func counters() throws {
        let store = try SQLStore(path: ":memory:")
        #expect(try store.incrementCounter(bucket: "b", windowStart: 0, amount: 1, expiresAt: 10) == 1)
        #expect(try store.incrementCounter(bucket: "b", windowStart: 0, amount: 2, expiresAt: 10) == 3)
        #expect(try store.incrementCounter(bucket: "b", windowStart: 10, amount: 1, expiresAt: 20) == 1)
        try store.purgeCounters(before: 15)
        #expect(try store.counter(bucket: "b", windowStart: 0) == 0)
    }
}
