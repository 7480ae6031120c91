import AuthEngine
import AuthStore
import Foundation
import Testing

/// One row (or two) in every table, written through the store ports: the content of the
/// databases in `Fixtures/`, which a release made (the files say which schema), and what a
/// store must still read from them after it has migrated them in place.
enum StoreFixture {
    static let far: Millis = 4_102_444_800_000  // 2100-01-01: nothing here expires while tests run
    static func hash(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: 32) }

    static var emailAccount: Account {
        var a = Account(projectID: "fixture", localID: "user-email", createdAt: 1_700_000_000_000)
        a.email = "ada@example.com"
        a.emailVerified = true
        a.displayName = "Ada \u{e9}\u{1F600}"
        a.photoURL = "https://example.com/ada.png"
        a.passwordHash = "scrypt$abc"
        a.emailLinkSignin = true
        a.customAttributes = "{\"role\":\"admin\"}"
        a.lastLoginAt = 1_700_000_001_000
        a.lastRefreshAt = 1_700_000_002_000
        a.validSince = 1_700_000
        a.providers = [ProviderInfo(providerID: "password", rawID: "ada@example.com", email: "ada@example.com")]
        a.mfaEnrollments = [
            MFAEnrollment(enrollmentID: "factor-phone", phoneNumber: "+33612345678", displayName: "Work", enrolledAt: 1_700_000_003_000),
            MFAEnrollment(enrollmentID: "factor-totp", totp: TOTPFactor(sealedSecret: "c2VhbGVk", lastStep: 56_666_666),
                          displayName: nil, enrolledAt: 1_700_000_004_000),
        ]
        return a
    }

    static var phoneAccount: Account {
        var a = Account(projectID: "fixture", localID: "user-phone", createdAt: 1_700_000_000_500)
        a.phoneNumber = "+16505550100"
        a.disabled = true
        a.providers = [ProviderInfo(providerID: "phone", rawID: "+16505550100", phoneNumber: "+16505550100")]
        return a
    }

    static let anonymous = Account(projectID: "fixture", localID: "user-anon", createdAt: 1_700_000_000_900)

    static let refresh = RefreshTokenRecord(tokenHash: hash(1), familyID: "family-1", projectID: "fixture", localID: "user-email",
                                            provider: "password", authTime: 1_700_000_001_000, createdAt: 1_700_000_001_000,
                                            secondFactor: "totp", developerClaims: "{\"tier\":2}")
    static let session = SessionRecord(sidHash: hash(2), projectID: "fixture", localID: "user-email", provider: "password",
                                       createdAt: 1_700_000_001_000, lastSeenAt: 1_700_000_001_500, expiresAt: far, idleTimeoutSeconds: 3600)
    static let phoneCode = PhoneVerificationRecord(sessionHash: hash(3), projectID: "fixture", phoneNumber: "+16505550100", appID: "web",
                                                   codeHash: [9, 8, 7], nonce: [0, 1, 255], createdAt: 1_700_000_000_000, expiresAt: far,
                                                   attempts: 1, isTest: true, clientHash: [4, 4], purpose: .enrolment(localID: "factor-phone"))
    static let phoneProof = PhoneProofRecord(proofHash: hash(4), projectID: "fixture", phoneNumber: "+16505550100",
                                             createdAt: 1_700_000_000_000, expiresAt: far)
    static let emailLink = EmailLinkRecord(codeHash: hash(5), projectID: "fixture", requestType: .emailSignIn, email: "ada@example.com",
                                           localID: "user-email", continueURL: "https://app.example.com/done", canHandleCodeInApp: true,
                                           iosBundleID: "com.example.ios", androidPackage: "com.example.android", lang: "fr",
                                           browserBinding: [1, 2, 3], createdAt: 1_700_000_000_000, expiresAt: far)
    static let signingKey = SigningKeyRecord(kid: "kid-fixture", privatePEM: "private", publicPEM: "public", certificatePEM: "certificate",
                                             createdAt: 1_700_000_000_000)
    static let secretValue: [UInt8] = [0, 1, 2, 254, 255]
    static let outbox = OutboxMessage(projectID: "fixture", channel: .email, recipient: "ada@example.com", subject: "Sign in",
                                      body: "line\r\n\tbody", htmlBody: "<p>body</p>", metadata: "{\"k\":1}",
                                      nextAttemptAt: far, createdAt: 1_700_000_000_000)
    static let appToken = AppTokenRecord(tokenHash: hash(6), projectID: "fixture", apiKey: "key-fixture", appID: "ios", expiresAt: far)
    static let auditEvent = AuditEvent(projectID: "fixture", event: .emailLinkSignIn, localID: "user-email",
                                       remoteAddress: "192.0.2.7", detail: "d", actor: "admin", outcome: "ok")
    static let hold = SMSHold(projectID: "fixture", kind: .prefix, key: "+3712012", heldAt: 1_700_000_000_000, expiresAt: far,
                              recentCount: 40, baselineCount: 2)
    static let mfaPending = MFAPendingRecord(credentialHash: hash(7), projectID: "fixture", localID: "user-email", firstFactor: "password",
                                             authTime: 1_700_000_001_000, createdAt: 1_700_000_001_000, expiresAt: far)
    static let receipt = IOSReceiptRecord(receiptHash: hash(8), projectID: "fixture", bundleID: "com.example.ios", deviceTokenHash: [3],
                                          sandbox: true, secretHash: [5], createdAt: 1_700_000_000_000, expiresAt: far, uses: 1)
    /// Schema 16's tables (passkeys): newer than the files in `Fixtures/`, so `check` does not look
    /// for them there; `checkSince16` reads them back wherever `fill` wrote them.
    static let passkey = PasskeyRecord(projectID: "fixture", credentialID: "Zml4dHVyZS1wYXNza2V5", localID: "user-email",
                                       publicKey: [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + hash(10) + [0x22, 0x58, 0x20] + hash(11),
                                       algorithm: -7, signCount: 42, name: "Laptop \u{e9}", aaguid: [UInt8](repeating: 0xAD, count: 16),
                                       backupEligible: true, backedUp: true, createdAt: 1_700_000_005_000, lastUsedAt: 1_700_000_006_000)
    static let passkeyChallenge = PasskeyChallengeRecord(challengeHash: hash(12), projectID: "fixture", localID: "user-email",
                                                         createdAt: 1_700_000_000_000, expiresAt: far)

    /// Writes every record above (each table gets at least one row).
    static func fill(_ s: some GatehouseStore & HousekeepingStore) throws {
        try s.insertAccount(emailAccount)
        try s.insertAccount(phoneAccount)
        try s.insertAccount(anonymous)
        try s.insertRefreshToken(refresh)
        try s.insertSession(session)
        try s.insertPhoneVerification(phoneCode)
        try s.insertPhoneProof(phoneProof)
        try s.insertEmailLink(emailLink)
        try s.insertSigningKey(signingKey)
        _ = try s.insertSecretIfAbsent(named: "fixture-secret", value: secretValue, at: 1_700_000_000_000)
        _ = try s.incrementCounter(bucket: "fixture-bucket", windowStart: 1_700_000_000_000, amount: 3, expiresAt: far)
        _ = try s.enqueue(outbox)
        try s.insertAppToken(appToken, at: 1_700_000_000_000)
        _ = try s.markChallengeUsed(id: hash(9), project: "fixture", expiresAt: far, now: 1_700_000_000_000)
        try s.audit(auditEvent, at: 1_700_000_000_000)
        try s.putSMSHold(hold)
        try s.insertMFAPending(mfaPending)
        try s.insertIOSReceipt(receipt)
        _ = try s.insertPasskey(passkey)
        try s.insertPasskeyChallenge(passkeyChallenge)
    }

    /// Everything `fill` wrote, read back through the ports.
    static func check(_ s: some GatehouseStore & HousekeepingStore) throws {
        #expect(try s.account(project: "fixture", localID: "user-email") == emailAccount)
        #expect(try s.account(project: "fixture", email: "ada@example.com") == emailAccount)
        #expect(try s.account(project: "fixture", phoneNumber: "+16505550100") == phoneAccount)
        #expect(try s.account(project: "fixture", providerID: "phone", rawID: "+16505550100") == phoneAccount)
        #expect(try s.account(project: "fixture", localID: "user-anon") == anonymous)
        #expect(try s.countAccounts(project: "fixture") == 3)
        #expect(try s.refreshToken(hash: hash(1)) == refresh)
        #expect(try s.session(sidHash: hash(2)) == session)
        #expect(try s.phoneVerification(sessionHash: hash(3)) == phoneCode)
        #expect(try s.phoneProof(hash: hash(4)) == phoneProof)
        #expect(try s.emailLink(hash: hash(5)) == emailLink)
        #expect(try s.publishedSigningKeys(at: 1_700_000_000_000).contains(signingKey))
        #expect(try s.secret(named: "fixture-secret") == secretValue)
        #expect(try s.counter(bucket: "fixture-bucket", windowStart: 1_700_000_000_000) == 3)
        let sent = try s.messages(project: "fixture", channel: .email, limit: 10)
        #expect(sent.count == 1 && sent.first?.body == outbox.body && sent.first?.htmlBody == outbox.htmlBody
                && sent.first?.metadata == outbox.metadata && sent.first?.subject == outbox.subject && sent.first?.status == .pending)
        #expect(try s.auditEvents(project: "fixture", localID: nil, since: nil, limit: 10).map(\.event) == [auditEvent])
        #expect(try !s.markChallengeUsed(id: hash(9), project: "fixture", expiresAt: far, now: 1_700_000_000_000))
        #expect(try s.smsHold(project: "fixture", kind: .prefix, key: "+3712012") == hold)
        #expect(try s.mfaPending(hash: hash(7)) == mfaPending)
        #expect(try s.iosReceipt(hash: hash(8)) == receipt)
        // Last: consuming deletes it.
        #expect(try s.consumeAppToken(hash: hash(6), now: 1_700_000_000_000) == appToken)
    }

    /// What `fill` wrote in the tables schema 16 added (not in the schema-14 files).
    static func checkSince16(_ s: some GatehouseStore & HousekeepingStore) throws {
        #expect(try s.passkey(project: "fixture", credentialID: passkey.credentialID) == passkey)
        #expect(try s.passkeys(project: "fixture", localID: "user-email") == [passkey])
        #expect(try s.passkeyChallenge(hash: hash(12)) == passkeyChallenge)
    }
}

