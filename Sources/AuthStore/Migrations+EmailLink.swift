extension Migrations {
    /// Migration 4: email links. The table is in migration 1; this adds the index the purge of
    /// expired links walks.
    static let emailLink: [(version: Int, sql: String)] = [
        (4, """
        CREATE INDEX email_links_expiry ON email_links(expires_at);
        """),
    ]
}
