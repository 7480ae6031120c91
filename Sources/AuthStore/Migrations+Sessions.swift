extension Migrations {
    /// Migration 5: server-side browser sessions (idle timeout, per-cookie sign-out) and the
    /// indexes the refresh-token and revocation queries need.
    static let sessions: [(version: Int, sql: String)] = [
        (5, """
        CREATE TABLE sessions (
            sid_hash BLOB PRIMARY KEY,
            project_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            provider TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            last_seen_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            idle_timeout_seconds INTEGER NOT NULL DEFAULT 0,
            revoked_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX sessions_user ON sessions(project_id, local_id, created_at);
        CREATE INDEX sessions_expiry ON sessions(expires_at);
        CREATE INDEX refresh_tokens_revoked ON refresh_tokens(revoked_at) WHERE revoked_at IS NOT NULL;
        CREATE INDEX refresh_tokens_rotated ON refresh_tokens(rotated_at) WHERE rotated_at IS NOT NULL;
        CREATE INDEX signing_keys_expiry ON signing_keys(expires_at) WHERE expires_at IS NOT NULL;
        """),
    ]
}
