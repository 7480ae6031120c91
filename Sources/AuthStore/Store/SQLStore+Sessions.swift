public import AuthEngine

/// `refresh_tokens` and `sessions`, and what is done to all of an account's.
extension SQLStore: SessionStore {
    public func insertRefreshToken(_ t: RefreshTokenRecord) throws { try insert(t, RefreshTokenColumn.self) }

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? { try find(RefreshTokenColumn.self, hash) }

    public func markRefreshTokenRotated(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL", [at, hash]) == 1
    }

    /// By the user as well: a family belongs to one user, and `refresh_tokens_user` finds it.
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

    public func insertSession(_ s: SessionRecord) throws { try insert(s, SessionColumn.self) }

    public func session(sidHash: [UInt8]) throws -> SessionRecord? { try find(SessionColumn.self, sidHash) }

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
            \(SessionColumn.table.select)
            WHERE project_id = ? AND local_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at
            """, [project, localID, now], SessionColumn.read)
    }

    public func deleteTokensAndSessions(project: String, localID: String) throws {
        try transaction {
            try db.run("DELETE FROM refresh_tokens WHERE project_id = ? AND local_id = ?", [project, localID])
            try db.run("DELETE FROM sessions WHERE project_id = ? AND local_id = ?", [project, localID])
            try db.run("DELETE FROM passkeys WHERE project_id = ? AND local_id = ?", [project, localID])
            try db.run("DELETE FROM user_devices WHERE project_id = ? AND local_id = ?", [project, localID])
            try db.run("DELETE FROM operators WHERE project_id = ? AND local_id = ?", [project, localID])
        }
    }

    @discardableResult
    public func deleteAllAccounts(project: String) throws -> Int {
        try transaction {
            try db.run("DELETE FROM refresh_tokens WHERE project_id = ?", [project])
            try db.run("DELETE FROM sessions WHERE project_id = ?", [project])
            try db.run("DELETE FROM passkeys WHERE project_id = ?", [project])
            try db.run("DELETE FROM user_devices WHERE project_id = ?", [project])
            try db.run("DELETE FROM operators WHERE project_id = ?", [project])
            return try db.run("DELETE FROM accounts WHERE project_id = ?", [project])
        }
    }

    public func purgeSessions(now: Millis, retiredBefore: Millis) throws {
        try transaction {
            try db.run("DELETE FROM sessions WHERE expires_at < ?", [now])
            try db.run("DELETE FROM refresh_tokens WHERE revoked_at < ? OR rotated_at < ?", [retiredBefore, retiredBefore])
        }
    }
}
