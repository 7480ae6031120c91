public import AuthEngine

/// `HousekeepingStore`: each purge is one `DELETE` of at most `limit` rows, chosen by a
/// subquery with `LIMIT`, run outside any transaction (so it is its own short write).
///
/// Most kinds are found through their expiry index. Two tables have none, on purpose:
/// `limit_counters` and `app_tokens` are scanned (see their declarations). `audit_log` has no time
/// index either; its rows are appended in time order, so a batch looks only at the oldest rows by id.
extension SQLStore: HousekeepingStore {
    public func purge(_ kind: PurgeKind, cutoff: Millis, limit: Int) throws -> Int {
        switch kind {
        case .phoneVerifications: return try deleteBatch("phone_verifications", key: "session_hash", where: "expires_at < ?", cutoff, limit)
        case .phoneProofs: return try deleteBatch("phone_proofs", key: "proof_hash", where: "expires_at < ?", cutoff, limit)
        case .emailLinks: return try deleteBatch("email_links", key: "code_hash", where: "expires_at < ?", cutoff, limit)
        case .appVerificationReplays:
            return try deleteBatch("app_verification_replays", key: "challenge_id", where: "expires_at <= ?", cutoff, limit)
        case .appTokens: return try deleteBatch("app_tokens", key: "token_hash", where: "expires_at <= ?", cutoff, limit)
        case .mfaPending: return try deleteBatch("mfa_pending", key: "credential_hash", where: "expires_at < ?", cutoff, limit)
        case .iosReceipts: return try deleteBatch("ios_receipts", key: "receipt_hash", where: "expires_at <= ?", cutoff, limit)
        case .passkeyChallenges:
            return try deleteBatch("passkey_challenges", key: "challenge_hash", where: "expires_at < ?", cutoff, limit)
        case .sessions: return try deleteBatch("sessions", key: "sid_hash", where: "expires_at < ?", cutoff, limit)
        case .refreshTokens:
            let revoked = try deleteBatch("refresh_tokens", key: "token_hash", where: "revoked_at < ?", cutoff, limit)
            guard revoked < limit else { return revoked }
            return try revoked + deleteBatch("refresh_tokens", key: "token_hash", where: "rotated_at < ?", cutoff, limit - revoked)
        case .limitCounters:
            return try deleteBatch("limit_counters", key: "(bucket, window_start)", columns: "bucket, window_start",
                                   where: "expires_at < ?", cutoff, limit)
        case .outbox:
            return try deleteBatch("outbox", key: "id", where: "status IN ('sent', 'dead') AND next_attempt_at < ?", cutoff, limit)
        case .auditLog:
            let (window, overflow) = limit.multipliedReportingOverflow(by: PurgeKind.auditWindowFactor)
            return try db.run("""
                DELETE FROM audit_log WHERE id IN (
                    SELECT id FROM (SELECT id, at FROM audit_log ORDER BY id LIMIT ?) AS oldest WHERE at < ? LIMIT ?)
                """, [overflow ? Int.max : window, cutoff, limit])
        }
    }

    /// `DELETE FROM table WHERE key IN (SELECT columns FROM table WHERE condition LIMIT limit)`;
    /// the names are this file's constants, the values bound.
    private func deleteBatch(_ table: String, key: String, columns: String? = nil, where condition: String,
                             _ cutoff: Millis, _ limit: Int) throws -> Int {
        try db.run("DELETE FROM \(table) WHERE \(key) IN (SELECT \(columns ?? key) FROM \(table) WHERE \(condition) LIMIT ?)", [cutoff, limit])
    }
}

extension PurgeKind {
    /// How many of the oldest audit rows a batch looks at, per row it may delete.
    static let auditWindowFactor = 4
}
