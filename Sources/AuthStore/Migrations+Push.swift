extension Migrations {
    /// Migration 12: silent-push app verification. Receipts of `verifyIosClient`, stored as hashes
    /// with the hash of their secret, bound to project, app and device, counted per send; the
    /// expiry index serves housekeeping. (The pushes themselves are outbox rows, channel `push`.)
    static let push: [(version: Int, sql: String)] = [
        (12, """
        CREATE TABLE ios_receipts (
            receipt_hash BLOB PRIMARY KEY,
            project_id TEXT NOT NULL,
            bundle_id TEXT NOT NULL,
            device_token_hash BLOB NOT NULL,
            sandbox INTEGER NOT NULL,
            secret_hash BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            uses INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE INDEX ios_receipts_expiry ON ios_receipts(expires_at);
        """),
    ]
}
