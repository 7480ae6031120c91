import AuthEngine
import AuthStore
import Foundation
import Testing
import Locking

/// The store ports' contract, run against every backend: SQLite (a temporary file) always, and
/// PostgreSQL when `GATEHOUSE_TEST_POSTGRES_URL` names a database (`make test` starts a throw-away
/// cluster, scripts/pg-cluster.sh). Each PostgreSQL test gets a schema of its own. The races run
/// threads with one connection each: exactly one consumer wins whatever the backend.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgresql
    var testDescription: String { rawValue }

    static let postgresURL = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    /// The backends this run can reach.
    static let available: [Backend] = postgresURL == nil ? [.sqlite] : [.sqlite, .postgresql]
}

typealias ContractStore = GatehouseStore & HousekeepingStore

/// One database for one test: a SQLite file, or a PostgreSQL schema; `open` gives a new
/// connection to it (one per thread), `remove` drops it.
final class TestDatabase: @unchecked Sendable {
    let backend: Backend
    let location: String

    init(_ backend: Backend) throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            location = NSTemporaryDirectory() + "gatehouse-contract-\(UInt64.random(in: 0...UInt64.max)).db"
        case .postgresql:
            let base = try #require(Backend.postgresURL)
            // Letters and digits only: a schema name cannot be a parameter.
            let schema = "t_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
            let admin = try PostgreSQLConnection(url: base)
            try admin.script("CREATE SCHEMA \(schema)")
            location = base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        }
    }

    func open() throws -> any ContractStore {
        switch backend {
        case .sqlite: return try SQLStore(path: location)
        case .postgresql: return try SQLStore(url: location)
        }
    }

    func remove() {
        if backend == .sqlite { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: location + s) } }
    }

    /// Runs `body` on `threads` threads at once, each with its own connection; returns the results.
    func race<T: Sendable>(threads: Int, _ body: @escaping @Sendable (any ContractStore) throws -> T) throws -> [T] {
        let stores = try (0..<threads).map { _ in try open() }
        let results = Locked<[Result<T, any Error>]>([])
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for store in stores {
            let box = UncheckedBox(store)
            group.enter()
            Thread {
                start.wait()
                let r = Result { try body(box.value) }
                results.withLock { $0.append(r) }
                group.leave()
            }.start()
        }
        for _ in stores { start.signal() }
        group.wait()
        return try results.withLock { $0 }.map { try $0.get() }
    }
}

struct UncheckedBox<T>: @unchecked Sendable { let value: T; init(_ v: T) { value = v } }

/// Runs `body` on a database of its own on `backend` (the database, for races that open more
/// connections, and a first connection), removed afterwards: every contract suite's test.
func with(_ backend: Backend, _ body: (TestDatabase, any ContractStore) throws -> Void) throws {
    let db = try TestDatabase(backend)
    defer { db.remove() }
    try body(db, try db.open())
}

@Suite("Store contract (SQLite and PostgreSQL)")
struct StoreContractTests {

    static func hash(_ n: Int) -> [UInt8] { Array(String(format: "%032d", n).utf8) }

    @Test("accounts: insert, read by id, email and phone, update, list in byte order, count, uniqueness errors, delete", arguments: Backend.available)
    func accounts(backend: Backend) throws {
        try with(backend) { _, s in
            var a = Account(projectID: "p", localID: "b-user", createdAt: 10)
            a.email = "ada@example.com"
            a.phoneNumber = "+33612345678"
            a.emailVerified = true
            a.upsertProvider(ProviderInfo(providerID: "password", rawID: "ada@example.com", email: "ada@example.com"))
            a.mfaEnrollments = [MFAEnrollment(enrollmentID: "e1", phoneNumber: "+33698765432", displayName: "Work", enrolledAt: 5)]
            try s.insertAccount(a)
            #expect(try s.account(project: "p", localID: "b-user") == a)
            #expect(try s.account(project: "p", email: "ADA@example.com")?.localID == "b-user")
            #expect(try s.account(project: "p", phoneNumber: "+33612345678")?.localID == "b-user")
            #expect(try s.account(project: "p", providerID: "password", rawID: "ada@example.com")?.localID == "b-user")
            #expect(try s.account(project: "p", providerID: "phone", rawID: "ada@example.com") == nil)
            var b = Account(projectID: "p", localID: "A-user", createdAt: 11)
            b.email = "ada@example.com"
            #expect(throws: AuthError(.emailExists)) { try s.insertAccount(b) }
            b.email = nil
            b.phoneNumber = "+33612345678"
            #expect(throws: AuthError(.phoneNumberExists)) { try s.insertAccount(b) }
            b.phoneNumber = nil
            try s.insertAccount(b)
            #expect(throws: AuthError(.duplicateLocalID)) { try s.insertAccount(b) }
            try s.insertAccount(Account(projectID: "p", localID: "a-user", createdAt: 12))
            // Byte order: upper case before lower case, as SQLite compares.
            #expect(try s.listAccounts(project: "p", after: nil, limit: 10).map(\.localID) == ["A-user", "a-user", "b-user"])
            #expect(try s.listAccounts(project: "p", after: "A-user", limit: 1).map(\.localID) == ["a-user"])
            #expect(try s.countAccounts(project: "p") == 3)
            a.displayName = "Ada"
            a.lastLoginAt = 99
            // Written back only inside a transaction that read it.
            #expect(throws: (any Error).self) { try s.updateAccount(a) }
            try s.transaction {
                _ = try s.account(project: "p", localID: a.localID)
                try s.updateAccount(a)
            }
            #expect(try s.account(project: "p", localID: "b-user")?.displayName == "Ada")
            #expect(try s.deleteAccount(project: "p", localID: "b-user"))
            #expect(try !s.deleteAccount(project: "p", localID: "b-user"))
            #expect(try s.deleteAllAccounts(project: "p") == 2)
        }
    }

