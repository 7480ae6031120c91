public import AuthEngine

/// `audit_log` (append-only, in id order).
extension SQLStore: AuditStore {
    public func audit(_ e: AuditEvent, at: Millis) throws {
        try db.run("INSERT INTO audit_log (at, project_id, event, local_id, remote_address, detail, actor, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [at, e.projectID, e.event.rawValue, e.localID, e.remoteAddress, e.detail, e.actor, e.outcome])
    }

    /// Newest first. Ids grow with time, so the scan runs in id order.
    public func auditEvents(project: String?, localID: String?, since: Millis?, limit: Int) throws -> [AuditRecord] {
        var conditions: [String] = []
        var values: [any SQLBindable] = []
        if let project { conditions.append("project_id = ?"); values.append(project) }
        if let localID { conditions.append("local_id = ?"); values.append(localID) }
        if let since { conditions.append("at >= ?"); values.append(since) }
        values.append(limit)
        return try db.rows("""
            \(AuditColumn.table.select)\(conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            ORDER BY id DESC LIMIT ?
            """, values, AuditColumn.read)
    }
}

/// `app_tokens` (the single-use tokens app verification hands to apps) and
/// `app_verification_replays` (proof-of-work challenges already used).
extension SQLStore: AppTokenStore, AppVerificationStore {
    public func insertAppToken(_ t: AppTokenRecord, at: Millis) throws {
        try db.run("INSERT INTO app_tokens (token_hash, project_id, api_key, app_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                   [t.tokenHash, t.projectID, t.apiKey, t.appID, at, t.expiresAt])
    }

    /// Deleted and returned in one statement: of two consumers at once, one gets it.
    public func consumeAppToken(hash: [UInt8], now: Millis) throws -> AppTokenRecord? {
        let rec = try db.writeFirst("DELETE FROM app_tokens WHERE token_hash = ? RETURNING \(AppTokenColumn.table.columnList)", [hash],
                                    AppTokenColumn.read)
        guard let rec else { return nil }
        try db.run("DELETE FROM app_tokens WHERE expires_at <= ?", [now])
        return rec.expiresAt > now ? rec : nil
    }

    public func markChallengeUsed(id: [UInt8], project: String, expiresAt: Millis, now: Millis) throws -> Bool {
        try db.transaction {
            try db.run("DELETE FROM app_verification_replays WHERE expires_at <= ?", [now])
            return try db.run("""
                INSERT INTO app_verification_replays (challenge_id, project_id, expires_at) VALUES (?, ?, ?)
                ON CONFLICT (challenge_id) DO NOTHING
                """, [id, project, expiresAt]) == 1
        }
    }
}
