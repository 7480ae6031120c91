import AuthEngine

/// `PhoneStore` over the `phone_verifications` and `phone_proofs` tables (migrations 1, 2, 6 and 8).
extension SQLiteStore: PhoneStore {
    public func insertPhoneVerification(_ v: PhoneVerificationRecord) throws {
        try db.run("INSERT INTO phone_verifications (\(StoreRecords.phoneColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [v.sessionHash, v.projectID, v.phoneNumber, v.appID, v.codeHash, v.nonce, v.createdAt, v.expiresAt, v.attempts,
                    v.consumedAt, v.supersededAt, v.isTest, v.clientHash, v.purpose])
    }

    public func phoneVerification(sessionHash: [UInt8]) throws -> PhoneVerificationRecord? {
        try db.first("SELECT \(StoreRecords.phoneColumns) FROM phone_verifications WHERE session_hash = ?", [sessionHash],
                     StoreRecords.phoneVerification)
    }

    public func pendingPhoneVerification(project: String, phoneNumber: String, purpose: String, clientHash: [UInt8],
                                         now: Millis, maxAttempts: Int) throws -> PhoneVerificationRecord? {
        try db.first("""
            SELECT \(StoreRecords.phoneColumns) FROM phone_verifications
            WHERE project_id = ? AND phone_number = ? AND expires_at > ?
              AND consumed_at IS NULL AND superseded_at IS NULL AND attempts < ? AND client_hash = ? AND purpose = ?
            ORDER BY created_at DESC LIMIT 1
            """, [project, phoneNumber, now, maxAttempts, clientHash, purpose], StoreRecords.phoneVerification)
    }

    public func recordWrongPhoneCode(sessionHash: [UInt8], maxAttempts: Int) throws -> Int? {
        try db.transaction {
            guard try db.run("""
                UPDATE phone_verifications SET attempts = attempts + 1
                WHERE session_hash = ? AND consumed_at IS NULL AND attempts < ?
                """, [sessionHash, maxAttempts]) == 1 else { return nil }
            return try db.first("SELECT attempts FROM phone_verifications WHERE session_hash = ?", [sessionHash]) { Int($0.int(0)) }
        }
    }

    public func recordPhoneSignIn(_ a: Account, providersChanged: Bool) throws {
        if providersChanged {
            try db.run("UPDATE accounts SET last_login_at = ?, last_refresh_at = ?, providers = ? WHERE project_id = ? AND local_id = ?",
                       [a.lastLoginAt, a.lastRefreshAt, StoreRecords.encodeProviders(a.providers), a.projectID, a.localID])
        } else {
            try db.run("UPDATE accounts SET last_login_at = ?, last_refresh_at = ? WHERE project_id = ? AND local_id = ?",
                       [a.lastLoginAt, a.lastRefreshAt, a.projectID, a.localID])
        }
    }

    public func consumePhoneVerification(sessionHash: [UInt8], now: Millis, maxAttempts: Int) throws -> Bool {
        try db.run("""
            UPDATE phone_verifications SET consumed_at = ?
            WHERE session_hash = ? AND consumed_at IS NULL AND superseded_at IS NULL AND expires_at > ? AND attempts < ?
            """, [now, sessionHash, now, maxAttempts]) == 1
    }

    public func supersedePhoneVerification(sessionHash: [UInt8], at: Millis) throws -> Bool {
        try db.run("""
            UPDATE phone_verifications SET superseded_at = ?
            WHERE session_hash = ? AND consumed_at IS NULL AND superseded_at IS NULL
            """, [at, sessionHash]) == 1
    }

    /// Runs at most once a minute per connection: the records it removes are a day past their
    /// expiry, so a minute later changes nothing, and each send saves two statements.
    public func purgePhoneRecords(before: Millis) throws {
        if let last = lastPhonePurge, before >= last, before - last < 60_000 { return }
        lastPhonePurge = before
        try db.run("DELETE FROM phone_verifications WHERE expires_at < ?", [before])
        try db.run("DELETE FROM phone_proofs WHERE expires_at < ?", [before])
    }

    public func insertPhoneProof(_ p: PhoneProofRecord) throws {
        try db.run("INSERT INTO phone_proofs (proof_hash, project_id, phone_number, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                   [p.proofHash, p.projectID, p.phoneNumber, p.createdAt, p.expiresAt])
    }

    public func phoneProof(hash: [UInt8]) throws -> PhoneProofRecord? {
        try db.first("SELECT proof_hash, project_id, phone_number, created_at, expires_at FROM phone_proofs WHERE proof_hash = ?", [hash]) {
            PhoneProofRecord(proofHash: $0.blob(0), projectID: $0.text(1), phoneNumber: $0.text(2), createdAt: $0.int(3), expiresAt: $0.int(4))
        }
    }

    public func deletePhoneProof(hash: [UInt8]) throws -> Bool {
        try db.run("DELETE FROM phone_proofs WHERE proof_hash = ?", [hash]) == 1
    }
}
