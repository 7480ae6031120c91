import AuthEngine

// MARK: - Pending second-factor sign-ins

extension SQLiteStore: MFAStore {
    public func insertMFAPending(_ r: MFAPendingRecord) throws {
        try db.run("INSERT INTO mfa_pending (\(StoreRecords.mfaPendingColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [r.credentialHash, r.projectID, r.localID, r.firstFactor, r.authTime, r.createdAt, r.expiresAt, r.consumedAt])
    }

    public func mfaPending(hash: [UInt8]) throws -> MFAPendingRecord? {
        try db.first("SELECT \(StoreRecords.mfaPendingColumns) FROM mfa_pending WHERE credential_hash = ?", [hash], StoreRecords.mfaPending)
    }

    public func consumeMFAPending(hash: [UInt8], now: Millis) throws -> Bool {
        try db.run("UPDATE mfa_pending SET consumed_at = ? WHERE credential_hash = ? AND consumed_at IS NULL AND expires_at > ?",
                   [now, hash, now]) > 0
    }

    public func purgeMFAPending(before: Millis) throws {
        try db.run("DELETE FROM mfa_pending WHERE expires_at < ?", [before])
    }

    @discardableResult
    public func revokeMFAPending(project: String, localID: String, at: Millis) throws -> Int {
        try db.run("UPDATE mfa_pending SET consumed_at = ? WHERE project_id = ? AND local_id = ? AND consumed_at IS NULL",
                   [at, project, localID])
    }
}
