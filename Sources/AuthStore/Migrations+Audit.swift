extension Migrations {
    /// Migration 14: who did it (`actor`: the user, `admin` over the Admin API, `cli`) and how it
    /// ended (`outcome`: `ok`, or `refused` for a security refusal worth keeping) for each row.
    static let auditActors: [(version: Int, sql: String)] = [
        (14, """
        ALTER TABLE audit_log ADD COLUMN actor TEXT;
        ALTER TABLE audit_log ADD COLUMN outcome TEXT NOT NULL DEFAULT 'ok';
        """),
    ]
}
