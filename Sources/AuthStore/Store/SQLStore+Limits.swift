public import AuthEngine

/// `limit_counters` (fixed windows per bucket) and `sms_holds` (SMS pumping).
extension SQLStore: LimitStore, SMSPumpingStore {
    /// The insert or the increment, and the new total: one statement where `RETURNING` is cheap,
    /// else the upsert and a look-up in one transaction (see `SQLDialect.returningIsCheap`).
    public func incrementCounter(bucket: String, windowStart: Millis, amount: Int, expiresAt: Millis) throws -> Int {
        let upsert = """
            INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (bucket, window_start) DO UPDATE SET count = limit_counters.count + excluded.count
            """
        let values: [any SQLBindable] = [bucket, windowStart, amount, expiresAt]
        if db.dialect.returningIsCheap { return Int(try db.writeFirst(upsert + " RETURNING count", values) { $0.int(0) } ?? 0) }
        return try db.transaction {
            try db.run(upsert, values)
            return try counter(bucket: bucket, windowStart: windowStart)
        }
    }

    public func counter(bucket: String, windowStart: Millis) throws -> Int {
        try db.count("SELECT count FROM limit_counters WHERE bucket = ? AND window_start = ?", [bucket, windowStart])
    }

    public func purgeCounters(before: Millis) throws {
        try db.run("DELETE FROM limit_counters WHERE expires_at < ?", [before])
    }

    public func counterSum(bucket: String, from: Millis, to: Millis) throws -> Int {
        try db.count("""
            SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM limit_counters WHERE bucket = ? AND window_start >= ? AND window_start < ?
            """, [bucket, from, to])
    }

    public func smsHold(project: String, kind: SMSHold.Kind, key: String) throws -> SMSHold? {
        try db.first("\(SMSHoldColumn.table.select) WHERE project_id = ? AND kind = ? AND key = ?", [project, kind.rawValue, key],
                     SMSHoldColumn.read)
    }

    public func putSMSHold(_ h: SMSHold) throws {
        try db.run("""
            \(SMSHoldColumn.table.insert)
            ON CONFLICT (project_id, kind, key) DO UPDATE SET held_at = excluded.held_at, expires_at = excluded.expires_at,
                released_at = excluded.released_at, recent_count = excluded.recent_count, baseline_count = excluded.baseline_count
            """, SMSHoldColumn.values(h))
    }

    public func smsHolds(project: String?) throws -> [SMSHold] {
        let order = db.dialect.byteOrder
        if let project {
            return try db.rows("\(SMSHoldColumn.table.select) WHERE project_id = ? ORDER BY held_at, key\(order)", [project], SMSHoldColumn.read)
        }
        return try db.rows("\(SMSHoldColumn.table.select) ORDER BY held_at, project_id\(order), key\(order)", [], SMSHoldColumn.read)
    }
}
