import AuthEngine
import JSONValue

// MARK: - Limits

extension SQLiteStore: LimitStore {
    public func incrementCounter(bucket: String, windowStart: Millis, amount: Int, expiresAt: Millis) throws -> Int {
        try db.transaction {
            try db.run("""
                INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (bucket, window_start) DO UPDATE SET count = count + excluded.count
                """, [bucket, windowStart, amount, expiresAt])
            return Int(try db.first("SELECT count FROM limit_counters WHERE bucket = ? AND window_start = ?", [bucket, windowStart]) { $0.int(0) } ?? 0)
        }
    }

    public func counter(bucket: String, windowStart: Millis) throws -> Int {
        Int(try db.first("SELECT count FROM limit_counters WHERE bucket = ? AND window_start = ?", [bucket, windowStart]) { $0.int(0) } ?? 0)
    }

    public func purgeCounters(before: Millis) throws {
        try db.run("DELETE FROM limit_counters WHERE expires_at < ?", [before])
    }
}

// MARK: - Outbox

extension SQLiteStore: OutboxStore {
    public func enqueue(_ m: OutboxMessage) throws -> Int64 {
        try db.run("""
            INSERT INTO outbox (project_id, channel, recipient, subject, body, html_body, metadata, status, attempts, next_attempt_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)
            """, [m.projectID, m.channel.rawValue, m.recipient, m.subject, m.body, m.htmlBody, m.metadata, m.nextAttemptAt, m.createdAt])
        return db.lastInsertRowID
    }

    public func outboxBacklog() throws -> [OutboxBacklog] {
        try db.rows("""
            SELECT channel, COUNT(*), MIN(created_at) FROM outbox WHERE status IN ('pending', 'sending') GROUP BY channel ORDER BY channel
            """, []) { r in OutboxMessage.Channel(rawValue: r.text(0)).map { OutboxBacklog(channel: $0, count: Int(r.int(1)), oldestCreatedAt: r.int(2)) } }
            .compactMap { $0 }
    }

    public func dueMessageIDs(now: Millis, limit: Int, channels: [OutboxMessage.Channel]) throws -> [Int64] {
        guard !channels.isEmpty else { return [] }
        // One placeholder per channel: the values are bound, never spliced into the SQL.
        let placeholders = Array(repeating: "?", count: channels.count).joined(separator: ", ")
        let values: [SQLBindable] = [now, now] + channels.map { $0.rawValue } + [limit]
        return try db.rows("""
            SELECT id FROM outbox
            WHERE ((status = 'pending' AND next_attempt_at <= ?) OR (status = 'sending' AND lease_until <= ?))
              AND channel IN (\(placeholders))
            ORDER BY next_attempt_at, id LIMIT ?
            """, values) { $0.int(0) }
    }

    /// In one write transaction: a due message whose attempts are used up (counting the one an
    /// expired lease lost) is made dead; otherwise one conditional UPDATE decides between
    /// workers, the one whose UPDATE changes the row holding the lease. The row is read back only
    /// by the winner, in the same transaction.
    public func lease(id: Int64, now: Millis, until: Millis, maxAttempts: Int) throws -> OutboxLeasing {
        // An expired lease is an attempt that ended without an outcome (`sending` is only ever
        // left by recording one); every SET expression reads the row as it was.
        let lost = "(CASE WHEN status = 'sending' THEN 1 ELSE 0 END)"
        let due = "((status = 'pending' AND next_attempt_at <= ?) OR (status = 'sending' AND lease_until <= ?))"
        return try db.transaction {
            let exhausted = try db.run("""
                UPDATE outbox SET status = 'dead', attempts = attempts + \(lost), lease_until = NULL,
                  last_error = CASE WHEN status = 'sending' THEN ? ELSE last_error END, body = '', html_body = NULL, metadata = '{}'
                WHERE id = ? AND \(due) AND attempts + \(lost) >= ?
                """, [OutboxLeasing.lostAttemptError, id, now, now, maxAttempts])
            if exhausted == 1 {
                return try db.first("SELECT \(StoreRecords.outboxColumns) FROM outbox WHERE id = ?", [id], StoreRecords.outbox)
                    .map(OutboxLeasing.exhausted) ?? .unavailable
            }
            let won = try db.run("""
                UPDATE outbox SET status = 'sending', lease_until = ?, lease_token = lease_token + 1, attempts = attempts + \(lost)
                WHERE id = ? AND \(due)
                """, [until, id, now, now])
            guard won == 1 else { return .unavailable }
            return try db.first("SELECT \(StoreRecords.outboxColumns), lease_token FROM outbox WHERE id = ?", [id]) {
                OutboxLease(message: StoreRecords.outbox($0), token: $0.int(14), until: until)
            }.map(OutboxLeasing.leased) ?? .unavailable
        }
    }

