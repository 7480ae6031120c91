import JSONValue

/// What phone sign-in needs from the store.
public typealias PhoneFlowStore = PhoneStore & AccountStore & SigningKeyStore & SecretStore & LimitStore & OutboxStore
    & AuditStore & AppTokenStore & SessionStore & SMSPumpingStore

/// Phone sign-in, step 1: `accounts:sendVerificationCode` (firebase-wire.md §2.1, §5.1;
/// gatehouse.md "Phone sign-in"), and the hosted page's "send again".
///
/// A code is 6 digits from the `RandomSource`, stored only as an HMAC under the server's phone
/// key, valid `PhonePolicy.codeLifetimeSeconds` (at most 10 minutes). The SMS is committed to the
/// outbox in the same transaction as the verification record.
public struct PhoneSignIn {
    public let store: PhoneFlowStore
    public let clock: Clock
    public let random: RandomSource
    public let tokens: TokenService
    public let project: ProjectSettings

    public init(store: PhoneFlowStore, clock: Clock, random: RandomSource, tokens: TokenService, project: ProjectSettings) {
        self.store = store; self.clock = clock; self.random = random; self.tokens = tokens; self.project = project
    }

    /// A request to send a code.
    public struct SendRequest {
        /// As typed: E.164 from the API; national numbers need `defaultRegion`.
        public var phoneNumber: String?
        public var defaultRegion: String?
        /// `recaptchaToken`: a Gatehouse app token (required for real numbers outside dev mode).
        public var appToken: String?
        /// The API key the token must be bound to; nil for the hosted pages.
        public var apiKey: String?
        /// The calling app (reentrancy key): bundle id, package name, `web` for the hosted page.
        public var appID: String
        public var remoteAddress: String
        /// The human part of the SMS for a code, in the caller's locale; the engine appends the
        /// origin-bound line `@<domain> #<code>`.
        public var composeSMS: (_ code: String) -> String

        public init(phoneNumber: String?, defaultRegion: String? = nil, appToken: String? = nil, apiKey: String? = nil,
                    appID: String = "", remoteAddress: String, composeSMS: @escaping (_ code: String) -> String) {
            self.phoneNumber = phoneNumber; self.defaultRegion = defaultRegion; self.appToken = appToken; self.apiKey = apiKey
            self.appID = appID; self.remoteAddress = remoteAddress; self.composeSMS = composeSMS
        }
    }

    /// The outcome of a send.
    public struct SendResult: Sendable, Equatable {
        public var sessionInfo: String
        /// E.164.
        public var phoneNumber: String
        /// False when a pending code was reused (reentrancy) or the number is a test number.
        public var smsQueued: Bool
        public var isTest: Bool
        public var expiresAt: Millis
        /// When the hosted page may offer "send again".
        public var resendAvailableAt: Millis
    }

    /// Sends a code, or returns the pending one's sessionInfo without a second SMS.
    public func sendCode(_ request: SendRequest) throws -> SendResult {
        let number = try PhoneSignIn.parse(request.phoneNumber, defaultRegion: request.defaultRegion, project: project)
        try checkRegion(number)
        try verifyApp(number, token: request.appToken, apiKey: request.apiKey)
        let appID = PhoneSignIn.normalisedAppID(request.appID)
        let keys = try PhoneKeys.load(store: store, random: random, at: clock.now())
        // The new code and its keyed hashes need no database: made before taking the write lock.
        let draft = Draft(number, keys: keys, random: random)
        // One write transaction: the reentrancy check, the send limits and the new code.
        return try store.transaction {
            // Reentrancy: a pending code for the same number and app is reused, nothing is sent
            // or counted.
            if let pending = try store.pendingPhoneVerification(project: project.id, phoneNumber: number.e164, appID: appID,
                                                                now: clock.now(), maxAttempts: policy.maxAttemptsPerSession) {
                return result(pending, keys: keys, queued: false)
            }
            // A refusal throws before anything is written (the rollback undoes nothing).
            try countSend(number, remoteAddress: request.remoteAddress)
            return try issue(draft, appID: appID, compose: request.composeSMS)
        }
    }

    /// The hosted page's "send again": allowed `PhonePolicy.resendAfterSeconds` after the code
    /// `sessionInfo` was issued; issues a new code (new sessionInfo) and invalidates the old one.
    /// Too early → `TOO_MANY_ATTEMPTS_TRY_LATER : RESEND_TOO_SOON`.
    public func resend(sessionInfo: String?, appToken: String?, apiKey: String? = nil, remoteAddress: String,
                       composeSMS: @escaping (_ code: String) -> String) throws -> SendResult {
        let old = try lookUp(sessionInfo)
        if old.consumedAt != nil || old.supersededAt != nil { throw AuthError(.sessionExpired) }
        let now = clock.now()
        if now < old.createdAt + policy.resendAfterSeconds * 1000 { throw AuthError(.tooManyAttempts, PhoneSignIn.resendTooSoon) }
        let number = try PhoneSignIn.parse(old.phoneNumber, project: project)
        try checkRegion(number)
        try verifyApp(number, token: appToken, apiKey: apiKey)
        try countSend(number, remoteAddress: remoteAddress)
        let keys = try PhoneKeys.load(store: store, random: random, at: now)
        let draft = Draft(number, keys: keys, random: random)
        return try store.transaction {
            guard try store.phoneVerification(sessionHash: old.sessionHash)?.supersededAt == nil else { throw AuthError(.sessionExpired) }
            try store.supersedePhoneVerifications(project: project.id, phoneNumber: number.e164, appID: old.appID, at: clock.now())
            return try issue(draft, appID: old.appID, compose: composeSMS)
        }
    }

    /// The detail of the error a too-early "send again" gets.
    public static let resendTooSoon = "RESEND_TOO_SOON"

