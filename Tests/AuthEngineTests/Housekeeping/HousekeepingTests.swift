import AuthStore
import Testing
import TestSupport
@testable import AuthEngine

/// One row of every purged kind, written at `t0` with the reference time its purge looks at
/// (expiry, last attempt, revocation, writing), over the real store and the fixed clock.
private struct RetentionWorld {
    let store: SQLStore
    let clock = FixedClock()
    let t0: Millis
    let retention = Housekeeping.Retention(outbox: 2 * 3_600_000, auditLog: 3 * 86_400_000)

    init() throws {
        store = try makeStore()
        t0 = clock.now()
        let db = store.db
        let h: [UInt8] = [1, 2, 3]
        try db.run("INSERT INTO phone_verifications (session_hash, project_id, phone_number, code_hash, created_at, expires_at) VALUES (?, 'p', '+1', x'00', ?, ?)", [h, t0 - 300_000, t0])
        try db.run("INSERT INTO phone_proofs (proof_hash, project_id, phone_number, created_at, expires_at) VALUES (?, 'p', '+1', ?, ?)", [h, t0 - 300_000, t0])
        try db.run("INSERT INTO email_links (code_hash, project_id, request_type, email, created_at, expires_at) VALUES (?, 'p', 'EMAIL_SIGNIN', 'a@b.c', ?, ?)", [h, t0 - 1_800_000, t0])
        try db.run("INSERT INTO app_verification_replays (challenge_id, project_id, expires_at) VALUES (?, 'p', ?)", [h, t0])
        try db.run("INSERT INTO app_tokens (token_hash, project_id, api_key, app_id, created_at, expires_at) VALUES (?, 'p', '', 'web', ?, ?)", [h, t0 - 120_000, t0])
        try db.run("INSERT INTO sessions (sid_hash, project_id, local_id, provider, created_at, last_seen_at, expires_at) VALUES (?, 'p', 'u', 'phone', ?, ?, ?)", [h, t0 - 1000, t0 - 1000, t0])
        try db.run("INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES ('b', ?, 1, ?)", [t0 - 300_000, t0])
        try db.run("INSERT INTO outbox (project_id, channel, recipient, body, status, next_attempt_at, created_at, sent_at) VALUES ('p', 'sms', '+1', '', 'sent', ?, ?, ?)", [t0, t0, t0])
        try db.run("INSERT INTO outbox (project_id, channel, recipient, body, status, attempts, next_attempt_at, created_at) VALUES ('p', 'email', 'a@b.c', '', 'dead', 8, ?, ?)", [t0, t0])
        try db.run("INSERT INTO audit_log (at, project_id, event) VALUES (?, 'p', 'signIn')", [t0])
        try db.run("INSERT INTO mfa_pending (credential_hash, project_id, local_id, first_factor, auth_time, created_at, expires_at) VALUES (?, 'p', 'u', 'password', 0, ?, ?)", [h, t0 - 600_000, t0])
        try db.run("INSERT INTO ios_receipts (receipt_hash, project_id, bundle_id, device_token_hash, sandbox, secret_hash, created_at, expires_at) VALUES (?, 'p', 'b', x'00', 0, x'00', ?, ?)", [h, t0 - 3_600_000, t0])
        try db.run("INSERT INTO passkey_challenges (challenge_hash, project_id, created_at, expires_at) VALUES (?, 'p', ?, ?)", [h, t0 - 300_000, t0])
        for (i, column) in ["revoked_at", "rotated_at"].enumerated() {
            try db.run("INSERT INTO refresh_tokens (token_hash, family_id, project_id, local_id, provider, auth_time, created_at, \(column)) VALUES (?, 'f', 'p', 'u', 'phone', 0, ?, ?)",
                       [[UInt8(i)], t0 - 1000, t0])
        }
        // Never purged: an active refresh token, a pending message.
        try db.run("INSERT INTO refresh_tokens (token_hash, family_id, project_id, local_id, provider, auth_time, created_at) VALUES (x'ff', 'g', 'p', 'u', 'phone', 0, 0)")
        try db.run("INSERT INTO outbox (project_id, channel, recipient, body, status, next_attempt_at, created_at) VALUES ('p', 'sms', '+1', 'x', 'pending', 0, 0)")
    }

    var housekeeping: Housekeeping { Housekeeping(store: store, clock: clock, retention: retention) }

    func count(_ table: String, _ condition: String = "1") throws -> Int {
        Int(try store.db.first("SELECT COUNT(*) FROM \(table) WHERE \(condition)") { $0.int(0) } ?? 0)
    }

