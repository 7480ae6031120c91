extension Migrations {
    /// Migration 7: fewer B-tree pages written per sign-in (each dirty page is a WAL frame, then a
    /// checkpoint copy). Measured with `bench/profile wal phone_flow`: a phone sign-in wrote 10
    /// pages, 3 of them to these structures.
    /// - `audit_log` without AUTOINCREMENT: every insert also rewrote its `sqlite_sequence` row.
    ///   The log is append-only (never deleted from), so `max(id) + 1` gives the same ids; the
    ///   rows keep theirs. Its per-user index goes too: nothing in Gatehouse reads the log (an
    ///   operator looking up one user's events scans it, or adds the index).
    /// - `refresh_tokens`: the family index folds into the per-user one, `(project_id,
    ///   local_id, family_id)`: a family belongs to one user, so revoking it (reuse of a rotated
    ///   token, `revokeRefreshFamily`) finds it under that user, and every other query reads the
    ///   index's `(project_id, local_id)` prefix as before.
    static let flowPages: [(version: Int, sql: String)] = [
        (7, """
        CREATE TABLE audit_log_7 (
            id INTEGER PRIMARY KEY,
            at INTEGER NOT NULL,
            project_id TEXT NOT NULL,
            event TEXT NOT NULL,
            local_id TEXT,
            remote_address TEXT,
            detail TEXT
        );
        INSERT INTO audit_log_7 (id, at, project_id, event, local_id, remote_address, detail)
            SELECT id, at, project_id, event, local_id, remote_address, detail FROM audit_log ORDER BY id;
        DROP TABLE audit_log;
        ALTER TABLE audit_log_7 RENAME TO audit_log;
        DELETE FROM sqlite_sequence WHERE name IN ('audit_log', 'audit_log_7');

        DROP INDEX refresh_tokens_family;
        DROP INDEX refresh_tokens_user;
        CREATE INDEX refresh_tokens_user ON refresh_tokens(project_id, local_id, family_id);
        """),
    ]
}
