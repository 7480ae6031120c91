extension Migrations {
    /// Migration 13: the developer claims of a custom-token sign-in (a JSON object, or NULL),
    /// kept with the refresh token so that every refreshed ID token carries them again.
    static let customTokens: [(version: Int, sql: String)] = [
        (13, "ALTER TABLE refresh_tokens ADD COLUMN developer_claims TEXT;"),
    ]
}
