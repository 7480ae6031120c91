import AuthEngine

// MARK: - Limits

extension PostgreSQLStore: LimitStore {
    /// One statement: the insert or the increment, and the new total.
    public func incrementCounter(bucket: String, windowStart: Millis, amount: Int, expiresAt: Millis) throws -> Int {
        Int(try db.first("""
            INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (bucket, window_start) DO UPDATE SET count = limit_counters.count + excluded.count
            RETURNING count
            """, [bucket, windowStart, amount, expiresAt]) { $0.int(0) } ?? 0)
    }

    public func counter(bucket: String, windowStart: Millis) throws -> Int {
        Int(try db.first("SELECT count FROM limit_counters WHERE bucket = ? AND window_start = ?", [bucket, windowStart]) { $0.int(0) } ?? 0)
    }

    public func purgeCounters(before: Millis) throws {
        try db.run("DELETE FROM limit_counters WHERE expires_at < ?", [before])
    }
}

// MARK: - Outbox

extension PostgreSQLStore: OutboxStore {
    public func enqueue(_ m: OutboxMessage) throws -> Int64 {
        try db.first("""
            INSERT INTO outbox (project_id, channel, recipient, subject, body, html_body, metadata, status, attempts, next_attempt_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) RETURNING id
            """, [m.projectID, m.channel.rawValue, m.recipient, m.subject, m.body, m.htmlBody, m.metadata, m.nextAttemptAt, m.createdAt]) {
            $0.int(0)
        } ?? 0
    }

    public func outboxBacklog() throws -> [OutboxBacklog] {
        try db.rows("""
            SELECT channel, COUNT(*), MIN(created_at) FROM outbox WHERE status IN ('pending', 'sending') GROUP BY channel ORDER BY channel
            """, []) { r in OutboxMessage.Channel(rawValue: r.text(0)).map { OutboxBacklog(channel: $0, count: Int(r.int(1)), oldestCreatedAt: r.int(2)) } }
            .compactMap { $0 }
    }

    public func dueMessageIDs(now: Millis, limit: Int, channels: [OutboxMessage.Channel]) throws -> [Int64] {
        guard !channels.isEmpty else { return [] }
        let placeholders = Array(repeating: "?", count: channels.count).joined(separator: ", ")
        let values: [SQLBindable] = [now, now] + channels.map { $0.rawValue } + [limit]
        return try db.rows("""
            SELECT id FROM outbox
            WHERE ((status = 'pending' AND next_attempt_at <= ?) OR (status = 'sending' AND lease_until <= ?))
              AND channel IN (\(placeholders))
            ORDER BY next_attempt_at, id LIMIT ?
            """, values) { $0.int(0) }
    }

    /// The row is locked with `SKIP LOCKED` (a worker on another machine leasing it at the same
    /// moment is skipped, not waited for) and changed in the same statement: made dead when its
    /// attempts are used up (counting the one an expired lease lost), else leased; the lease
    /// token fences every outcome recorded later. Each statement checks the attempts itself, so
    /// no message with none left is leased whatever happens between the two.
    public func lease(id: Int64, now: Millis, until: Millis, maxAttempts: Int) throws -> OutboxLeasing {
        // An expired lease is an attempt that ended without an outcome (`sending` is only ever
        // left by recording one); every SET expression reads the row as it was.
        let lost = "(CASE WHEN status = 'sending' THEN 1 ELSE 0 END)"
        let due = "((status = 'pending' AND next_attempt_at <= ?) OR (status = 'sending' AND lease_until <= ?))"
        if let dead = try db.first("""
            UPDATE outbox SET status = 'dead', attempts = attempts + \(lost), lease_until = NULL,
              last_error = CASE WHEN status = 'sending' THEN ? ELSE last_error END, body = '', html_body = NULL, metadata = '{}'
            WHERE id = (SELECT id FROM outbox WHERE id = ? AND \(due) AND attempts + \(lost) >= ? FOR UPDATE SKIP LOCKED)
            RETURNING \(StoreRecords.outboxColumns)
            """, [OutboxLeasing.lostAttemptError, id, now, now, maxAttempts], StoreRecords.outbox) {
            return .exhausted(dead)
        }
        return try db.first("""
            UPDATE outbox SET status = 'sending', lease_until = ?, lease_token = lease_token + 1, attempts = attempts + \(lost)
            WHERE id = (SELECT id FROM outbox WHERE id = ? AND \(due) AND attempts + \(lost) < ? FOR UPDATE SKIP LOCKED)
            RETURNING \(StoreRecords.outboxColumns), lease_token
            """, [until, id, now, now, maxAttempts]) {
            OutboxLease(message: StoreRecords.outbox($0), token: $0.int(14), until: until)
        }.map(OutboxLeasing.leased) ?? .unavailable
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

extension PostgreSQLStore: AuditStore, AppTokenStore {
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

    /// Deleted and returned in one statement: of two instances consuming it at once, one gets it.
    public func consumeAppToken(hash: [UInt8], now: Millis) throws -> AppTokenRecord? {
        let rec = try db.first("DELETE FROM app_tokens WHERE token_hash = ? RETURNING token_hash, project_id, api_key, app_id, expires_at",
                               [hash]) {
            AppTokenRecord(tokenHash: $0.blob(0), projectID: $0.text(1), apiKey: $0.text(2), appID: $0.text(3), expiresAt: $0.int(4))
        }
        guard let rec else { return nil }
        try db.run("DELETE FROM app_tokens WHERE expires_at <= ?", [now])
        return rec.expiresAt > now ? rec : nil
    }
}