    /// How long after `t0` each kind's row may go, and the rows of it written above.
    func keep(_ kind: PurgeKind) -> (Millis, String, String) {
        switch kind {
        case .phoneVerifications: return (PhoneSignIn.retentionAfterExpiry, "phone_verifications", "1")
        case .phoneProofs: return (PhoneSignIn.retentionAfterExpiry, "phone_proofs", "1")
        case .emailLinks: return (EmailLinks.retentionAfterExpiry, "email_links", "1")
        case .appVerificationReplays: return (0, "app_verification_replays", "1")
        case .appTokens: return (0, "app_tokens", "1")
        case .refreshTokens: return (Housekeeping.retiredRefreshTokens, "refresh_tokens", "token_hash <> x'ff'")
        case .sessions: return (0, "sessions", "1")
        case .limitCounters: return (0, "limit_counters", "1")
        case .outbox: return (retention.outbox, "outbox", "status <> 'pending'")
        case .auditLog: return (retention.auditLog, "audit_log", "1")
        case .mfaPending: return (0, "mfa_pending", "1")
        case .iosReceipts: return (0, "ios_receipts", "1")
        case .passkeyChallenges: return (0, "passkey_challenges", "1")
        }
    }
}

@Suite("Housekeeping")
struct HousekeepingTests {
    @Test("Each kind is purged after its retention and not before", arguments: PurgeKind.allCases)
    func retention(kind: PurgeKind) throws {
        let w = try RetentionWorld()
        let (keep, table, rows) = w.keep(kind)
        let written = try w.count(table, rows)
        // Two retired refresh tokens (revoked, rotated) and two finished messages (sent, dead); one row of the rest.
        #expect(written == (kind == .refreshTokens || kind == .outbox ? 2 : 1))
        // One millisecond before the end of its retention: still there (`<=` kinds go at the end itself).
        w.clock.advance(millis: keep - 1)
        _ = try w.housekeeping.purge(kind)
        #expect(try w.count(table, rows) == written, "\(kind) purged early")
        w.clock.advance(millis: 2)
        #expect(try w.housekeeping.purge(kind) == written)
        #expect(try w.count(table, rows) == 0, "\(kind) not purged")
    }

    @Test("A run purges every kind and never an active refresh token, a pending message or an account")
    func everything() throws {
        let w = try RetentionWorld()
        try w.store.insertAccount(Account(projectID: "p", localID: "u", createdAt: w.t0))
        w.clock.advance(millis: 100 * 86_400_000)
        let deleted = try w.housekeeping.run()
        #expect(deleted.values.reduce(0, +) == 15)
        #expect(try w.count("refresh_tokens") == 1)
        #expect(try w.count("outbox") == 1)
        #expect(try w.count("accounts") == 1)
    }

    @Test("Batches are bounded: a run deletes at most batchSize × maxBatches rows of a kind, the next run goes on")
    func batches() throws {
        let store = try makeStore()
        let clock = FixedClock()
        for i in 0..<25 {
            try store.db.run("INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES (?, 0, 1, ?)", ["b\(i)", clock.now() - 1])
            try store.db.run("INSERT INTO audit_log (at, project_id, event) VALUES (?, 'p', 'e')", [clock.now() - 100 * 86_400_000])
        }
        var pauses = 0
        let h = Housekeeping(store: store, clock: clock, batchSize: 4, maxBatches: 3, pause: { pauses += 1 })
        #expect(try h.purge(.limitCounters) == 12)
        #expect(pauses == 2)
        #expect(try h.purge(.auditLog) == 12)
        #expect(try h.purge(.limitCounters) == 12)
        #expect(try h.purge(.limitCounters) == 1)
        #expect(try store.purge(.auditLog, cutoff: clock.now(), limit: 100) == 13)
    }

    @Test("Audit rows written under a clock set far ahead do not stop older rows behind them from going")
    func auditOutOfOrder() throws {
        let store = try makeStore()
        let clock = FixedClock()
        let old = clock.now() - 100 * 86_400_000
        try store.db.run("INSERT INTO audit_log (at, project_id, event) VALUES (?, 'p', 'e')", [clock.now() + 86_400_000])
        try store.db.run("INSERT INTO audit_log (at, project_id, event) VALUES (?, 'p', 'e')", [old])
        #expect(try Housekeeping(store: store, clock: clock).purge(.auditLog) == 1)
    }

    @Test("A cutoff never overflows, whatever the clock says")
    func cutoffSaturates() throws {
        let h = Housekeeping(store: try makeStore(), clock: FixedClock(Millis.min + 5))
        #expect(h.cutoff(.auditLog, now: Millis.min + 5) == Millis.min)
        #expect(try h.run().values.reduce(0, +) == 0)
    }
}
