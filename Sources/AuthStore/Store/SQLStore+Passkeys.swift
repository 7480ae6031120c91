public import AuthEngine

/// `passkeys` (credentials, unique per project) and `passkey_challenges` (hashed, single use).
extension SQLStore: PasskeyStore {
    public func insertPasskeyChallenge(_ r: PasskeyChallengeRecord) throws { try insert(r, PasskeyChallengeColumn.self) }

    public func passkeyChallenge(hash: [UInt8]) throws -> PasskeyChallengeRecord? { try find(PasskeyChallengeColumn.self, hash) }

    public func consumePasskeyChallenge(hash: [UInt8], now: Millis) throws -> Bool {
        try db.run("UPDATE passkey_challenges SET consumed_at = ? WHERE challenge_hash = ? AND consumed_at IS NULL AND expires_at > ?",
                   [now, hash, now]) > 0
    }

    @discardableResult
    public func purgePasskeyChallenges(before: Millis) throws -> Int {
        try db.run("DELETE FROM passkey_challenges WHERE expires_at < ?", [before])
    }

    public func insertPasskey(_ r: PasskeyRecord) throws -> Bool {
        // The key decides: a credential id another user registered meanwhile is refused by it,
        // on both databases (a conditional insert rather than a caught violation, which would
        // end a PostgreSQL transaction).
        try db.run("""
            \(PasskeyColumn.table.insert)
            ON CONFLICT (project_id, credential_id) DO NOTHING
            """, PasskeyColumn.values(r)) > 0
    }

    public func passkey(project: String, credentialID: String) throws -> PasskeyRecord? {
        try find(PasskeyColumn.self, project, credentialID)
    }

    public func passkeys(project: String, localID: String) throws -> [PasskeyRecord] {
        try db.rows("\(PasskeyColumn.table.select) WHERE project_id = ? AND local_id = ? ORDER BY created_at, credential_id",
                    [project, localID], PasskeyColumn.read)
    }

    public func recordPasskeyUse(project: String, credentialID: String, expectedCount: Int64, signCount: Int64, backedUp: Bool,
                                 at: Millis) throws -> Bool {
        try db.run("""
            UPDATE passkeys SET sign_count = ?, backed_up = ?, last_used_at = ?
            WHERE project_id = ? AND credential_id = ? AND sign_count = ?
            """, [signCount, backedUp, at, project, credentialID, expectedCount]) > 0
    }

    public func renamePasskey(project: String, localID: String, credentialID: String, name: String?) throws -> Bool {
        try db.run("UPDATE passkeys SET name = ? WHERE project_id = ? AND credential_id = ? AND local_id = ?",
                   [name, project, credentialID, localID]) > 0
    }

    public func deletePasskey(project: String, localID: String, credentialID: String) throws -> Bool {
        try db.run("DELETE FROM passkeys WHERE project_id = ? AND credential_id = ? AND local_id = ?", [project, credentialID, localID]) > 0
    }
}
