import AuthCrypto
import JSONValue

/// What phone sign-in needs from the store.
public typealias PhoneFlowStore = PhoneStore & AccountStore & SigningKeyStore & SecretStore & LimitStore & OutboxStore
    & AuditStore & AppTokenStore & SessionStore & SMSPumpingStore & PushStore & DeliveryStore

/// Phone sign-in, step 1: `accounts:sendVerificationCode` (firebase-wire.md §2.1, §5.1;
/// gatehouse.md "Phone sign-in"), and the hosted page's "send again".
///
/// A code is 6 digits from the `RandomSource`, stored only as an HMAC under the server's phone
/// key, valid `PhonePolicy.codeLifetimeSeconds` (at most 10 minutes). The SMS is committed to the
/// outbox in the same transaction as the verification record.
public struct PhoneSignIn {
    /// The device signing in, for the refresh tokens this flow issues (`SignInTokens.device`).
    public var device: SignInDevice?
    /// The words of codes sent by WhatsApp or voice (SMS texts come from the request's `composeSMS`).
    public var messages: (any CodeMessages)?
    public let store: any PhoneFlowStore
    public let clock: any Clock
    public let random: any RandomSource
    public let tokens: TokenService
    public let project: ProjectSettings

    public init(store: any PhoneFlowStore, clock: any Clock, random: any RandomSource, tokens: TokenService, project: ProjectSettings) {
        self.store = store; self.clock = clock; self.random = random; self.tokens = tokens; self.project = project
    }

    /// A request to send a code.
    public struct SendRequest {
        /// As typed: E.164 from the API; national numbers need `defaultRegion`.
        public var phoneNumber: String?
        public var defaultRegion: String?
        /// `recaptchaToken`: a Gatehouse app token (required for real numbers outside dev mode).
        public var appToken: String?
        /// `iosReceipt` + `iosSecret`: silent-push app verification, instead of the app token.
        public var iosCredential: IOSCredential?
        /// The API key the token must be bound to; nil for the hosted pages.
        public var apiKey: String?
        /// The calling app (reentrancy key): bundle id, package name, `web` for the hosted page.
        public var appID: String
        public var remoteAddress: String
        /// The human part of the SMS for a code, in the caller's locale; the engine appends the
        /// origin-bound line `@<domain> #<code>`.
        public var composeSMS: (_ code: String) -> String
        /// What the code is for (`PhoneCodePurpose`); only a flow of that purpose accepts it.
        public var purpose: PhoneCodePurpose
        /// The person's language (voice and WhatsApp templates, and the automatic fallback's words).
        public var language: String?

        public init(phoneNumber: String?, defaultRegion: String? = nil, appToken: String? = nil, iosCredential: IOSCredential? = nil,
                    apiKey: String? = nil, appID: String = "", remoteAddress: String, purpose: PhoneCodePurpose = .signIn,
                    language: String? = nil, composeSMS: @escaping (_ code: String) -> String) {
            self.phoneNumber = phoneNumber; self.defaultRegion = defaultRegion; self.appToken = appToken; self.iosCredential = iosCredential
            self.apiKey = apiKey
            self.appID = appID; self.remoteAddress = remoteAddress; self.purpose = purpose; self.language = language
            self.composeSMS = composeSMS
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
        /// The channel that carries the code (nil for a test number: nothing is sent).
        public var channel: PhoneChannel?
    }

    /// Sends a code, or returns the pending one's sessionInfo without a second SMS when the same
    /// client network asked for it: another client gets a code of its own, so nobody is
    /// handed someone else's session.
    public func sendCode(_ request: SendRequest) throws -> SendResult {
        let number = try PhoneSignIn.parse(request.phoneNumber, defaultRegion: request.defaultRegion, project: project)
        try checkRegion(number)
        let appID = PhoneSignIn.normalisedAppID(request.appID)
        try verifyApp(number, token: request.appToken, ios: request.iosCredential, apiKey: request.apiKey, appID: appID)
        // The number of a user with a second factor is no first factor: no code is sent for it
        // (firebase-wire.md §5.1 item 9; checked again at sign-in).
        if request.purpose == .signIn, project.mfa.allowsPhone,
           let owner = try store.account(project: project.id, phoneNumber: number.e164),
           PhoneMFA.requiresSecondFactor(owner, project: project) {
            throw AuthError(.unsupportedFirstFactor, "A phone number cannot be set as a first factor on an SMS based MFA user.")
        }
        let client = project.client(request.remoteAddress)
        let keys = try PhoneKeys.load(store: store, random: random, at: clock.now())
        // The new code and its keyed hashes need no database: made before taking the write lock.
        let draft = Draft(number, keys: keys, random: random, client: client, project: project.id)
        // One write transaction: the reentrancy check, the send limits and the new code.
        let outcome: Result<SendResult, AuthError> = try store.transaction {
            // Reentrancy: this client network's pending code for the same number and purpose is
            // reused, nothing is sent or counted, whatever app the request names (a header the
            // client chooses freely must not buy it a fresh send).
            if let pending = try store.pendingPhoneVerification(project: project.id, phoneNumber: number.e164,
                                                                purpose: request.purpose, clientHash: draft.clientHash, now: clock.now(),
                                                                maxAttempts: policy.maxAttemptsPerSession) {
                return .success(result(pending, keys: keys, queued: false))
            }
            // A refusal by the limits returns before anything is written but its tally (the
            // console's refusals by budget), which commits.
            do { try countSend(number, client: client, purpose: request.purpose, channel: .sms) } catch let refusal as AuthError {
                return .failure(refusal)
            }
            return .success(try issue(draft, appID: appID, purpose: request.purpose, channel: .sms, language: request.language,
                                      compose: request.composeSMS))
        }
        return try outcome.get()
    }

