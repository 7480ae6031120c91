extension Migrations {
    /// Migration 2: phone sign-in. `nonce` is what each sessionInfo is derived from (so a repeated
    /// send can return the same sessionInfo while only its hash is stored); `superseded_at` marks a
    /// code replaced by "send again"; `phone_proofs` holds hashed `temporaryProof`s.
    static let phone: [(version: Int, sql: String)] = [
        (2, """
        ALTER TABLE phone_verifications ADD COLUMN nonce BLOB NOT NULL DEFAULT x'';
        ALTER TABLE phone_verifications ADD COLUMN superseded_at INTEGER;
        CREATE INDEX phone_verifications_expiry ON phone_verifications(expires_at);

        CREATE TABLE phone_proofs (
            proof_hash BLOB PRIMARY KEY,
            project_id TEXT NOT NULL,
            phone_number TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX phone_proofs_expiry ON phone_proofs(expires_at);
        """),
        // Migration 6: the pending-code lookup and "send again" read only open codes; without this
        // partial index they scanned every used code of the number (flows/s fell as codes piled up).
        (6, """
        DROP INDEX phone_verifications_pending;
        CREATE INDEX phone_verifications_open ON phone_verifications(project_id, phone_number, app_id, created_at)
            WHERE consumed_at IS NULL AND superseded_at IS NULL;
        """),
        // Migration 8: a pending code is handed back only to the client that asked for it. Codes
        // from before have no client and are never handed back (the next send issues a new one).
        (8, """
        ALTER TABLE phone_verifications ADD COLUMN client_hash BLOB NOT NULL DEFAULT x'';
        """),
    ]
}
