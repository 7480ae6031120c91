/// Storage port of app verification: the replay table that makes every proof-of-work challenge
/// (and every external verifier response) redeemable once until it expires.
public protocol AppVerificationStore: Transactional {
    /// Records `id` as used until `expiresAt`, dropping entries expired at `now`. Returns false
    /// when `id` was already recorded (single use, race-free across instances).
    func markChallengeUsed(id: [UInt8], project: String, expiresAt: Millis, now: Millis) throws -> Bool
}