@Suite("Store fixtures")
struct StoreFixtureWriter {
    /// Writes `Fixtures/` anew from this build: a SQLite file, and a PostgreSQL schema named
    /// `fixture` (dumped by hand, see Fixtures/README.md). Runs only when asked.
    @Test("write the fixture databases", .enabled(if: ProcessInfo.processInfo.environment["GATEHOUSE_WRITE_STORE_FIXTURES"] != nil))
    func write() throws {
        let dir = try #require(ProcessInfo.processInfo.environment["GATEHOUSE_WRITE_STORE_FIXTURES"])
        let path = dir + "/store.sqlite"
        try? FileManager.default.removeItem(atPath: path)
        do {
            let store = try SQLStore(path: path)
            try StoreFixture.fill(store)
        }
        if let url = Backend.postgresURL {
            let admin = try PostgreSQLConnection(url: url)
            try admin.script("DROP SCHEMA IF EXISTS fixture CASCADE; CREATE SCHEMA fixture")
            let store = try SQLStore(url: url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3Dfixture")
            try StoreFixture.fill(store)
        }
    }
}

@Suite("Store fixtures read back")
struct StoreFixtureRoundTripTests {
    /// `fill` and `check` agree on this build's schema, every table included (the fixture files
    /// test what an older release wrote; this, that the next files will hold a row of each table).
    @Test("every fixture row written by this build reads back", arguments: Backend.available)
    func roundTrip(backend: Backend) throws {
        let db = try TestDatabase(backend)
        defer { db.remove() }
        let store = try db.open()
        try StoreFixture.fill(store)
        try StoreFixture.checkSince16(store)
        try StoreFixture.check(store)
    }
}
