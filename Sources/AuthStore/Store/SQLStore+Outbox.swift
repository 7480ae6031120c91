public import AuthEngine

/// `outbox`: messages waiting for delivery, leased by one worker at a time. A lease takes the
/// next `lease_token`, and an outcome is recorded only while the token is still the worker's, so
/// a worker whose lease expired and was taken over cannot overwrite the new holder's result.
extension SQLStore: OutboxStore {
    public func enqueue(_ m: OutboxMessage) throws -> Int64 {
        try db.writeFirst("""
            INSERT INTO outbox (project_id, channel, recipient, subject, body, html_body, metadata, status, attempts, next_attempt_at, created_at,
              region, language, fallback_at, session_hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?) RETURNING id
            """, [m.projectID, m.channel.rawValue, m.recipient, m.subject, m.body, m.htmlBody, m.metadata, m.nextAttemptAt, m.createdAt,
                  m.region, m.language, m.fallbackAt, m.sessionHash]) {
            $0.int(0)
        } ?? 0
    }

    public func outboxBacklog() throws -> [OutboxBacklog] {
        try db.rows("""
            SELECT channel, COUNT(*), MIN(created_at) FROM outbox WHERE status IN ('pending', 'sending') GROUP BY channel ORDER BY channel
            """, []) { r in
            let raw = r.text(0)
            guard let channel = OutboxMessage.Channel(rawValue: raw) else {
                throw UnreadableColumn(table: "outbox", column: "channel", value: "\"\(raw.prefix(40))\"")
            }
            return OutboxBacklog(channel: channel, count: Int(r.int(1)), oldestCreatedAt: r.int(2))
        }
    }

    public func dueMessageIDs(now: Millis, limit: Int, channels: [OutboxMessage.Channel]) throws -> [Int64] {
        guard !channels.isEmpty else { return [] }
        // One placeholder per channel: the values are bound, never spliced into the SQL.
        let placeholders = Array(repeating: "?", count: channels.count).joined(separator: ", ")
        let values: [any SQLBindable] = [now, now] + channels.map { $0.rawValue as any SQLBindable } + [limit]
        return try db.rows("""
            SELECT id FROM outbox
            WHERE ((status = 'pending' AND next_attempt_at <= ?) OR (status = 'sending' AND lease_until <= ?))
              AND channel IN (\(placeholders))
            ORDER BY next_attempt_at, id LIMIT ?
            """, values) { $0.int(0) }
    }

    /// The row is chosen and changed in one statement (on PostgreSQL skipping a row another
    /// instance is claiming at that moment): made dead when its attempts are used up (counting the
    /// one an expired lease lost), else leased. Each statement checks the attempts itself, so no
    /// message with none left is leased whatever happens between the two.
    public func lease(id: Int64, now: Millis, until: Millis, maxAttempts: Int) throws -> OutboxLeasing {
        // An expired lease is an attempt that ended without an outcome (`sending` is only ever
        // left by recording one); every SET expression reads the row as it was.
        let lost = "(CASE WHEN status = 'sending' THEN 1 ELSE 0 END)"
        let due = "((status = 'pending' AND next_attempt_at <= ?) OR (status = 'sending' AND lease_until <= ?))"
        let skip = db.dialect.skipLocked
        if let dead = try db.writeFirst("""
            UPDATE outbox SET status = 'dead', attempts = attempts + \(lost), lease_until = NULL,
              last_error = CASE WHEN status = 'sending' THEN ? ELSE last_error END, body = '', html_body = NULL, metadata = '{}',
              fallback_at = CASE WHEN fallback_at IS NULL THEN NULL ELSE ? END
            WHERE id = (SELECT id FROM outbox WHERE id = ? AND \(due) AND attempts + \(lost) >= ?\(skip))
            RETURNING \(OutboxColumn.table.columnList)
            """, [OutboxLeasing.lostAttemptError, now, id, now, now, maxAttempts], OutboxColumn.read) {
            return .exhausted(dead)
        }
        return try db.writeFirst("""
            UPDATE outbox SET status = 'sending', lease_until = ?, lease_token = lease_token + 1, attempts = attempts + \(lost)
            WHERE id = (SELECT id FROM outbox WHERE id = ? AND \(due) AND attempts + \(lost) < ?\(skip))
            RETURNING \(OutboxColumn.table.columnList)
            """, [until, id, now, now, maxAttempts]) { try OutboxColumn.lease($0, until: until) }
            .map(OutboxLeasing.leased) ?? .unavailable
    }

    public func markSent(_ lease: OutboxLease, at: Millis, keepBody: Bool, accepted: ProviderAcceptance?) throws -> Bool {
        let scrub = keepBody ? "" : ", body = '', html_body = NULL, subject = NULL, metadata = '{}'"
        // A receipt can outrun this write (the provider answered the send and reported at once):
        // the delivery state is only ever moved forward.
        return try db.run("""
            UPDATE outbox SET status = 'sent', sent_at = ?, lease_until = NULL, last_error = NULL\(scrub),
              provider = COALESCE(?, provider), provider_message_id = COALESCE(?, provider_message_id),
              delivery = COALESCE(delivery, 'sent')
            WHERE id = ? AND status = 'sending' AND lease_token = ?
            """, [at, accepted?.provider, accepted?.messageID, lease.message.id, lease.token]) == 1
    }

    public func markFailed(_ lease: OutboxLease, error: String, nextAttemptAt: Millis?, at: Millis, pinnedTo: String?) throws -> Bool {
        let error = String(error.prefix(500))
        if let next = nextAttemptAt {
            return try db.run("""
                UPDATE outbox SET status = 'pending', attempts = attempts + 1, next_attempt_at = ?, lease_until = NULL, last_error = ?,
                  provider = COALESCE(?, provider)
                WHERE id = ? AND status = 'sending' AND lease_token = ?
                """, [next, error, pinnedTo, lease.message.id, lease.token]) == 1
        }
        return try db.run("""
            UPDATE outbox SET status = 'dead', attempts = attempts + 1, lease_until = NULL, last_error = ?,
            body = '', html_body = NULL, metadata = '{}', provider = COALESCE(?, provider),
            fallback_at = CASE WHEN fallback_at IS NULL THEN NULL ELSE ? END
            WHERE id = ? AND status = 'sending' AND lease_token = ?
            """, [error, pinnedTo, at, lease.message.id, lease.token]) == 1
    }

    public func messages(project: String, channel: OutboxMessage.Channel, limit: Int) throws -> [OutboxMessage] {
        try db.rows("\(OutboxColumn.table.select) WHERE project_id = ? AND channel = ? ORDER BY id DESC LIMIT ?",
                    [project, channel.rawValue, limit], OutboxColumn.read).reversed()
    }
}
