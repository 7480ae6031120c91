public import AuthEngine

/// `phone_verifications` (the codes sent) and `phone_proofs` (a verified number awaiting its sign-in).
extension SQLStore: PhoneStore {
    public func insertPhoneVerification(_ v: PhoneVerificationRecord) throws { try insert(v, PhoneVerificationColumn.self) }

    public func phoneVerification(sessionHash: [UInt8]) throws -> PhoneVerificationRecord? { try find(PhoneVerificationColumn.self, sessionHash) }

    public func pendingPhoneVerification(project: String, phoneNumber: String, purpose: PhoneCodePurpose, clientHash: [UInt8],
                                         now: Millis, maxAttempts: Int) throws -> PhoneVerificationRecord? {
        try db.first("""
            \(PhoneVerificationColumn.table.select)
            WHERE project_id = ? AND phone_number = ? AND expires_at > ?
              AND consumed_at IS NULL AND superseded_at IS NULL AND attempts < ? AND client_hash = ? AND purpose = ?
            ORDER BY created_at DESC LIMIT 1
            """, [project, phoneNumber, now, maxAttempts, clientHash, purpose.stored], PhoneVerificationColumn.read)
    }

    public func recordWrongPhoneCode(sessionHash: [UInt8], maxAttempts: Int) throws -> Int? {
        try db.writeFirst("""
            UPDATE phone_verifications SET attempts = attempts + 1
            WHERE session_hash = ? AND consumed_at IS NULL AND attempts < ? RETURNING attempts
            """, [sessionHash, maxAttempts]) { Int($0.int(0)) }
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

    public func replacePhoneCode(sessionHash: [UInt8], codeHash: [UInt8], messageID: Int64, channel: OutboxMessage.Channel, now: Millis,
                                 expiresAt: Millis) throws -> Bool {
        try db.run("""
            UPDATE phone_verifications SET code_hash = ?, message_id = ?, channel = ?, expires_at = ?
            WHERE session_hash = ? AND consumed_at IS NULL AND superseded_at IS NULL AND expires_at > ?
            """, [codeHash, messageID, channel.rawValue, expiresAt, sessionHash, now]) == 1
    }

    /// Runs at most once a minute per connection: the records it removes are a day past their
    /// expiry, so a minute later changes nothing, and each send saves two statements.
    public func purgePhoneRecords(before: Millis) throws {
        if let last = lastPhonePurge, before >= last, before - last < 60_000 { return }
        lastPhonePurge = before
        try db.run("DELETE FROM phone_verifications WHERE expires_at < ?", [before])
        try db.run("DELETE FROM phone_proofs WHERE expires_at < ?", [before])
    }

    public func insertPhoneProof(_ p: PhoneProofRecord) throws { try insert(p, PhoneProofColumn.self) }

    public func phoneProof(hash: [UInt8]) throws -> PhoneProofRecord? { try find(PhoneProofColumn.self, hash) }

    public func deletePhoneProof(hash: [UInt8]) throws -> Bool {
        try db.run("DELETE FROM phone_proofs WHERE proof_hash = ?", [hash]) == 1
    }
}