    var policy: PhonePolicy { project.phone }

    /// Codes live `codeLifetimeSeconds`, clamped to 1 minute … 10 minutes.
    var codeLifetime: Millis { min(max(policy.codeLifetimeSeconds, 60), 600) * 1000 }

    /// Numbers outside the project's SMS region allow-list are refused (test numbers send nothing).
    func checkRegion(_ number: ParsedNumber) throws {
        guard !number.isTest, let allowed = policy.allowedRegions else { return }
        if !allowed.contains(number.region.uppercased()) {
            throw AuthError(.operationNotAllowed, "SMS unable to be sent until this region enabled by the app developer.")
        }
    }

    /// Real numbers outside dev mode need a single-use app token (`recaptchaToken`). Where none
    /// is required (dev mode, test numbers) a Gatehouse token that is supplied is still consumed
    /// once; other clients' placeholder tokens (emulator-style) are ignored there.
    func verifyApp(_ number: ParsedNumber, token: String?, apiKey: String?) throws {
        let tokens = AppTokens(store: store, clock: clock, random: random)
        if project.devMode || number.isTest {
            if let token, token.hasPrefix(AppTokens.prefix) { try tokens.consume(token, project: project.id, apiKey: apiKey) }
            return
        }
        guard let token, !token.isEmpty else { throw AuthError(.missingClientIdentifier) }
        try tokens.consume(token, project: project.id, apiKey: apiKey)
    }

    /// Send limits (durable): per number per hour and per day, per IP per hour. Test numbers and
    /// dev mode are exempt; a number past its failure budget gets no new code anywhere.
    func countSend(_ number: ParsedNumber, remoteAddress: String) throws {
        let limits = Limits(store: store, clock: clock)
        if try !limits.allows(PhoneSignIn.failureRule(policy), key: numberKey(number.e164)) { throw AuthError(.tooManyAttempts) }
        guard !project.devMode, !number.isTest else { return }
        let checks: [(Limits.Rule, String)] = [
            (Limits.Rule("phone-send-number-hour", max: policy.sendsPerNumberPerHour, per: 3600), numberKey(number.e164)),
            (Limits.Rule("phone-send-number-day", max: policy.sendsPerNumberPerDay, per: 86400), numberKey(number.e164)),
            (Limits.Rule("phone-send-ip-hour", max: policy.sendsPerIPPerHour, per: 3600), project.id + "|" + remoteAddress),
        ]
        // Check every rule before counting any, so a refused send does not eat another budget.
        for (rule, key) in checks where try !limits.allows(rule, key: key) { throw AuthError(.tooManyAttempts) }
        for (rule, key) in checks { try limits.hit(rule, key: key) }
    }

    func numberKey(_ e164: String) -> String { project.id + "|" + e164 }

    /// The per-number failure budget: wrong codes per day, across every code sent.
    static func failureRule(_ policy: PhonePolicy) -> Limits.Rule {
        Limits.Rule("phone-failures-number-day", max: policy.failureBudgetPerDay, per: 86400)
    }

    /// A code about to be issued: the code, its nonce, sessionInfo and hashes.
    struct Draft {
        let number: ParsedNumber
        let code: String
        let nonce: [UInt8]
        let sessionInfo: String
        let sessionHash: [UInt8]
        let codeHash: [UInt8]

        init(_ number: ParsedNumber, keys: PhoneKeys, random: RandomSource) {
            self.number = number
            code = number.testCode ?? random.digits(6)
            nonce = random.bytes(18)
            sessionInfo = keys.sessionInfo(nonce: nonce)
            sessionHash = PhoneSignIn.hash(sessionInfo: sessionInfo)
            codeHash = keys.codeHash(code, nonce: nonce)
        }
    }

    /// Creates the verification and, for real numbers, the SMS (inside the caller's transaction).
    func issue(_ draft: Draft, appID: String, compose: (String) -> String) throws -> SendResult {
        let now = clock.now()
        let (number, code, sessionInfo) = (draft.number, draft.code, draft.sessionInfo)
        let record = PhoneVerificationRecord(
            sessionHash: draft.sessionHash, projectID: project.id, phoneNumber: number.e164, appID: appID,
            codeHash: draft.codeHash, nonce: draft.nonce, createdAt: now, expiresAt: now + codeLifetime,
            isTest: number.isTest)
        try store.purgePhoneRecords(before: now - 86_400_000)
        try store.insertPhoneVerification(record)
        if !number.isTest {
            try SMSPumpingGuard(store: store, clock: clock, project: project).admit(number)
            let body = compose(code) + "\n\n@" + project.smsOriginDomain + " #" + code
            let metadata: JSON = project.devMode
                ? .obj(("sessionInfo", sessionInfo), ("code", code), ("phoneNumber", number.e164))
                : .object([])
            _ = try store.enqueue(OutboxMessage(projectID: project.id, channel: .sms, recipient: number.e164, body: body,
                                                metadata: metadata.serialized(), nextAttemptAt: now, createdAt: now))
        }
        return result(record, sessionInfo: sessionInfo, queued: !number.isTest)
    }

    func result(_ r: PhoneVerificationRecord, keys: PhoneKeys, queued: Bool) -> SendResult {
        result(r, sessionInfo: keys.sessionInfo(nonce: r.nonce), queued: queued)
    }

    func result(_ r: PhoneVerificationRecord, sessionInfo: String, queued: Bool) -> SendResult {
        SendResult(sessionInfo: sessionInfo, phoneNumber: r.phoneNumber, smsQueued: queued, isTest: r.isTest, expiresAt: r.expiresAt,
                   resendAvailableAt: r.createdAt + policy.resendAfterSeconds * 1000)
    }
}
