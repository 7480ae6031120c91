public import AuthEngine

/// The operator console's lists: every one reads an index range (BENCHMARKS.md "Console").
extension SQLStore: ConsoleStore {
    /// An order pages by a (time, uid) cursor over `accounts_created` or `accounts_last_sign_in`;
    /// a search by its field's prefix, in byte order, over the primary key or the unique index
    /// of the email or number (an email or number is one account's, so the key alone pages).
    public func accountPage(project: String, _ q: AccountListing) throws -> [Account] {
        let limit = max(1, min(q.limit, 500))
        let order = db.dialect.byteOrder
        if let field = q.searchField {
            let column = switch field { case .uid: "local_id"; case .email: "email"; case .phone: "phone_number" }
            let c = column + order
            // Every text that starts with the prefix sorts before the prefix followed by the
            // largest code point (byte order), and at or after the prefix.
            var sql = "\(AccountColumn.table.select) WHERE project_id = ? AND \(c) >= ? AND \(c) < ?"
            var values: [any SQLBindable] = [project, q.searchPrefix, q.searchPrefix + "\u{10FFFF}"]
            if let after = q.afterKey { sql += " AND \(c) > ?"; values.append(after) }
            sql += " ORDER BY \(c) LIMIT ?"
            values.append(limit)
            return try db.rows(sql, values, AccountColumn.read)
        }
        let time = q.order == .created ? "created_at" : "last_login_at"
        var sql = "\(AccountColumn.table.select) WHERE project_id = ?"
        var values: [any SQLBindable] = [project]
        if q.order == .lastSignIn { sql += " AND last_login_at IS NOT NULL" }
        if let t = q.afterTime, let id = q.afterLocalID {
            // The range on the time keeps the index's order; the uid breaks ties.
            sql += " AND \(time) <= ? AND (\(time) < ? OR local_id\(order) < ?)"
            values += [t, t, id]
        }
        sql += " ORDER BY \(time) DESC, local_id\(order) DESC LIMIT ?"
        values.append(limit)
        return try db.rows(sql, values, AccountColumn.read)
    }

    /// A user's trail reads `audit_log_user`; the other filters scan back from `beforeID`, never
    /// below `fromID`.
    public func auditPage(_ f: AuditFilter) throws -> [AuditRecord] {
        var conditions: [String] = []
        var values: [any SQLBindable] = []
        if let p = f.project { conditions.append("project_id = ?"); values.append(p) }
        if let u = f.localID { conditions.append("local_id = ?"); values.append(u) }
        if let a = f.actor { conditions.append("actor = ?"); values.append(a) }
        if let e = f.event { conditions.append("event = ?"); values.append(e) }
        if let from = f.fromID { conditions.append("id >= ?"); values.append(from) }
        if let before = f.beforeID { conditions.append("id < ?"); values.append(before) }
        values.append(max(1, min(f.limit, 500)))
        return try db.rows("""
            \(AuditColumn.table.select)\(conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")) ORDER BY id DESC LIMIT ?
            """, values, AuditColumn.read)
    }

    /// Bisection over ids (each probe one primary-key look-up): `at` grows with the id, except
    /// across a clock set back, where the answer is some id near the step. The bounds are two
    /// subqueries: SQLite answers a lone `MIN` or `MAX` from the key's end, but `MIN(id), MAX(id)`
    /// in one select scans the table (190 ms on two million rows).
    public func auditID(atOrAfter at: Millis) throws -> Int64 {
        guard let bounds = try db.first("SELECT (SELECT MIN(id) FROM audit_log), (SELECT MAX(id) FROM audit_log)", [], { r -> (Int64, Int64)? in
            guard let lo = r.intOrNil(0), let hi = r.intOrNil(1) else { return nil }
            return (lo, hi)
        }), let (lo0, hi0) = bounds else { return 1 }
        var lo = lo0, hi = hi0 + 1
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            // The first row at or after `mid` (ids may have gaps).
            guard let row = try db.first("SELECT id, at FROM audit_log WHERE id >= ? ORDER BY id LIMIT 1", [mid], { ($0.int(0), $0.int(1)) })
            else { hi = mid; continue }
            if row.1 >= at { hi = mid } else { lo = row.0 + 1 }
        }
        return lo
    }

    public func auditCounts(project: String, fromID: Int64, toID: Int64, bucketMillis: Millis) throws -> [AuditCount] {
        let size = max(1, bucketMillis)
        return try db.rows("""
            SELECT (at / ?) * ? AS bucket, event, outcome, COUNT(*) FROM audit_log
            WHERE id >= ? AND id < ? AND project_id = ? GROUP BY bucket, event, outcome
            """, [size, size, fromID, toID, project]) {
            AuditCount(bucketStart: $0.int(0), event: $0.text(1), outcome: $0.text(2), count: Int(clamping: $0.int(3)))
        }
    }

    public func counterWindows(prefix: String, from: Millis, to: Millis) throws -> [CounterWindow] {
        let b = "bucket" + db.dialect.byteOrder
        return try db.rows("""
            SELECT bucket, window_start, count FROM limit_counters
            WHERE \(b) >= ? AND \(b) < ? AND window_start >= ? AND window_start < ? ORDER BY \(b), window_start
            """, [prefix, prefix + "\u{10FFFF}", from, to]) {
            CounterWindow(bucket: $0.text(0), windowStart: $0.int(1), count: Int(clamping: $0.int(2)))
        }
    }

    public func outboxPage(project: String, statuses: [OutboxMessage.Status], failedOnly: Bool, beforeID: Int64?,
                           limit: Int) throws -> [OutboxMessage] {
        guard !statuses.isEmpty else { return [] }
        var sql = "\(OutboxColumn.table.select) WHERE status IN (\(statuses.map { _ in "?" }.joined(separator: ", "))) AND project_id = ?"
        var values: [any SQLBindable] = statuses.map(\.rawValue)
        values.append(project)
        if failedOnly { sql += " AND last_error IS NOT NULL" }
        if let beforeID { sql += " AND id < ?"; values.append(beforeID) }
        sql += " ORDER BY id DESC LIMIT ?"
        values.append(max(1, min(limit, 500)))
        return try db.rows(sql, values, OutboxColumn.read)
    }

    public func retryMessage(id: Int64, project: String, now: Millis) throws -> Bool {
        try db.run("""
            UPDATE outbox SET next_attempt_at = ?, attempts = 0 WHERE id = ? AND project_id = ? AND status = 'pending'
            """, [now, id, project]) == 1
    }

    public func discardMessage(id: Int64, project: String, reason: String, at: Millis) throws -> Bool {
        try transaction {
            if try db.run("DELETE FROM outbox WHERE id = ? AND project_id = ? AND status = 'dead'", [id, project]) == 1 { return true }
            return try db.run("""
                UPDATE outbox SET status = 'dead', last_error = ?, next_attempt_at = ?, body = '', html_body = NULL, metadata = '{}'
                WHERE id = ? AND project_id = ? AND status = 'pending'
                """, [String(reason.prefix(500)), at, id, project]) == 1
        }
    }
}
