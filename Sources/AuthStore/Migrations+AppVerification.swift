extension Migrations {
    /// Migration 3: the app verification replay table (challenge id = SHA-256 digest, 32 bytes).
    static let appVerification: [(version: Int, sql: String)] = [
        (3, """
        CREATE TABLE app_verification_replays (
            challenge_id BLOB PRIMARY KEY,
            project_id TEXT NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX app_verification_replays_expiry ON app_verification_replays(expires_at);
        """),
    ]
}
