extension Migrations {
    /// Migration 9: holds of SMS destinations (docs/security.md "SMS pumping"). The send counts
    /// themselves are limit counters (`limit_counters`, 5-minute windows kept 26 hours).
    /// A released or expired hold keeps its row: a release stops automatic holds of the same
    /// destination for a day, and the rows are the operator's record of what was held.
    static let pumping: [(version: Int, sql: String)] = [
        (9, """
        CREATE TABLE sms_holds (
            project_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            held_at INTEGER NOT NULL,
            expires_at INTEGER,
            released_at INTEGER,
            recent_count INTEGER NOT NULL,
            baseline_count INTEGER NOT NULL,
            PRIMARY KEY (project_id, kind, key)
        ) WITHOUT ROWID;
        """),
    ]
}
