import AuthEngine

// MARK: - Phone sign-in

extension PostgreSQLStore: PhoneStore {
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
        try db.first("""
            UPDATE phone_verifications SET attempts = attempts + 1
            WHERE session_hash = ? AND consumed_at IS NULL AND attempts < ? RETURNING attempts
            """, [sessionHash, maxAttempts]) { Int($0.int(0)) }
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

    /// At most once a minute per connection, as on SQLite.
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

// MARK: - Email links

extension PostgreSQLStore: EmailLinkStore {
    public func insertEmailLink(_ l: EmailLinkRecord) throws {
        try db.run("INSERT INTO email_links (\(StoreRecords.emailLinkColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [l.codeHash, l.projectID, l.requestType.rawValue, l.email, l.localID, l.continueURL, l.canHandleCodeInApp,
                    l.iosBundleID, l.androidPackage, l.lang, l.browserBinding, l.createdAt, l.expiresAt, l.consumedAt])
    }

    public func emailLink(hash: [UInt8]) throws -> EmailLinkRecord? {
        try db.first("SELECT \(StoreRecords.emailLinkColumns) FROM email_links WHERE code_hash = ?", [hash], StoreRecords.emailLink)
    }

    public func consumeEmailLink(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE email_links SET consumed_at = ? WHERE code_hash = ? AND consumed_at IS NULL AND expires_at > ?", [at, hash, at]) == 1
    }

    public func purgeEmailLinks(expiredBefore before: Millis) throws -> Int {
        try db.run("DELETE FROM email_links WHERE expires_at < ?", [before])
    }
}

// MARK: - App verification, SMS pumping, second factor, silent push

extension PostgreSQLStore: AppVerificationStore {
    public func markChallengeUsed(id: [UInt8], project: String, expiresAt: Millis, now: Millis) throws -> Bool {
        try db.transaction {
            try db.run("DELETE FROM app_verification_replays WHERE expires_at <= ?", [now])
            return try db.run("""
                INSERT INTO app_verification_replays (challenge_id, project_id, expires_at) VALUES (?, ?, ?)
                ON CONFLICT (challenge_id) DO NOTHING
                """, [id, project, expiresAt]) == 1
        }
    }
}

extension PostgreSQLStore: SMSPumpingStore {
    public func counterSum(bucket: String, from: Millis, to: Millis) throws -> Int {
        Int(try db.first("""
            SELECT COALESCE(SUM(count), 0)::bigint FROM limit_counters WHERE bucket = ? AND window_start >= ? AND window_start < ?
            """, [bucket, from, to]) { $0.int(0) } ?? 0)
    }

    public func smsHold(project: String, kind: SMSHold.Kind, key: String) throws -> SMSHold? {
        try db.first("SELECT \(StoreRecords.holdColumns) FROM sms_holds WHERE project_id = ? AND kind = ? AND key = ?",
                     [project, kind.rawValue, key], StoreRecords.hold)
    }

    public func putSMSHold(_ h: SMSHold) throws {
        try db.run("""
            INSERT INTO sms_holds (\(StoreRecords.holdColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (project_id, kind, key) DO UPDATE SET held_at = excluded.held_at, expires_at = excluded.expires_at,
                released_at = excluded.released_at, recent_count = excluded.recent_count, baseline_count = excluded.baseline_count
            """, [h.projectID, h.kind.rawValue, h.key, h.heldAt, h.expiresAt, h.releasedAt, h.recentCount, h.baselineCount])
    }

    public func smsHolds(project: String?) throws -> [SMSHold] {
        if let project {
            return try db.rows("SELECT \(StoreRecords.holdColumns) FROM sms_holds WHERE project_id = ? ORDER BY held_at, key COLLATE \"C\"",
                               [project], StoreRecords.hold)
        }
        return try db.rows("SELECT \(StoreRecords.holdColumns) FROM sms_holds ORDER BY held_at, project_id COLLATE \"C\", key COLLATE \"C\"",
                           [], StoreRecords.hold)
    }
}

extension PostgreSQLStore: MFAStore {
    public func insertMFAPending(_ r: MFAPendingRecord) throws {
        try db.run("INSERT INTO mfa_pending (\(StoreRecords.mfaPendingColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [r.credentialHash, r.projectID, r.localID, r.firstFactor, r.authTime, r.createdAt, r.expiresAt, r.consumedAt])
    }

    public func mfaPending(hash: [UInt8]) throws -> MFAPendingRecord? {
        try db.first("SELECT \(StoreRecords.mfaPendingColumns) FROM mfa_pending WHERE credential_hash = ?", [hash], StoreRecords.mfaPending)
    }

    public func consumeMFAPending(hash: [UInt8], now: Millis) throws -> Bool {
        try db.run("UPDATE mfa_pending SET consumed_at = ? WHERE credential_hash = ? AND consumed_at IS NULL AND expires_at > ?",
                   [now, hash, now]) > 0
    }

    public func purgeMFAPending(before: Millis) throws {
        try db.run("DELETE FROM mfa_pending WHERE expires_at < ?", [before])
    }

    @discardableResult
    public func revokeMFAPending(project: String, localID: String, at: Millis) throws -> Int {
        try db.run("UPDATE mfa_pending SET consumed_at = ? WHERE project_id = ? AND local_id = ? AND consumed_at IS NULL",
                   [at, project, localID])
    }
}

extension PostgreSQLStore: PushStore {
    public func insertIOSReceipt(_ r: IOSReceiptRecord) throws {
        try db.run("INSERT INTO ios_receipts (\(StoreRecords.iosReceiptColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [r.receiptHash, r.projectID, r.bundleID, r.deviceTokenHash, r.sandbox, r.secretHash, r.createdAt, r.expiresAt, r.uses])
    }

    public func iosReceipt(hash: [UInt8]) throws -> IOSReceiptRecord? {
        try db.first("SELECT \(StoreRecords.iosReceiptColumns) FROM ios_receipts WHERE receipt_hash = ?", [hash], StoreRecords.iosReceipt)
    }

    public func useIOSReceipt(hash: [UInt8], maxUses: Int, now: Millis) throws -> Bool {
        try db.run("UPDATE ios_receipts SET uses = uses + 1 WHERE receipt_hash = ? AND uses < ? AND expires_at > ?", [hash, maxUses, now]) > 0
    }
}
