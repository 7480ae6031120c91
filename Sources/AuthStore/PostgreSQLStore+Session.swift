import AuthEngine

// MARK: - Refresh tokens and sessions

extension PostgreSQLStore: SessionStore {
    public func insertRefreshToken(_ t: RefreshTokenRecord) throws {
        try db.run("INSERT INTO refresh_tokens (\(StoreRecords.refreshColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [t.tokenHash, t.familyID, t.projectID, t.localID, t.provider, t.authTime, t.createdAt, t.rotatedAt, t.revokedAt,
                    t.secondFactor, t.developerClaims])
    }

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? {
        try db.first("SELECT \(StoreRecords.refreshColumns) FROM refresh_tokens WHERE token_hash = ?", [hash], StoreRecords.refresh)
    }

    public func markRefreshTokenRotated(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL", [at, hash]) == 1
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
            EXISTS (SELECT 1 FROM jsonb_array_elements(accounts.providers::jsonb) AS p(value)
                WHERE p.value->>'providerId' = ? AND p.value->>'rawId' = ?)
            """, [project, providerID, rawID])
    }

    public func purgeSessions(now: Millis, retiredBefore: Millis) throws {
        try transaction {
            try db.run("DELETE FROM sessions WHERE expires_at < ?", [now])
            try db.run("DELETE FROM refresh_tokens WHERE revoked_at < ? OR rotated_at < ?", [retiredBefore, retiredBefore])
        }
    }
}

// MARK: - Housekeeping

/// The same bounded batches as on SQLite: each a `DELETE … WHERE key IN (SELECT … LIMIT n)`.
extension PostgreSQLStore: HousekeepingStore {
    public func purge(_ kind: PurgeKind, cutoff: Millis, limit: Int) throws -> Int {
        switch kind {
        case .phoneVerifications: return try deleteBatch("phone_verifications", key: "session_hash", where: "expires_at < ?", cutoff, limit)
        case .phoneProofs: return try deleteBatch("phone_proofs", key: "proof_hash", where: "expires_at < ?", cutoff, limit)
        case .emailLinks: return try deleteBatch("email_links", key: "code_hash", where: "expires_at < ?", cutoff, limit)
        case .appVerificationReplays:
            return try deleteBatch("app_verification_replays", key: "challenge_id", where: "expires_at <= ?", cutoff, limit)
        case .appTokens: return try deleteBatch("app_tokens", key: "token_hash", where: "expires_at <= ?", cutoff, limit)
        case .mfaPending: return try deleteBatch("mfa_pending", key: "credential_hash", where: "expires_at < ?", cutoff, limit)
        case .iosReceipts: return try deleteBatch("ios_receipts", key: "receipt_hash", where: "expires_at <= ?", cutoff, limit)
        case .sessions: return try deleteBatch("sessions", key: "sid_hash", where: "expires_at < ?", cutoff, limit)
        case .refreshTokens:
            let revoked = try deleteBatch("refresh_tokens", key: "token_hash", where: "revoked_at < ?", cutoff, limit)
            guard revoked < limit else { return revoked }
            return try revoked + deleteBatch("refresh_tokens", key: "token_hash", where: "rotated_at < ?", cutoff, limit - revoked)
        case .limitCounters:
            return try deleteBatch("limit_counters", key: "(bucket, window_start)", columns: "bucket, window_start",
                                   where: "expires_at < ?", cutoff, limit)
        case .outbox:
            return try deleteBatch("outbox", key: "id", where: "status IN ('sent', 'dead') AND next_attempt_at < ?", cutoff, limit)
        case .auditLog:
            let (window, overflow) = limit.multipliedReportingOverflow(by: SQLiteStore.auditWindowFactor)
            return try db.run("""
                DELETE FROM audit_log WHERE id IN (
                    SELECT id FROM (SELECT id, at FROM audit_log ORDER BY id LIMIT ?) AS oldest WHERE at < ? LIMIT ?)
                """, [overflow ? Int.max : window, cutoff, limit])
        }
    }

    /// The names are this file's constants, the values bound.
    private func deleteBatch(_ table: String, key: String, columns: String? = nil, where condition: String,
                             _ cutoff: Millis, _ limit: Int) throws -> Int {
        try db.run("DELETE FROM \(table) WHERE \(key) IN (SELECT \(columns ?? key) FROM \(table) WHERE \(condition) LIMIT ?)", [cutoff, limit])
    }
}
