import AuthEngine

extension SQLiteStore: AppVerificationStore {
    public func markChallengeUsed(id: [UInt8], project: String, expiresAt: Millis, now: Millis) throws -> Bool {
        try db.transaction {
            try db.run("DELETE FROM app_verification_replays WHERE expires_at <= ?", [now])
            return try db.run("INSERT OR IGNORE INTO app_verification_replays (challenge_id, project_id, expires_at) VALUES (?, ?, ?)",
                              [id, project, expiresAt]) == 1
        }
    }
}
