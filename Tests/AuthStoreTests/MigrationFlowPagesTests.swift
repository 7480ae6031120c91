import AuthEngine
import AuthStore
import Foundation
import Testing

/// Migration 7 converts a database at version 6 in place and keeps every row usable.
@Suite("Migration 7 (pages per sign-in)")
struct MigrationFlowPagesTests {
    func tempPath() -> String {
        NSTemporaryDirectory() + "gatehouse-m7-\(UInt64.random(in: 0...UInt64.max)).db"
    }

    func token(_ n: Int, family: String, user: String) -> RefreshTokenRecord {
        RefreshTokenRecord(tokenHash: [UInt8](repeating: UInt8(n), count: 32), familyID: family, projectID: "p", localID: user,
                           provider: "phone", authTime: 1, createdAt: Millis(1000 + n))
    }

    @Test("a version-6 database keeps its audit rows and refresh tokens, and the new indexes serve every query")
    func migrateSix() throws {
        let path = tempPath()
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        do {
            let old = try SQLiteStore(path: path, migrate: false)
            #expect(try Migrations.migrate(old.db, upTo: 6) == 6)
            // Rows as version 6 stores them (today's insert writes the columns of migration 14).
            for i in 1...5 {
                try old.db.run("INSERT INTO audit_log (at, project_id, event, local_id, remote_address, detail) VALUES (?, ?, ?, ?, ?, ?)",
                               [Millis(i), "p", "e\(i)", i == 3 ? nil : "u\(i % 2)", "192.0.2.\(i)", i == 2 ? "d" : nil])
            }
            try old.db.run("DELETE FROM audit_log WHERE id = 2")
            // Rows as version 6 stores them (today's insert writes columns later migrations add).
            for (n, family, user) in [(1, "fa", "u1"), (2, "fa", "u1"), (3, "fb", "u1"), (4, "fc", "u2")] {
                let t = token(n, family: family, user: user)
                try old.db.run("""
                    INSERT INTO refresh_tokens (token_hash, family_id, project_id, local_id, provider, auth_time, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, [t.tokenHash, t.familyID, t.projectID, t.localID, t.provider, t.authTime, t.createdAt])
            }
            let seq = try old.db.first("SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'") { $0.int(0) }
            #expect(seq == 5)
        }

        let store = try SQLiteStore(path: path)
        #expect(try store.probe() == Migrations.all.map(\.version).max())
        let rows = try store.db.rows("SELECT id, at, project_id, event, local_id, remote_address, detail FROM audit_log ORDER BY id") {
            "\($0.int(0)) \($0.int(1)) \($0.text(2)) \($0.text(3)) \($0.textOrNil(4) ?? "-") \($0.textOrNil(5) ?? "-") \($0.textOrNil(6) ?? "-")"
        }
        #expect(rows == ["1 1 p e1 u1 192.0.2.1 -", "3 3 p e3 - 192.0.2.3 -", "4 4 p e4 u0 192.0.2.4 -", "5 5 p e5 u1 192.0.2.5 -"])
        #expect(try store.db.first("SELECT COUNT(*) FROM sqlite_sequence WHERE name LIKE 'audit_log%'") { $0.int(0) } == 0)
        try store.audit(AuditEvent(projectID: "p", event: "after", localID: "u1"), at: 9)
        #expect(try store.db.first("SELECT MAX(id) FROM audit_log") { $0.int(0) } == 6)
        #expect(try store.db.first("SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'audit_log'") { $0.int(0) } == 0)

        let indexes = try store.db.rows("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('audit_log', 'refresh_tokens') AND sql IS NOT NULL ORDER BY name") { $0.text(0) }
        #expect(indexes == ["refresh_tokens_revoked", "refresh_tokens_rotated", "refresh_tokens_user"])

        for n in 1...4 { #expect(try store.refreshToken(hash: [UInt8](repeating: UInt8(n), count: 32)) == token(n, family: ["fa", "fa", "fb", "fc"][n - 1], user: n == 4 ? "u2" : "u1")) }
        try store.revokeRefreshFamily("fa", project: "p", localID: "u1", at: 50)
        let revoked = try store.db.rows("SELECT hex(token_hash) FROM refresh_tokens WHERE revoked_at IS NOT NULL ORDER BY 1") { $0.text(0) }
        #expect(revoked.count == 2 && revoked.allSatisfy { $0.hasPrefix("01") || $0.hasPrefix("02") })
        #expect(try store.revokeRefreshTokens(project: "p", localID: "u1", createdBefore: 10_000, at: 60) == 1)
        #expect(try store.refreshToken(hash: [UInt8](repeating: 4, count: 32))?.revokedAt == nil)

        let plan = try store.db.rows("""
            EXPLAIN QUERY PLAN UPDATE refresh_tokens SET revoked_at = 1
            WHERE project_id = 'p' AND local_id = 'u1' AND family_id = 'fa' AND revoked_at IS NULL
            """) { $0.text(3) }
        #expect(plan.contains { $0.contains("refresh_tokens_user (project_id=? AND local_id=? AND family_id=?)") })
        try store.deleteTokensAndSessions(project: "p", localID: "u1")
        #expect(try store.db.first("SELECT COUNT(*) FROM refresh_tokens") { $0.int(0) } == 1)
    }
}
