/// What housekeeping deletes, one kind at a time.
public enum PurgeKind: String, CaseIterable, Sendable {
    /// `phone_verifications` whose `expires_at` is before the cutoff.
    case phoneVerifications = "phone_verifications"
    /// `phone_proofs` whose `expires_at` is before the cutoff.
    case phoneProofs = "phone_proofs"
    /// `email_links` whose `expires_at` is before the cutoff.
    case emailLinks = "email_links"
    /// `app_verification_replays` (used challenges) whose `expires_at` is at or before the cutoff.
    case appVerificationReplays = "app_verification_replays"
    /// `app_tokens` whose `expires_at` is at or before the cutoff.
    case appTokens = "app_tokens"
    /// `refresh_tokens` revoked or rotated before the cutoff (active ones are never purged).
    case refreshTokens = "refresh_tokens"
    /// `sessions` whose `expires_at` is before the cutoff.
    case sessions
    /// `limit_counters` whose window ended before the cutoff.
    case limitCounters = "limit_counters"
    /// `outbox` rows sent or dead whose last attempt was before the cutoff (pending ones stay).
    case outbox
    /// `audit_log` rows written before the cutoff.
    case auditLog = "audit_log"
    /// `mfa_pending` (pending second-factor sign-ins) whose `expires_at` is before the cutoff.
    case mfaPending = "mfa_pending"
    /// `ios_receipts` (silent-push receipts) whose `expires_at` is at or before the cutoff.
    case iosReceipts = "ios_receipts"
    /// `passkey_challenges` whose `expires_at` is before the cutoff.
    case passkeyChallenges = "passkey_challenges"
}

/// Bounded deletes for `Housekeeping`: each call deletes at most `limit` rows of one kind, in
/// its own short write transaction, so a purge never holds the write lock for long.
public protocol HousekeepingStore {
    /// Deletes up to `limit` rows of `kind` past `cutoff`; returns how many it deleted.
    func purge(_ kind: PurgeKind, cutoff: Millis, limit: Int) throws -> Int
}
