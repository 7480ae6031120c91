import AuthEngine

extension SQLiteStore: SMSPumpingStore {
    public func counterSum(bucket: String, from: Millis, to: Millis) throws -> Int {
        Int(try db.first("SELECT COALESCE(SUM(count), 0) FROM limit_counters WHERE bucket = ? AND window_start >= ? AND window_start < ?",
                         [bucket, from, to]) { $0.int(0) } ?? 0)
    }

    static let holdColumns = "project_id, kind, key, held_at, expires_at, released_at, recent_count, baseline_count"

    static func hold(_ r: Row) -> SMSHold {
        SMSHold(projectID: r.text(0), kind: SMSHold.Kind(rawValue: r.text(1)) ?? .prefix, key: r.text(2), heldAt: r.int(3),
                expiresAt: r.intOrNil(4), releasedAt: r.intOrNil(5), recentCount: Int(r.int(6)), baselineCount: Int(r.int(7)))
    }

    public func smsHold(project: String, kind: SMSHold.Kind, key: String) throws -> SMSHold? {
        try db.first("SELECT \(SQLiteStore.holdColumns) FROM sms_holds WHERE project_id = ? AND kind = ? AND key = ?",
                     [project, kind.rawValue, key], SQLiteStore.hold)
    }

    public func putSMSHold(_ h: SMSHold) throws {
        try db.run("INSERT OR REPLACE INTO sms_holds (\(SQLiteStore.holdColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [h.projectID, h.kind.rawValue, h.key, h.heldAt, h.expiresAt, h.releasedAt, h.recentCount, h.baselineCount])
    }

    public func smsHolds(project: String?) throws -> [SMSHold] {
        if let project {
            return try db.rows("SELECT \(SQLiteStore.holdColumns) FROM sms_holds WHERE project_id = ? ORDER BY held_at, key", [project], SQLiteStore.hold)
        }
        return try db.rows("SELECT \(SQLiteStore.holdColumns) FROM sms_holds ORDER BY held_at, project_id, key", [], SQLiteStore.hold)
    }
}