    public func markSent(_ lease: OutboxLease, at: Millis, keepBody: Bool) throws -> Bool {
        let scrub = keepBody ? "" : ", body = '', html_body = NULL, subject = NULL, metadata = '{}'"
        return try db.run("""
            UPDATE outbox SET status = 'sent', sent_at = ?, lease_until = NULL, last_error = NULL\(scrub)
            WHERE id = ? AND status = 'sending' AND lease_token = ?
            """, [at, lease.message.id, lease.token]) == 1
    }

    public func markFailed(_ lease: OutboxLease, error: String, nextAttemptAt: Millis?, at: Millis) throws -> Bool {
        let error = String(error.prefix(500))
        if let next = nextAttemptAt {
            return try db.run("""
                UPDATE outbox SET status = 'pending', attempts = attempts + 1, next_attempt_at = ?, lease_until = NULL, last_error = ?
                WHERE id = ? AND status = 'sending' AND lease_token = ?
                """, [next, error, lease.message.id, lease.token]) == 1
        }
        return try db.run("""
            UPDATE outbox SET status = 'dead', attempts = attempts + 1, lease_until = NULL, last_error = ?,
            body = '', html_body = NULL, metadata = '{}'
            WHERE id = ? AND status = 'sending' AND lease_token = ?
            """, [error, lease.message.id, lease.token]) == 1
    }

    public func messages(project: String, channel: OutboxMessage.Channel, limit: Int) throws -> [OutboxMessage] {
        try db.rows("SELECT \(StoreRecords.outboxColumns) FROM outbox WHERE project_id = ? AND channel = ? ORDER BY id DESC LIMIT ?",
                    [project, channel.rawValue, limit], StoreRecords.outbox).reversed()
    }
}

// MARK: - Audit log and app tokens

extension SQLiteStore: AuditStore, AppTokenStore {
    public func audit(_ e: AuditEvent, at: Millis) throws {
        try db.run("INSERT INTO audit_log (at, project_id, event, local_id, remote_address, detail, actor, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [at, e.projectID, e.event, e.localID, e.remoteAddress, e.detail, e.actor, e.outcome])
    }

    public func auditEvents(project: String?, localID: String?, since: Millis?, limit: Int) throws -> [AuditRecord] {
        // Newest first. Ids grow with time, so the scan runs in id order; a user's rows come
        // from the (project, local_id, at) index.
        var conditions: [String] = []
        var values: [SQLBindable] = []
        if let project { conditions.append("project_id = ?"); values.append(project) }
        if let localID { conditions.append("local_id = ?"); values.append(localID) }
        if let since { conditions.append("at >= ?"); values.append(since) }
        values.append(limit)
        return try db.rows("""
            SELECT \(StoreRecords.auditColumns) FROM audit_log\(conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            ORDER BY id DESC LIMIT ?
            """, values, StoreRecords.audit)
    }

    public func insertAppToken(_ t: AppTokenRecord, at: Millis) throws {
        try db.run("INSERT INTO app_tokens (token_hash, project_id, api_key, app_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                   [t.tokenHash, t.projectID, t.apiKey, t.appID, at, t.expiresAt])
    }

    public func consumeAppToken(hash: [UInt8], now: Millis) throws -> AppTokenRecord? {
        try db.transaction {
            let rec = try db.first("SELECT token_hash, project_id, api_key, app_id, expires_at FROM app_tokens WHERE token_hash = ?", [hash]) {
                AppTokenRecord(tokenHash: $0.blob(0), projectID: $0.text(1), apiKey: $0.text(2), appID: $0.text(3), expiresAt: $0.int(4))
            }
            guard let rec else { return nil }
            guard try db.run("DELETE FROM app_tokens WHERE token_hash = ?", [hash]) == 1 else { return nil }
            try db.run("DELETE FROM app_tokens WHERE expires_at <= ?", [now])
            return rec.expiresAt > now ? rec : nil
        }
    }
}
