import AuthEngine

extension SQLiteStore: SMSPumpingStore {
    public func counterSum(bucket: String, from: Millis, to: Millis) throws -> Int {
        Int(try db.first("SELECT COALESCE(SUM(count), 0) FROM limit_counters WHERE bucket = ? AND window_start >= ? AND window_start < ?",
                         [bucket, from, to]) { $0.int(0) } ?? 0)
    }

    public func smsHold(project: String, kind: SMSHold.Kind, key: String) throws -> SMSHold? {
        try db.first("SELECT \(StoreRecords.holdColumns) FROM sms_holds WHERE project_id = ? AND kind = ? AND key = ?",
                     [project, kind.rawValue, key], StoreRecords.hold)
    }

    public func putSMSHold(_ h: SMSHold) throws {
        try db.run("INSERT OR REPLACE INTO sms_holds (\(StoreRecords.holdColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [h.projectID, h.kind.rawValue, h.key, h.heldAt, h.expiresAt, h.releasedAt, h.recentCount, h.baselineCount])
    }

    public func smsHolds(project: String?) throws -> [SMSHold] {
        if let project {
            return try db.rows("SELECT \(StoreRecords.holdColumns) FROM sms_holds WHERE project_id = ? ORDER BY held_at, key", [project], StoreRecords.hold)
        }
        return try db.rows("SELECT \(StoreRecords.holdColumns) FROM sms_holds ORDER BY held_at, project_id, key", [], StoreRecords.hold)
    }
}