    @Test("text with a NUL or a control character is refused before it reaches either database; tab and newlines pass",
          arguments: Backend.available)
    func controlCharacters(backend: Backend) throws {
        try with(backend) { _, s in
            try s.insertAccount(Account(projectID: "p", localID: "nulvictim", createdAt: 1))
            for bad in ["nulvictim\u{0}attacker", "nulvictim\u{1}", "a\u{1B}[2J"] {
                #expect(throws: AuthError(.invalidArgument, "Text may not contain control characters.")) {
                    try s.account(project: "p", localID: bad)
                }
                #expect(throws: AuthError(.invalidArgument, "Text may not contain control characters.")) {
                    try s.insertAccount(Account(projectID: "p", localID: bad, createdAt: 1))
                }
            }
            #expect(try s.countAccounts(project: "p") == 1)
            let id = try s.enqueue(OutboxMessage(projectID: "p", channel: .email, recipient: "a@b.c", body: "line\r\n\tindented",
                                                 nextAttemptAt: 0, createdAt: 0))
            #expect(try s.messages(project: "p", channel: .email, limit: 1).first?.id == id)
        }
    }

    @Test("keys and secrets: published newest first, retired, expired deleted; a secret's first writer wins", arguments: Backend.available)
    func keysAndSecrets(backend: Backend) throws {
        try with(backend) { _, s in
            try s.insertSigningKey(SigningKeyRecord(kid: "k1", privatePEM: "p1", publicPEM: "u1", certificatePEM: "c1", createdAt: 1))
            try s.insertSigningKey(SigningKeyRecord(kid: "k2", privatePEM: "p2", publicPEM: "u2", certificatePEM: "c2", createdAt: 2))
            try s.retireSigningKeys(except: "k2", at: 3, expiresAt: 10)
            let keys = try s.publishedSigningKeys(at: 5)
            #expect(keys.map(\.kid) == ["k2", "k1"] && keys[1].retiredAt == 3 && keys[1].expiresAt == 10)
            #expect(try s.publishedSigningKeys(at: 10).map(\.kid) == ["k2"])
            #expect(try s.deleteExpiredSigningKeys(at: 10) == 1)
            #expect(try s.insertSecretIfAbsent(named: "phone", value: [1, 2, 0, 3], at: 1) == [1, 2, 0, 3])
            #expect(try s.insertSecretIfAbsent(named: "phone", value: [9], at: 2) == [1, 2, 0, 3])
            #expect(try s.secret(named: "phone") == [1, 2, 0, 3] && s.secret(named: "none") == nil)
        }
    }

    @Test("phone codes: pending lookup, wrong-code counting, single consumption, supersede, proofs", arguments: Backend.available)
    func phone(backend: Backend) throws {
        try with(backend) { _, s in
            let v = PhoneVerificationRecord(sessionHash: Self.hash(1), projectID: "p", phoneNumber: "+33612345678", appID: "web",
                                            codeHash: [1, 2, 3], nonce: [0, 0, 255], createdAt: 100, expiresAt: 400, isTest: true,
                                            clientHash: [7], purpose: .enrolment(localID: "u"))
            try s.insertPhoneVerification(v)
            #expect(try s.phoneVerification(sessionHash: Self.hash(1)) == v)
            #expect(try s.pendingPhoneVerification(project: "p", phoneNumber: "+33612345678", purpose: .enrolment(localID: "u"),
                                                   clientHash: [7], now: 200, maxAttempts: 5) == v)
            #expect(try s.pendingPhoneVerification(project: "p", phoneNumber: "+33612345678", purpose: .enrolment(localID: "u"),
                                                   clientHash: [8], now: 200, maxAttempts: 5) == nil)
            #expect(try s.recordWrongPhoneCode(sessionHash: Self.hash(1), maxAttempts: 2) == 1)
            #expect(try s.recordWrongPhoneCode(sessionHash: Self.hash(1), maxAttempts: 2) == 2)
            #expect(try s.recordWrongPhoneCode(sessionHash: Self.hash(1), maxAttempts: 2) == nil)
            #expect(try !s.consumePhoneVerification(sessionHash: Self.hash(1), now: 200, maxAttempts: 2))
            #expect(try s.consumePhoneVerification(sessionHash: Self.hash(1), now: 200, maxAttempts: 5))
            #expect(try !s.consumePhoneVerification(sessionHash: Self.hash(1), now: 200, maxAttempts: 5))
            try s.insertPhoneVerification(PhoneVerificationRecord(sessionHash: Self.hash(2), projectID: "p", phoneNumber: "+1", appID: "",
                                                                  codeHash: [], nonce: [], createdAt: 1, expiresAt: 2))
            #expect(try s.supersedePhoneVerification(sessionHash: Self.hash(2), at: 1))
            #expect(try !s.supersedePhoneVerification(sessionHash: Self.hash(2), at: 1))
            try s.insertPhoneProof(PhoneProofRecord(proofHash: Self.hash(3), projectID: "p", phoneNumber: "+1", createdAt: 1, expiresAt: 9))
            #expect(try s.phoneProof(hash: Self.hash(3))?.expiresAt == 9)
            #expect(try s.deletePhoneProof(hash: Self.hash(3)) && !s.deletePhoneProof(hash: Self.hash(3)))
        }
    }

    @Test("limits, pumping sums and holds, replay table, app tokens, receipts, pending second factors", arguments: Backend.available)
    func counters(backend: Backend) throws {
        try with(backend) { _, s in
            #expect(try s.incrementCounter(bucket: "b", windowStart: 0, amount: 2, expiresAt: 10) == 2)
            #expect(try s.incrementCounter(bucket: "b", windowStart: 0, amount: 3, expiresAt: 10) == 5)
            #expect(try s.incrementCounter(bucket: "b", windowStart: 10, amount: 1, expiresAt: 20) == 1)
            #expect(try s.counter(bucket: "b", windowStart: 0) == 5 && s.counterSum(bucket: "b", from: 0, to: 20) == 6)
            let hold = SMSHold(projectID: "p", kind: .prefix, key: "+3712012", heldAt: 5, recentCount: 40, baselineCount: 2)
            try s.putSMSHold(hold)
            var released = hold
            released.releasedAt = 7
            try s.putSMSHold(released)
            #expect(try s.smsHold(project: "p", kind: .prefix, key: "+3712012") == released)
            #expect(try s.smsHolds(project: nil) == [released] && s.smsHolds(project: "q").isEmpty)
            #expect(try s.markChallengeUsed(id: Self.hash(1), project: "p", expiresAt: 50, now: 0))
            #expect(try !s.markChallengeUsed(id: Self.hash(1), project: "p", expiresAt: 50, now: 0))
            try s.insertAppToken(AppTokenRecord(tokenHash: Self.hash(2), projectID: "p", apiKey: "k", appID: "web", expiresAt: 100), at: 0)
            #expect(try s.consumeAppToken(hash: Self.hash(2), now: 50)?.apiKey == "k")
            #expect(try s.consumeAppToken(hash: Self.hash(2), now: 50) == nil)
            let receipt = IOSReceiptRecord(receiptHash: Self.hash(3), projectID: "p", bundleID: "b", deviceTokenHash: [1], sandbox: true,
                                           secretHash: [2], createdAt: 0, expiresAt: 100)
            try s.insertIOSReceipt(receipt)
            #expect(try s.iosReceipt(hash: Self.hash(3)) == receipt)
            #expect(try s.useIOSReceipt(hash: Self.hash(3), maxUses: 1, now: 10) && !s.useIOSReceipt(hash: Self.hash(3), maxUses: 1, now: 10))
            let pending = MFAPendingRecord(credentialHash: Self.hash(4), projectID: "p", localID: "u", firstFactor: "password", authTime: 1,
                                           createdAt: 1, expiresAt: 100)
            try s.insertMFAPending(pending)
            #expect(try s.mfaPending(hash: Self.hash(4)) == pending)
            #expect(try s.consumeMFAPending(hash: Self.hash(4), now: 5) && !s.consumeMFAPending(hash: Self.hash(4), now: 5))
        }
    }

    @Test("outbox: ids in order, due by channel, one lease wins, outcomes fenced by the lease, bodies scrubbed", arguments: Backend.available)
    func outbox(backend: Backend) throws {
        try with(backend) { _, s in
            let first = try s.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+1", body: "code 1", nextAttemptAt: 0, createdAt: 0))
            let second = try s.enqueue(OutboxMessage(projectID: "p", channel: .push, recipient: "AB", body: "{}", nextAttemptAt: 0, createdAt: 0))
            #expect(second > first)
            #expect(try s.dueMessageIDs(now: 0, limit: 10, channels: [.sms]) == [first])
            #expect(try s.dueMessageIDs(now: 0, limit: 10, channels: [.sms, .push]) == [first, second])
            let lease = try #require(try s.lease(id: first, now: 0, until: 100))
            #expect(lease.message.body == "code 1" && lease.token == 1)
            #expect(try s.lease(id: first, now: 50, until: 150) == nil)
            let retaken = try #require(try s.lease(id: first, now: 100, until: 200))
            #expect(try !s.markSent(lease, at: 101, keepBody: false))
            #expect(try s.markSent(retaken, at: 101, keepBody: false))
            #expect(try s.messages(project: "p", channel: .sms, limit: 5).map(\.body) == [""])
            let push = try #require(try s.lease(id: second, now: 0, until: 100))
            #expect(try s.markFailed(push, error: "down", nextAttemptAt: 5, at: 1))
            #expect(try s.messages(project: "p", channel: .push, limit: 5).first?.attempts == 1)
            // The backlog: the sent SMS is gone from it, the push awaiting its retry is in it.
            _ = try s.enqueue(OutboxMessage(projectID: "p", channel: .push, recipient: "CD", body: "{}", nextAttemptAt: 9, createdAt: 7))
            #expect(try s.outboxBacklog() == [OutboxBacklog(channel: .push, count: 2, oldestCreatedAt: 0)])
            try s.audit(AuditEvent(projectID: "p", event: .phoneSignIn, localID: "u"), at: 1)
            try s.audit(AuditEvent(projectID: "p", event: .revoke, localID: "u", remoteAddress: "192.0.2.1", detail: "d", actor: "admin"), at: 5)
            try s.audit(AuditEvent(projectID: "q", event: .refreshTokenReuse, localID: "v", outcome: "refused"), at: 9)
            let all = try s.auditEvents(project: nil, localID: nil, since: nil, limit: 10)
            #expect(all.map(\.event.event) == [.refreshTokenReuse, .revoke, .phoneSignIn])
            #expect(all[0].event.outcome == "refused" && all[1].event.actor == "admin" && all[1].event.remoteAddress == "192.0.2.1")
            #expect(all[2].event.actor == nil && all[2].event.outcome == "ok" && all[2].at == 1)
            #expect(try s.auditEvents(project: "p", localID: "u", since: 2, limit: 10).map(\.event.event) == [.revoke])
            #expect(try s.auditEvents(project: nil, localID: nil, since: nil, limit: 1).count == 1)
        }
    }

    @Test("outbox: an expired lease counts as an attempt; a message whose attempts reach the limit is made dead, not leased again",
          arguments: Backend.available)
    func outboxAttempts(backend: Backend) throws {
        try with(backend) { _, s in
            func leased(_ id: Int64, at now: Millis, max: Int = 3) throws -> OutboxLease? {
                guard case let .leased(lease) = try s.lease(id: id, now: now, until: now + 100, maxAttempts: max) else { return nil }
                return lease
            }
            func exhausted(_ id: Int64, at now: Millis, max: Int = 3) throws -> OutboxMessage? {
                guard case let .exhausted(m) = try s.lease(id: id, now: now, until: now + 100, maxAttempts: max) else { return nil }
                return m
            }
            // Every send ends the process: each lease expires without an outcome, and the next one counts it.
            let crashing = try s.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+1", body: "code 1", nextAttemptAt: 0, createdAt: 0))
            for (attempt, now) in [(0, 0), (1, 100), (2, 200)] as [(Int, Millis)] {
                let lease = try #require(try leased(crashing, at: now), "lease \(attempt + 1)")
                #expect(lease.message.attempts == attempt && lease.token == Int64(attempt + 1))
                // Not due while its lease runs: another worker gets nothing, and nothing is counted.
                #expect(try s.lease(id: crashing, now: now + 99, until: now + 199, maxAttempts: 3) == .unavailable)
            }
            // The third lease expired as well: three attempts, none left. Dead instead, body scrubbed, said why.
            let dead = try #require(try exhausted(crashing, at: 300))
            #expect(dead.id == crashing && dead.status == .dead && dead.attempts == 3 && dead.body.isEmpty)
            #expect(dead.lastError == OutboxLeasing.lostAttemptError)
            #expect(try s.lease(id: crashing, now: 10_000, until: 10_100, maxAttempts: 3) == .unavailable)
            #expect(try s.dueMessageIDs(now: 10_000, limit: 5, channels: [.sms]).isEmpty)
            #expect(try s.messages(project: "p", channel: .sms, limit: 5) == [dead])

            // Reported failures and lost leases add up: a failure, a lease that expires, and the next is the third.
            let mixed = try s.enqueue(OutboxMessage(projectID: "p", channel: .email, recipient: "a@example.com", body: "link", nextAttemptAt: 0, createdAt: 0))
            #expect(try s.markFailed(try #require(try leased(mixed, at: 0)), error: "HTTP 503", nextAttemptAt: 10, at: 1))
            #expect(try leased(mixed, at: 10)?.message.attempts == 1)
            let third = try #require(try leased(mixed, at: 110))
            #expect(third.message.attempts == 2)
            // Its outcome is still recorded (here: sent), under its own lease.
            #expect(try s.markSent(third, at: 120, keepBody: true))
            #expect(try s.messages(project: "p", channel: .email, limit: 5).first?.status == .sent)

            // A pending message already at the limit (the limit was lowered) is made dead too, keeping its last error;
            // one not yet due is left alone.
            let lowered = try s.enqueue(OutboxMessage(projectID: "p", channel: .push, recipient: "AB", body: "{}", nextAttemptAt: 0, createdAt: 0))
            #expect(try s.markFailed(try #require(try leased(lowered, at: 0)), error: "HTTP 500", nextAttemptAt: 50, at: 1))
            #expect(try s.lease(id: lowered, now: 40, until: 140, maxAttempts: 1) == .unavailable)
            let gone = try #require(try exhausted(lowered, at: 50, max: 1))
            #expect(gone.status == .dead && gone.attempts == 1 && gone.lastError == "HTTP 500" && gone.body.isEmpty)
        }
    }

    @Test("sessions and refresh tokens: rotation once, family and per-user revocation, active list", arguments: Backend.available)
    func sessions(backend: Backend) throws {
        try with(backend) { _, s in
            let t = RefreshTokenRecord(tokenHash: Self.hash(1), familyID: "f", projectID: "p", localID: "u", provider: "phone", authTime: 1,
                                       createdAt: 1, secondFactor: "phone")
            try s.insertRefreshToken(t)
            #expect(try s.refreshToken(hash: Self.hash(1)) == t)
            #expect(try s.markRefreshTokenRotated(hash: Self.hash(1), at: 2) && !s.markRefreshTokenRotated(hash: Self.hash(1), at: 2))
            try s.revokeRefreshFamily("f", project: "p", localID: "u", at: 3)
            #expect(try s.refreshToken(hash: Self.hash(1))?.revokedAt == 3)
            let session = SessionRecord(sidHash: Self.hash(2), projectID: "p", localID: "u", provider: "phone", createdAt: 1, lastSeenAt: 1,
                                        expiresAt: 100, idleTimeoutSeconds: 60)
            try s.insertSession(session)
            try s.touchSession(sidHash: Self.hash(2), at: 5)
            #expect(try s.session(sidHash: Self.hash(2))?.lastSeenAt == 5)
            #expect(try s.activeSessions(project: "p", localID: "u", now: 10).count == 1)
            #expect(try s.revokeSessions(project: "p", localID: "u", createdBefore: 2, at: 6) == 1)
            #expect(try s.activeSessions(project: "p", localID: "u", now: 10).isEmpty)
            try s.deleteTokensAndSessions(project: "p", localID: "u")
            #expect(try s.session(sidHash: Self.hash(2)) == nil && s.refreshToken(hash: Self.hash(1)) == nil)
        }
    }

    @Test("housekeeping deletes each kind in bounded batches", arguments: Backend.available)
    func housekeeping(backend: Backend) throws {
        try with(backend) { _, s in
            for i in 0..<5 {
                try s.insertAppToken(AppTokenRecord(tokenHash: Self.hash(i), projectID: "p", apiKey: "", appID: "web", expiresAt: 10), at: 0)
                try s.audit(AuditEvent(projectID: "p", event: .keyRotate), at: Millis(i))
            }
            #expect(try s.purge(.appTokens, cutoff: 10, limit: 3) == 3)
            #expect(try s.purge(.appTokens, cutoff: 10, limit: 3) == 2)
            #expect(try s.purge(.auditLog, cutoff: 3, limit: 2) == 2)
            #expect(try s.purge(.auditLog, cutoff: 3, limit: 2) == 1)
            _ = try s.incrementCounter(bucket: "b", windowStart: 0, amount: 1, expiresAt: 5)
            #expect(try s.purge(.limitCounters, cutoff: 6, limit: 10) == 1)
        }
    }

    @Test("races: of 8 connections consuming one code, link, challenge, app token, refresh token or receipt use, one wins",
          arguments: Backend.available)
    func races(backend: Backend) throws {
        try with(backend) { db, s in
            try s.insertPhoneVerification(PhoneVerificationRecord(sessionHash: Self.hash(1), projectID: "p", phoneNumber: "+1", appID: "",
                                                                  codeHash: [], nonce: [], createdAt: 0, expiresAt: 1000))
            try s.insertEmailLink(EmailLinkRecord(codeHash: Self.hash(2), projectID: "p", requestType: .emailSignIn, email: "a@b.c",
                                                  createdAt: 0, expiresAt: 1000))
            try s.insertAppToken(AppTokenRecord(tokenHash: Self.hash(3), projectID: "p", apiKey: "", appID: "web", expiresAt: 1000), at: 0)
            try s.insertRefreshToken(RefreshTokenRecord(tokenHash: Self.hash(4), familyID: "f", projectID: "p", localID: "u", provider: "phone",
                                                        authTime: 0, createdAt: 0))
            try s.insertIOSReceipt(IOSReceiptRecord(receiptHash: Self.hash(5), projectID: "p", bundleID: "b", deviceTokenHash: [], sandbox: false,
                                                    secretHash: [], createdAt: 0, expiresAt: 1000))
            let wins = try db.race(threads: 8) { s -> [Bool] in
                [try s.consumePhoneVerification(sessionHash: Self.hash(1), now: 1, maxAttempts: 5),
                 try s.consumeEmailLink(hash: Self.hash(2), at: 1),
                 try s.markChallengeUsed(id: Self.hash(6), project: "p", expiresAt: 1000, now: 1),
                 try s.consumeAppToken(hash: Self.hash(3), now: 1) != nil,
                 try s.markRefreshTokenRotated(hash: Self.hash(4), at: 1),
                 try s.useIOSReceipt(hash: Self.hash(5), maxUses: 1, now: 1)]
            }
            for kind in 0..<6 { #expect(wins.filter { $0[kind] }.count == 1, "kind \(kind)") }
            // Counters add up under contention: 8 × 25 increments.
            _ = try db.race(threads: 8) { s in for _ in 0..<25 { _ = try s.incrementCounter(bucket: "c", windowStart: 0, amount: 1, expiresAt: 9) } }
            #expect(try s.counter(bucket: "c", windowStart: 0) == 200)
            // Each message is leased by one worker.
            for i in 0..<20 { _ = try s.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+\(i)", body: "b", nextAttemptAt: 0, createdAt: 0)) }
            let leased = try db.race(threads: 4) { s -> [Int64] in
                try s.dueMessageIDs(now: 0, limit: 20, channels: [.sms]).compactMap { try s.lease(id: $0, now: 0, until: 100)?.message.id }
            }
            #expect(leased.flatMap { $0 }.sorted() == Array(Set(leased.flatMap { $0 })).sorted())
            #expect(leased.flatMap { $0 }.count == 20)
        }
    }

    // MARK: Passkeys

    static func passkey(_ id: String, user: String = "u", project: String = "p", at: Millis = 1) -> PasskeyRecord {
        PasskeyRecord(projectID: project, credentialID: id, localID: user, publicKey: [0xA5, 0x01, 0x02, 0x03, 0x26], algorithm: -7, signCount: 0,
                      name: "Key \(id)", aaguid: [UInt8](repeating: 0, count: 16), backupEligible: true, backedUp: false, createdAt: at)
    }

    @Test("passkeys: insert, find, list oldest first, rename and delete the user's own, a credential id once per project (case counts)",
          arguments: Backend.available)
    func passkeys(backend: Backend) throws {
        try with(backend) { _, s in
            let a = Self.passkey("cred-a", at: 20)
            #expect(try s.insertPasskey(a))
            #expect(try s.passkey(project: "p", credentialID: "cred-a") == a)
            // Every column round-trips: bytes with 0x00 and 0xFF, no name, a last use, the largest counter.
            var b = Self.passkey("cred-b", at: 10)
            b.publicKey = [0x00, 0xFF, 0x80, 0x00]
            b.name = nil
            b.aaguid = (0..<16).map { UInt8($0 * 17) }
            b.algorithm = -257
            b.backupEligible = false
            b.backedUp = true
            b.signCount = Int64(UInt32.max)
            b.lastUsedAt = 11
            #expect(try s.insertPasskey(b))
            #expect(try s.passkey(project: "p", credentialID: "cred-b") == b)
            #expect(try s.passkeys(project: "p", localID: "u") == [b, a])
            #expect(try s.passkey(project: "p", credentialID: "none") == nil && s.passkeys(project: "p", localID: "nobody").isEmpty)

            // The same id in the same project: refused, nothing written, whoever asks.
            var taken = Self.passkey("cred-a", user: "v", at: 30)
            #expect(try !s.insertPasskey(taken))
            #expect(try !s.insertPasskey(a))
            #expect(try s.passkey(project: "p", credentialID: "cred-a") == a && s.passkeys(project: "p", localID: "v").isEmpty)
            // In another project it is another credential; an id differing in case is another id.
            taken.projectID = "q"
            #expect(try s.insertPasskey(taken))
            #expect(try s.passkey(project: "q", credentialID: "cred-a")?.localID == "v")
            #expect(try s.insertPasskey(Self.passkey("CRED-A", user: "w")))
            #expect(try s.passkey(project: "p", credentialID: "CRED-A")?.localID == "w")

            // Renamed only by its user.
            #expect(try s.renamePasskey(project: "p", localID: "u", credentialID: "cred-a", name: "Laptop"))
            #expect(try !s.renamePasskey(project: "p", localID: "v", credentialID: "cred-a", name: "Stolen"))
            #expect(try !s.renamePasskey(project: "p", localID: "u", credentialID: "none", name: "x"))
            #expect(try s.passkey(project: "p", credentialID: "cred-a")?.name == "Laptop")
            #expect(try s.passkey(project: "q", credentialID: "cred-a")?.name == "Key cred-a")
            #expect(try s.renamePasskey(project: "p", localID: "u", credentialID: "cred-a", name: nil))
            #expect(try s.passkey(project: "p", credentialID: "cred-a")?.name == nil)

            // Deleted only by its user, once; the other project's is untouched; the id may be registered again.
            #expect(try !s.deletePasskey(project: "p", localID: "v", credentialID: "cred-a"))
            #expect(try s.deletePasskey(project: "p", localID: "u", credentialID: "cred-a"))
            #expect(try !s.deletePasskey(project: "p", localID: "u", credentialID: "cred-a"))
            #expect(try s.passkeys(project: "p", localID: "u").map(\.credentialID) == ["cred-b"])
            #expect(try s.passkey(project: "q", credentialID: "cred-a") != nil)
            #expect(try s.insertPasskey(Self.passkey("cred-a", user: "v")))

            // Deleting a user takes their passkeys; deleting a project's users takes the project's.
            try s.deleteTokensAndSessions(project: "p", localID: "u")
            #expect(try s.passkeys(project: "p", localID: "u").isEmpty && s.passkeys(project: "p", localID: "v").count == 1)
            _ = try s.deleteAllAccounts(project: "q")
            #expect(try s.passkey(project: "q", credentialID: "cred-a") == nil && s.passkey(project: "p", credentialID: "cred-a") != nil)
        }
    }

    @Test("passkeys: a use is recorded only from the expected count (counter, backup state, last use), in its project only",
          arguments: Backend.available)
    func passkeyUse(backend: Backend) throws {
        try with(backend) { _, s in
            #expect(try s.insertPasskey(Self.passkey("cred")))
            #expect(try s.insertPasskey(Self.passkey("cred", project: "q")))
            #expect(try !s.recordPasskeyUse(project: "p", credentialID: "cred", expectedCount: 1, signCount: 2, backedUp: true, at: 50))
            #expect(try s.passkey(project: "p", credentialID: "cred") == Self.passkey("cred"))
            #expect(try s.recordPasskeyUse(project: "p", credentialID: "cred", expectedCount: 0, signCount: 5, backedUp: true, at: 50))
            // The same expectation again is stale now.
            #expect(try !s.recordPasskeyUse(project: "p", credentialID: "cred", expectedCount: 0, signCount: 6, backedUp: false, at: 60))
            let used = try #require(try s.passkey(project: "p", credentialID: "cred"))
            #expect(used.signCount == 5 && used.backedUp && used.lastUsedAt == 50)
            #expect(try s.recordPasskeyUse(project: "p", credentialID: "cred", expectedCount: 5, signCount: 9, backedUp: false, at: 70))
            #expect(try s.passkey(project: "p", credentialID: "cred").map { [$0.signCount, $0.lastUsedAt ?? -1] } == [9, 70])
            #expect(try s.passkey(project: "p", credentialID: "cred")?.backedUp == false)
            // The other project's credential of the same id is untouched; an authenticator without a counter stays at 0.
            #expect(try s.passkey(project: "q", credentialID: "cred")?.lastUsedAt == nil)
            #expect(try s.recordPasskeyUse(project: "q", credentialID: "cred", expectedCount: 0, signCount: 0, backedUp: false, at: 80))
            #expect(try s.recordPasskeyUse(project: "q", credentialID: "cred", expectedCount: 0, signCount: 0, backedUp: false, at: 90))
            #expect(try s.passkey(project: "q", credentialID: "cred").map { [$0.signCount, $0.lastUsedAt ?? -1] } == [0, 90])
            #expect(try !s.recordPasskeyUse(project: "p", credentialID: "none", expectedCount: 0, signCount: 1, backedUp: false, at: 1))
        }
    }

    @Test("passkey challenges: read by hash, consumed once, never at or after expiry, purged by expiry", arguments: Backend.available)
    func passkeyChallenges(backend: Backend) throws {
        try with(backend) { _, s in
            let enrolment = PasskeyChallengeRecord(challengeHash: Self.hash(1), projectID: "p", localID: "u", createdAt: 100, expiresAt: 400)
            let signIn = PasskeyChallengeRecord(challengeHash: Self.hash(2), projectID: "p", localID: nil, createdAt: 100, expiresAt: 400)
            try s.insertPasskeyChallenge(enrolment)
            try s.insertPasskeyChallenge(signIn)
            #expect(try s.passkeyChallenge(hash: Self.hash(1)) == enrolment && s.passkeyChallenge(hash: Self.hash(2)) == signIn)
            #expect(try s.passkeyChallenge(hash: Self.hash(3)) == nil)
            #expect(throws: (any Error).self) { try s.insertPasskeyChallenge(signIn) }
            // At its expiry and after: not consumed, and still unconsumed.
            #expect(try !s.consumePasskeyChallenge(hash: Self.hash(2), now: 400))
            #expect(try !s.consumePasskeyChallenge(hash: Self.hash(2), now: 401))
            #expect(try s.passkeyChallenge(hash: Self.hash(2))?.consumedAt == nil)
            // Before it: once.
            #expect(try s.consumePasskeyChallenge(hash: Self.hash(1), now: 399))
            #expect(try !s.consumePasskeyChallenge(hash: Self.hash(1), now: 399))
            #expect(try s.passkeyChallenge(hash: Self.hash(1))?.consumedAt == 399)
            #expect(try !s.consumePasskeyChallenge(hash: Self.hash(3), now: 1))
            // Purged when expired before the cutoff, consumed or not; housekeeping's batches reach the same rows.
            try s.insertPasskeyChallenge(PasskeyChallengeRecord(challengeHash: Self.hash(4), projectID: "p", localID: nil, createdAt: 100, expiresAt: 1000))
            #expect(try s.purgePasskeyChallenges(before: 400) == 0)
            #expect(try s.purgePasskeyChallenges(before: 401) == 2)
            #expect(try s.passkeyChallenge(hash: Self.hash(1)) == nil && s.passkeyChallenge(hash: Self.hash(4)) != nil)
            #expect(try s.purge(.passkeyChallenges, cutoff: 1001, limit: 10) == 1)
            #expect(try s.passkeyChallenge(hash: Self.hash(4)) == nil)
        }
    }

    @Test("races: two connections recording a use of one credential from the same count, one wins (ten rounds); of 8 consuming one challenge or inserting one credential id, one wins",
          arguments: Backend.available)
    func passkeyRaces(backend: Backend) throws {
        try with(backend) { db, s in
            #expect(try s.insertPasskey(Self.passkey("raced")))
            for round in 0..<10 {
                let expected = Int64(round)
                let wins = try db.race(threads: 2) { s in
                    try s.recordPasskeyUse(project: "p", credentialID: "raced", expectedCount: expected, signCount: expected + 1, backedUp: false,
                                           at: Millis(round))
                }
                #expect(wins.filter { $0 }.count == 1, "round \(round): \(wins)")
                #expect(try s.passkey(project: "p", credentialID: "raced")?.signCount == expected + 1)
            }
            try s.insertPasskeyChallenge(PasskeyChallengeRecord(challengeHash: Self.hash(1), projectID: "p", localID: nil, createdAt: 0, expiresAt: 1000))
            let consumed = try db.race(threads: 8) { s in try s.consumePasskeyChallenge(hash: Self.hash(1), now: 1) }
            #expect(consumed.filter { $0 }.count == 1)
            let users = Locked(0)
            let inserted = try db.race(threads: 8) { s -> Bool in
                let user = users.withLock { n -> String in n += 1; return "user-\(n)" }
                return try s.insertPasskey(Self.passkey("contested", user: user))
            }
            #expect(inserted.filter { $0 }.count == 1)
            #expect(try s.passkey(project: "p", credentialID: "contested")?.localID.hasPrefix("user-") == true)
        }
    }
}