    /// The hosted page's "send again": allowed `PhonePolicy.resendAfterSeconds` after the code
    /// `sessionInfo` was issued; issues a new code (new sessionInfo) and invalidates the old one
    /// (only that one: other clients' codes for the number stay valid). The limits are counted in
    /// the same transaction as the new code. Too early → `TOO_MANY_ATTEMPTS_TRY_LATER : RESEND_TOO_SOON`.
    /// `channel`: another of the project's channels ("Send by WhatsApp", "Call me"), weighed by
    /// the budgets as `PhoneChannel.weight` sends; one the project does not offer is refused.
    public func resend(sessionInfo: String?, appToken: String?, apiKey: String? = nil, remoteAddress: String,
                       channel: PhoneChannel = .sms, language: String? = nil,
                       composeSMS: @escaping (_ code: String) -> String) throws -> SendResult {
        guard policy.channels.contains(channel) else {
            throw AuthError(.operationNotAllowed, "This project does not send codes by \(channel.rawValue).")
        }
        let old = try lookUp(sessionInfo)
        if old.consumedAt != nil || old.supersededAt != nil { throw AuthError(.sessionExpired) }
        let now = clock.now()
        if now < old.createdAt + policy.resendAfterSeconds * 1000 { throw AuthError(.tooManyAttempts, PhoneSignIn.resendTooSoon) }
        let number = try PhoneSignIn.parse(old.phoneNumber, project: project)
        try checkRegion(number)
        try verifyApp(number, token: appToken, ios: nil, apiKey: apiKey, appID: old.appID)
        let client = project.client(remoteAddress)
        let keys = try PhoneKeys.load(store: store, random: random, at: now)
        let draft = Draft(number, keys: keys, random: random, client: client, project: project.id)
        let outcome: Result<SendResult, AuthError> = try store.transaction {
            // A refusal by the limits commits only its tally (as in `sendCode`).
            do { try countSend(number, client: client, purpose: old.purpose, channel: channel) } catch let refusal as AuthError {
                return .failure(refusal)
            }
            guard try store.supersedePhoneVerification(sessionHash: old.sessionHash, at: clock.now()) else {
                throw AuthError(.sessionExpired)
            }
            return .success(try issue(draft, appID: old.appID, purpose: old.purpose, channel: channel, language: language, compose: composeSMS))
        }
        return try outcome.get()
    }

    /// The detail of the error a too-early "send again" gets.
    public static let resendTooSoon = "RESEND_TOO_SOON"
    /// Codes and proofs are kept this long after they expire, so that a late sign-in is told its
    /// code expired rather than that it never existed.
    public static let retentionAfterExpiry: Millis = 86_400_000

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

    /// Real numbers outside dev mode need app verification: a single-use app token
    /// (`recaptchaToken`) minted for this app, or an iOS receipt + secret of this app. A credential
    /// that is supplied is always checked, also where none is required (dev mode, test numbers),
    /// so a misconfigured app shows up in development; other clients' placeholder tokens
    /// (emulator-style) are ignored there.
    func verifyApp(_ number: ParsedNumber, token: String?, ios: IOSCredential?, apiKey: String?, appID: String) throws {
        let tokens = AppTokens(store: store, clock: clock, random: random)
        let app = PhoneSignIn.tokenApp(appID, project: project)
        let pairGiven = ios?.isGiven ?? false
        if let ios, pairGiven { try IOSReceipts(store: store, clock: clock, project: project).use(ios, bundleID: appID) }
        if project.devMode || number.isTest || pairGiven {
            if let token, token.hasPrefix(AppTokens.prefix) { try tokens.consume(token, project: project.id, apiKey: apiKey, app: app) }
            return
        }
        guard let token, !token.isEmpty else { throw AuthError(.missingClientIdentifier) }
        try tokens.consume(token, project: project.id, apiKey: apiKey, app: app)
    }

