extension Migrations {
    /// Migration 10: the outbox's lease token. Each lease of a message takes the next token, and a
    /// worker records its outcome only while the token is still its own, so a worker whose lease
    /// expired and was taken over cannot overwrite the new holder's result. Adding a column with
    /// a constant default rewrites no row; existing rows start at 0.
    static let outboxLease: [(version: Int, sql: String)] = [
        (10, """
        ALTER TABLE outbox ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;
        """),
    ]
}
