import AuthEngine

// MARK: - Refresh tokens

extension SQLiteStore: SessionStore {
    public func insertRefreshToken(_ t: RefreshTokenRecord) throws {
        try db.run("INSERT INTO refresh_tokens (\(StoreRecords.refreshColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [t.tokenHash, t.familyID, t.projectID, t.localID, t.provider, t.authTime, t.createdAt, t.rotatedAt, t.revokedAt,
                    t.secondFactor, t.developerClaims])
    }

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? {
        try db.first("SELECT \(StoreRecords.refreshColumns) FROM refresh_tokens WHERE token_hash = ?", [hash], StoreRecords.refresh)
    }

    public func markRefreshTokenRotated(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL",
                   [at, hash]) == 1
    }

    public func revokeRefreshFamily(_ familyID: String, project: String, localID: String, at: Millis) throws {
        try db.run("""
            UPDATE refresh_tokens SET revoked_at = ?
            WHERE project_id = ? AND local_id = ? AND family_id = ? AND revoked_at IS NULL
            """, [at, project, localID, familyID])
    }

    @discardableResult
    public func revokeRefreshTokens(project: String, localID: String, createdBefore: Millis, at: Millis) throws -> Int {
        try db.run("""
            UPDATE refresh_tokens SET revoked_at = ?
            WHERE project_id = ? AND local_id = ? AND created_at < ? AND revoked_at IS NULL
            """, [at, project, localID, createdBefore])
    }

    // MARK: - Sessions

    public func insertSession(_ s: SessionRecord) throws {
        try db.run("INSERT INTO sessions (\(StoreRecords.sessionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [s.sidHash, s.projectID, s.localID, s.provider, s.createdAt, s.lastSeenAt, s.expiresAt, s.idleTimeoutSeconds, s.revokedAt])
    }

    public func session(sidHash: [UInt8]) throws -> SessionRecord? {
        try db.first("SELECT \(StoreRecords.sessionColumns) FROM sessions WHERE sid_hash = ?", [sidHash], StoreRecords.session)
    }

    public func touchSession(sidHash: [UInt8], at: Millis) throws {
        try db.run("UPDATE sessions SET last_seen_at = ? WHERE sid_hash = ? AND revoked_at IS NULL AND last_seen_at < ?", [at, sidHash, at])
    }

    @discardableResult
    public func revokeSession(sidHash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE sessions SET revoked_at = ? WHERE sid_hash = ? AND revoked_at IS NULL", [at, sidHash]) == 1
    }

    @discardableResult
    public func revokeSessions(project: String, localID: String, createdBefore: Millis, at: Millis) throws -> Int {
        try db.run("""
            UPDATE sessions SET revoked_at = ?
            WHERE project_id = ? AND local_id = ? AND created_at < ? AND revoked_at IS NULL
            """, [at, project, localID, createdBefore])
    }

    public func activeSessions(project: String, localID: String, now: Millis) throws -> [SessionRecord] {
        try db.rows("""
            SELECT \(StoreRecords.sessionColumns) FROM sessions
            WHERE project_id = ? AND local_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at
            """, [project, localID, now], StoreRecords.session)
    }

    // MARK: - Account-wide operations

    public func deleteTokensAndSessions(project: String, localID: String) throws {
        try transaction {
            try db.run("DELETE FROM refresh_tokens WHERE project_id = ? AND local_id = ?", [project, localID])
            try db.run("DELETE FROM sessions WHERE project_id = ? AND local_id = ?", [project, localID])
        }
    }

    @discardableResult
    public func deleteAllAccounts(project: String) throws -> Int {
        try transaction {
            try db.run("DELETE FROM refresh_tokens WHERE project_id = ?", [project])
            try db.run("DELETE FROM sessions WHERE project_id = ?", [project])
            return try db.run("DELETE FROM accounts WHERE project_id = ?", [project])
        }
    }

    public func account(project: String, providerID: String, rawID: String) throws -> Account? {
        try readAccount("""
            EXISTS (SELECT 1 FROM json_each(accounts.providers)
                WHERE json_extract(value, '$.providerId') = ? AND json_extract(value, '$.rawId') = ?)
            """, [project, providerID, rawID])
    }

    public func purgeSessions(now: Millis, retiredBefore: Millis) throws {
        try transaction {
            try db.run("DELETE FROM sessions WHERE expires_at < ?", [now])
            try db.run("DELETE FROM refresh_tokens WHERE revoked_at < ? OR rotated_at < ?", [retiredBefore, retiredBefore])
        }
    }
}

// MARK: - Signing-key cleanup

extension SQLiteStore: SigningKeyCleanup {
    @discardableResult
    public func deleteExpiredSigningKeys(at now: Millis) throws -> Int {
        try db.run("DELETE FROM signing_keys WHERE expires_at IS NOT NULL AND expires_at <= ?", [now])
    }
}
