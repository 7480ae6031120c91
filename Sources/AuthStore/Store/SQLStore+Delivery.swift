public import AuthEngine

/// What providers report of the outbox's messages, and the phone codes' automatic fallback
/// (`DeliveryStore`). A receipt is one conditional UPDATE: only a forward move, of a message a
/// provider accepted, changes the row, so a replayed or reordered receipt changes nothing.
extension SQLStore: DeliveryStore {
    public func outboxMessage(id: Int64) throws -> OutboxMessage? {
        try db.first("\(OutboxColumn.table.select) WHERE id = ?", [id], OutboxColumn.read)
    }

    public func recordReceipt(id: Int64, state: DeliveryState, error: String?, at: Millis, from: String?) throws -> Bool {
        // The ranks of `DeliveryState`, spelled in SQL: the row's current one must be lower.
        let current = "(CASE WHEN delivery IS NULL OR delivery = 'queued' THEN 0 WHEN delivery = 'sent' THEN 1 ELSE 2 END)"
        let fallback: String
        switch state {
        case .delivered: fallback = "NULL"
        case .undelivered, .failed: fallback = "CASE WHEN fallback_at IS NULL THEN NULL ELSE ? END"
        case .queued, .sent: fallback = "fallback_at"
        }
        var values: [any SQLBindable] = [state.rawValue, error.map { String($0.prefix(64)) }, at]
        if state == .undelivered || state == .failed { values.append(at) }
        values.append(id)
        // Whose message: the reporter's (or any provider's when not named); or, named, one still
        // being sent whose acceptance is not recorded yet.
        let whose: String
        if let from {
            whose = "(provider = ? OR (provider IS NULL AND status = 'sending'))"
            values.append(from)
        } else {
            whose = "provider IS NOT NULL"
        }
        values += [state.rank, state.rawValue]
        // The provider's own first `sent` report finds the state our acceptance already wrote:
        // it is its first report (no receipt time yet), not a replay.
        return try db.run("""
            UPDATE outbox SET delivery = ?, delivery_error = COALESCE(?, delivery_error), delivery_at = ?, fallback_at = \(fallback)
            WHERE id = ? AND \(whose)
              AND (\(current) < ? OR (delivery = 'sent' AND delivery_at IS NULL AND ? = 'sent'))
            """, values) == 1
    }

    public func dueFallbacks(now: Millis, limit: Int) throws -> [Int64] {
        try db.rows("SELECT id FROM outbox WHERE fallback_at IS NOT NULL AND fallback_at <= ? ORDER BY fallback_at, id LIMIT ?",
                    [now, limit]) { $0.int(0) }
    }

    public func claimFallback(id: Int64, now: Millis) throws -> OutboxMessage? {
        try db.writeFirst("""
            UPDATE outbox SET fallback_at = NULL WHERE id = ? AND fallback_at IS NOT NULL AND fallback_at <= ?
            RETURNING \(OutboxColumn.table.columnList)
            """, [id, now], OutboxColumn.read)
    }

    public func deliveryCounts(project: String, since: Millis) throws -> [DeliveryCount] {
        try db.rows("""
            SELECT channel, COALESCE(provider, ''), COALESCE(region, ''),
              CASE WHEN delivery IS NOT NULL THEN delivery WHEN status = 'dead' THEN 'failed' ELSE 'queued' END AS state, COUNT(*)
            FROM outbox WHERE project_id = ? AND created_at >= ?
            GROUP BY channel, COALESCE(provider, ''), COALESCE(region, ''), state ORDER BY 1, 2, 3, 4
            """, [project, since]) { r in
            let rawChannel = r.text(0), rawState = r.text(3)
            guard let channel = OutboxMessage.Channel(rawValue: rawChannel), let state = DeliveryState(rawValue: rawState) else {
                throw UnreadableColumn(table: "outbox", column: "channel", value: "\"\(rawChannel.prefix(40))\" \(rawState.prefix(20))")
            }
            return DeliveryCount(channel: channel, provider: r.text(1), region: r.text(2), state: state, count: Int(r.int(4)))
        }
    }
}
