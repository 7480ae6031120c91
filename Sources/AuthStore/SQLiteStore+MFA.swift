import AuthEngine

// MARK: - Pending second-factor sign-ins

extension SQLiteStore: MFAStore {
    static let mfaPendingColumns = "credential_hash, project_id, local_id, first_factor, auth_time, created_at, expires_at, consumed_at"

    public func insertMFAPending(_ r: MFAPendingRecord) throws {
        try db.run("INSERT INTO mfa_pending (\(SQLiteStore.mfaPendingColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [r.credentialHash, r.projectID, r.localID, r.firstFactor, r.authTime, r.createdAt, r.expiresAt, r.consumedAt])
    }

    public func mfaPending(hash: [UInt8]) throws -> MFAPendingRecord? {
        try db.first("SELECT \(SQLiteStore.mfaPendingColumns) FROM mfa_pending WHERE credential_hash = ?", [hash]) { r in
            MFAPendingRecord(credentialHash: r.blob(0), projectID: r.text(1), localID: r.text(2), firstFactor: r.text(3),
                             authTime: r.int(4), createdAt: r.int(5), expiresAt: r.int(6), consumedAt: r.intOrNil(7))
        }
    }

    public func consumeMFAPending(hash: [UInt8], now: Millis) throws -> Bool {
        try db.run("UPDATE mfa_pending SET consumed_at = ? WHERE credential_hash = ? AND consumed_at IS NULL AND expires_at > ?",
                   [now, hash, now]) > 0
    }

    public func purgeMFAPending(before: Millis) throws {
        try db.run("DELETE FROM mfa_pending WHERE expires_at < ?", [before])
    }
}
