public import AuthEngine

/// Where an account is signed in (`sessions`, `refresh_tokens`), the devices it used
/// (`user_devices`), and the console's operators (`operators`).
extension SQLStore: SignInListStore, OperatorStore {
    public func liveRefreshTokens(project: String, localID: String) throws -> [RefreshTokenRecord] {
        try db.rows("""
            \(RefreshTokenColumn.table.select)
            WHERE project_id = ? AND local_id = ? AND rotated_at IS NULL AND revoked_at IS NULL ORDER BY created_at
            """, [project, localID], RefreshTokenColumn.read)
    }

    @discardableResult
    public func revokeUserRefreshFamily(project: String, localID: String, familyID: String, at: Millis) throws -> Int {
        try db.run("""
            UPDATE refresh_tokens SET revoked_at = ?
            WHERE project_id = ? AND local_id = ? AND family_id = ? AND revoked_at IS NULL
            """, [at, project, localID, familyID])
    }

    @discardableResult
    public func revokeUserSession(project: String, localID: String, sidHash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE sessions SET revoked_at = ? WHERE sid_hash = ? AND project_id = ? AND local_id = ? AND revoked_at IS NULL",
                   [at, sidHash, project, localID]) == 1
    }

    @discardableResult
    public func revokeSignIns(project: String, localID: String, keepingSession keeping: [UInt8]?, at: Millis) throws -> Int {
        try transaction {
            let sessions = try db.run("""
                UPDATE sessions SET revoked_at = ?
                WHERE project_id = ? AND local_id = ? AND revoked_at IS NULL AND sid_hash <> ?
                """, [at, project, localID, keeping ?? []])
            return try sessions + db.run("""
                UPDATE refresh_tokens SET revoked_at = ? WHERE project_id = ? AND local_id = ? AND revoked_at IS NULL
                """, [at, project, localID])
        }
    }

    /// The insert decides "new" (of two at once, one inserts); "first" is whether the account had
    /// any device before, read first in the same transaction.
    public func noteDevice(_ d: UserDeviceRecord) throws -> DeviceSighting {
        try transaction {
            let had = try db.first("SELECT 1 FROM user_devices WHERE project_id = ? AND local_id = ? LIMIT 1", [d.projectID, d.localID]) { _ in true }
            let inserted = try db.run("""
                INSERT INTO user_devices (project_id, local_id, device_hash, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (project_id, local_id, device_hash) DO NOTHING
                """, [d.projectID, d.localID, d.deviceHash, d.firstSeenAt, d.lastSeenAt]) == 1
            if inserted { return had == nil ? .firstDevice : .new }
            // One write a day at most per device: the list only needs to know it was used.
            try db.run("""
                UPDATE user_devices SET last_seen_at = ?
                WHERE project_id = ? AND local_id = ? AND device_hash = ? AND last_seen_at < ?
                """, [d.lastSeenAt, d.projectID, d.localID, d.deviceHash, d.lastSeenAt - 86_400_000])
            return .known
        }
    }

    public func addOperator(_ r: OperatorRecord) throws -> Bool {
        try db.run("""
            INSERT INTO operators (project_id, local_id, added_at, added_by) VALUES (?, ?, ?, ?)
            ON CONFLICT (project_id, local_id) DO NOTHING
            """, [r.projectID, r.localID, r.addedAt, r.addedBy]) == 1
    }

    public func removeOperator(project: String, localID: String) throws -> Bool {
        try db.run("DELETE FROM operators WHERE project_id = ? AND local_id = ?", [project, localID]) == 1
    }

    public func operators(project: String?) throws -> [OperatorRecord] {
        if let project {
            return try db.rows("\(OperatorColumn.table.select) WHERE project_id = ? ORDER BY added_at, local_id\(db.dialect.byteOrder)",
                               [project], OperatorColumn.read)
        }
        return try db.rows("\(OperatorColumn.table.select) ORDER BY added_at, local_id\(db.dialect.byteOrder)", [], OperatorColumn.read)
    }

    public func isOperator(project: String, localID: String) throws -> Bool {
        try db.first("SELECT 1 FROM operators WHERE project_id = ? AND local_id = ?", [project, localID]) { _ in true } ?? false
    }
}