    /// The app a token must have been minted for: the registered iOS bundle or Android package
    /// the request names, else `web` (browsers and clients that name no registered app).
    public static func tokenApp(_ appID: String, project: ProjectSettings) -> String {
        project.iosApp(bundleID: appID) != nil || project.androidApp(packageName: appID) != nil ? appID : "web"
    }

    /// Send limits (durable): per number per hour and per day, per client network per hour (both
    /// tiers). Test numbers and dev mode are exempt. A client past its failure budget gets no new
    /// code: the budget is the client's, so someone else's guesses never stop the owner.
    ///
    /// A number's first-factor budget has no reserve per client block, unlike a mailbox's: the
    /// codes a number gets bound the guesses anyone has against it (docs/security.md), and a
    /// reserve would add a code per block. Spending it takes many networks or time, since a
    /// network's pending code is handed back to it whatever app it names. The codes of a second
    /// factor's sign-in count on a budget of their own, which only the holder of a pending
    /// credential (someone who passed the user's first factor) can spend, never an anonymous
    /// first-factor send to the same number.
    /// A code by `channel` weighs `channel.weight` sends on the number's and the client's budgets.
    func countSend(_ number: ParsedNumber, client: ClientAddress, purpose: PhoneCodePurpose, channel: PhoneChannel) throws {
        let limits = Limits(store: store, clock: clock)
        if try !limits.allows(PhoneSignIn.failureRule(policy), client: client, scope: project.id) { throw AuthError(.tooManyAttempts) }
        guard !project.devMode, !number.isTest else { return }
        let budget = PhoneSignIn.numberBudget(policy, secondFactor: purpose.isSecondFactor)
        let perClient = Limits.Rule("phone-send-ip-hour", max: policy.sendsPerIPPerHour, per: 3600)
        let weight = channel.weight
        // Check every rule before counting any, so a refused send does not eat another budget.
        guard let admission = try limits.admits(budget, key: numberKey(number.e164), client: client, amount: weight) else {
            throw AuthError(.tooManyAttempts)
        }
        if try !limits.allows(perClient, client: client, scope: project.id, amount: weight) { throw AuthError(.tooManyAttempts) }
        try limits.count(budget, key: numberKey(number.e164), client: client, as: admission, amount: weight)
        _ = try limits.record(perClient, client: client, scope: project.id, amount: weight)
    }

    /// A number's sends per hour and per day: first factors and enrolments share one budget, the
    /// second factor's sign-in codes have their own (the same sizes); neither has a reserve.
    static func numberBudget(_ policy: PhonePolicy, secondFactor: Bool) -> Limits.DestinationBudget {
        let prefix = secondFactor ? "mfa-send-number" : "phone-send-number"
        return Limits.DestinationBudget([
            Limits.Rule(prefix + "-hour", max: policy.sendsPerNumberPerHour, per: 3600),
            Limits.Rule(prefix + "-day", max: policy.sendsPerNumberPerDay, per: 86400),
        ], reserve: nil)
    }

    func numberKey(_ e164: String) -> String { project.id + "|" + e164 }

    /// The per-client failure budget: wrong codes per day from one client network, across every
    /// number and code. (The guesses against one number are bounded by its sends × the attempts
    /// per code; see docs/security.md.)
    static func failureRule(_ policy: PhonePolicy) -> Limits.Rule {
        Limits.Rule("phone-failures-client-day", max: policy.failureBudgetPerDay, per: 86400)
    }

    /// The client a pending code is handed back to: project, network (narrow tier).
    static func clientHash(_ client: ClientAddress, project: String) -> [UInt8] {
        Digest.sha256(project + "|" + client.narrow)
    }

    /// A code about to be issued: the code, its nonce, sessionInfo and hashes.
    struct Draft {
        let number: ParsedNumber
        let code: String
        let nonce: [UInt8]
        let sessionInfo: String
        let sessionHash: [UInt8]
        let codeHash: [UInt8]
        let clientHash: [UInt8]

