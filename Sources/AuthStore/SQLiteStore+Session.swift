import AuthEngine

extension SQLiteStore: SessionStore {
    static let refreshColumns = "token_hash, family_id, project_id, local_id, provider, auth_time, created_at, rotated_at, revoked_at"

    static func refresh(_ r: Row) -> RefreshTokenRecord {
        RefreshTokenRecord(tokenHash: r.blob(0), familyID: r.text(1), projectID: r.text(2), localID: r.text(3), provider: r.text(4),
                           authTime: r.int(5), createdAt: r.int(6), rotatedAt: r.intOrNil(7), revokedAt: r.intOrNil(8))
    }

    public func insertRefreshToken(_ t: RefreshTokenRecord) throws {
        try db.run("INSERT INTO refresh_tokens (\(SQLiteStore.refreshColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [t.tokenHash, t.familyID, t.projectID, t.localID, t.provider, t.authTime, t.createdAt, t.rotatedAt, t.revokedAt])
    }

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? {
        try db.first("SELECT \(SQLiteStore.refreshColumns) FROM refresh_tokens WHERE token_hash = ?", [hash], SQLiteStore.refresh)
    }
}
