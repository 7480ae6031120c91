extension Migrations {
    /// Migration 11: phone second factor. An account's enrolled factors (a JSON array, read and
    /// written with the account); the pending credentials a first factor hands out to an enrolled
    /// user (stored hashed, single use, minutes long); the purpose a phone code was sent for (a
    /// second factor's code is bound to its enrolment or sign-in and signs nobody in as a first
    /// factor); and the second factor a refresh token's sign-in passed, carried into every
    /// refreshed ID token. Constant defaults rewrite no row.
    static let mfa: [(version: Int, sql: String)] = [
        (11, """
        ALTER TABLE accounts ADD COLUMN mfa TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE phone_verifications ADD COLUMN purpose TEXT NOT NULL DEFAULT '';
        ALTER TABLE refresh_tokens ADD COLUMN second_factor TEXT;
        CREATE TABLE mfa_pending (
            credential_hash BLOB PRIMARY KEY,
            project_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            first_factor TEXT NOT NULL,
            auth_time INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            consumed_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX mfa_pending_expiry ON mfa_pending(expires_at);
        """),
    ]
}