        init(_ number: ParsedNumber, keys: PhoneKeys, random: any RandomSource, client: ClientAddress, project: String) {
            self.number = number
            clientHash = PhoneSignIn.clientHash(client, project: project)
            code = number.testCode ?? random.digits(6)
            nonce = random.bytes(18)
            sessionInfo = keys.sessionInfo(nonce: nonce)
            sessionHash = PhoneSignIn.hash(sessionInfo: sessionInfo)
            codeHash = keys.codeHash(code, nonce: nonce)
        }
    }

    /// Creates the verification and, for real numbers, the code's message by `channel` (inside
    /// the caller's transaction).
    func issue(_ draft: Draft, appID: String, purpose: PhoneCodePurpose, channel: PhoneChannel, language: String?,
               compose: (String) -> String) throws -> SendResult {
        let now = clock.now()
        let (number, code, sessionInfo) = (draft.number, draft.code, draft.sessionInfo)
        var record = PhoneVerificationRecord(
            sessionHash: draft.sessionHash, projectID: project.id, phoneNumber: number.e164, appID: appID,
            codeHash: draft.codeHash, nonce: draft.nonce, createdAt: now, expiresAt: now + codeLifetime,
            isTest: number.isTest, clientHash: draft.clientHash, purpose: purpose)
        try store.purgePhoneRecords(before: now - PhoneSignIn.retentionAfterExpiry)
        if !number.isTest {
            let body = channel == .sms ? compose(code) + "\n\n@" + project.smsOriginDomain + " #" + code
                : codeBody(code, channel: channel, language: language ?? project.defaultLocale)
            record.messageID = try enqueueCode(body, code: code, to: number, channel: channel, language: language,
                                               sessionInfo: sessionInfo, sessionHash: draft.sessionHash, at: now)
            record.channel = channel.outbox
        }
        try store.insertPhoneVerification(record)
        var sent = result(record, sessionInfo: sessionInfo, queued: !number.isTest)
        sent.channel = number.isTest ? nil : channel
        return sent
    }

    /// The body of a code's message by WhatsApp (the code alone: the template says the rest) or
    /// voice (the words to say, from `messages`, or the digits alone when there is none), or an
    /// SMS sent without a request (the automatic fallback).
    func codeBody(_ code: String, channel: PhoneChannel, language: String) -> String {
        switch channel {
        case .whatsapp: return code
        case .voice: return messages?.words(code: code, channel: .voice, language: language, project: project) ?? PhoneChannel.spokenDigits(code)
        case .sms:
            let words = messages?.words(code: code, channel: .sms, language: language, project: project) ?? code
            return words + "\n\n@" + project.smsOriginDomain + " #" + code
        }
    }

    /// Admits the message through the pumping guard (weighed by the channel) and queues it; the
    /// message knows its session and, when another channel follows and the project has an
    /// automatic fallback, when that channel takes over. Returns its id.
    func enqueueCode(_ body: String, code: String, to number: ParsedNumber, channel: PhoneChannel, language: String?, sessionInfo: String,
                     sessionHash: [UInt8], at now: Millis) throws -> Int64 {
        try SMSPumpingGuard(store: store, clock: clock, project: project, telemetry: tokens.telemetry, log: tokens.log)
            .admit(number, weight: channel.weight)
        let metadata: JSON = project.devMode
            ? .obj(("sessionInfo", sessionInfo), ("code", code), ("phoneNumber", number.e164), ("channel", channel.rawValue))
            : .object([])
        let fallbackAt: Millis? = policy.fallbackAfterSeconds > 0 && policy.channel(after: channel) != nil
            ? now + policy.fallbackAfterSeconds * 1000 : nil
        return try store.enqueue(OutboxMessage(projectID: project.id, channel: channel.outbox, recipient: number.e164, body: body,
                                               metadata: metadata.serialized(), nextAttemptAt: now, createdAt: now,
                                               region: number.region.uppercased(), language: language ?? project.defaultLocale,
                                               fallbackAt: fallbackAt, sessionHash: sessionHash))
    }

    func result(_ r: PhoneVerificationRecord, keys: PhoneKeys, queued: Bool) -> SendResult {
        result(r, sessionInfo: keys.sessionInfo(nonce: r.nonce), queued: queued)
    }

    func result(_ r: PhoneVerificationRecord, sessionInfo: String, queued: Bool) -> SendResult {
        SendResult(sessionInfo: sessionInfo, phoneNumber: r.phoneNumber, smsQueued: queued, isTest: r.isTest, expiresAt: r.expiresAt,
                   resendAvailableAt: r.createdAt + policy.resendAfterSeconds * 1000, channel: r.channel.flatMap(PhoneChannel.init))
    }
}
