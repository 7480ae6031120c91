/// The scheduled purge of every record that outlives its use (docs/architecture.md
/// "Retention"). Each kind is deleted in batches of `batchSize` rows, each batch its own short
/// write transaction, so requests' writes run between them; a run deletes at most `maxBatches`
/// batches of a kind and leaves the rest to the next run.
public struct Housekeeping {
    /// How long records are kept past the moment they stop being usable.
    public struct Retention: Sendable, Equatable {
        /// Sent and dead outbox rows (bodies are already scrubbed when sent), after their last attempt.
        public var outbox: Millis = 7 * 86_400_000
        /// Audit rows, after they were written.
        public var auditLog: Millis = 90 * 86_400_000
        public init(outbox: Millis = 7 * 86_400_000, auditLog: Millis = 90 * 86_400_000) {
            self.outbox = outbox; self.auditLog = auditLog
        }
    }

    /// Rotated or revoked refresh-token records are kept this long for reuse detection.
    public static let retiredRefreshTokens: Millis = 90 * 86_400_000

    public let store: any HousekeepingStore
    public let clock: any Clock
    public let retention: Retention
    public let batchSize: Int
    public let maxBatches: Int
    /// Runs between two batches of a kind (the server sleeps briefly there; tests do nothing).
    public let pause: () -> Void

    public init(store: any HousekeepingStore, clock: any Clock, retention: Retention = Retention(), batchSize: Int = 500,
                maxBatches: Int = 200, pause: @escaping () -> Void = {}) {
        self.store = store; self.clock = clock; self.retention = retention
        self.batchSize = max(1, batchSize); self.maxBatches = max(1, maxBatches); self.pause = pause
    }

    /// The time before which a record of `kind` is deleted, at `now`. Subtractions saturate: a
    /// clock far in the past gives an early cutoff (nothing deleted), never a trap.
    public func cutoff(_ kind: PurgeKind, now: Millis) -> Millis {
        let keep: Millis
        switch kind {
        case .phoneVerifications, .phoneProofs: keep = PhoneSignIn.retentionAfterExpiry
        case .emailLinks: keep = EmailLinks.retentionAfterExpiry
        case .appVerificationReplays, .appTokens, .sessions, .limitCounters, .mfaPending, .iosReceipts, .passkeyChallenges: keep = 0
        case .refreshTokens: keep = Housekeeping.retiredRefreshTokens
        case .outbox: keep = retention.outbox
        case .auditLog: keep = retention.auditLog
        }
        let (cut, overflow) = now.subtractingReportingOverflow(keep)
        return overflow ? Millis.min : cut
    }

    /// One run over every kind; returns the rows deleted per kind. A kind that fails does not
    /// stop the others; the first failure is thrown after all ran.
    @discardableResult
    public func run() throws -> [PurgeKind: Int] {
        var deleted: [PurgeKind: Int] = [:]
        var firstError: (any Error)?
        for kind in PurgeKind.allCases {
            do { deleted[kind] = try purge(kind) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
        return deleted
    }

    /// Deletes `kind`'s rows past their retention, batch by batch.
    public func purge(_ kind: PurgeKind) throws -> Int {
        let cut = cutoff(kind, now: clock.now())
        var total = 0
        for batch in 0..<maxBatches {
            if batch > 0 { pause() }
            let n = try store.purge(kind, cutoff: cut, limit: batchSize)
            total += n
            if n < batchSize { break }
        }
        return total
    }
}
