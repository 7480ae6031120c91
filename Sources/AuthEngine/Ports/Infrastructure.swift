/// Durable counters behind every limit an attacker can drive (fixed windows, in the store so
/// they survive restarts and are shared by every instance).
public protocol LimitStore: Transactional {
    /// Adds `amount` to the counter of `bucket` for the window starting at `windowStart`
    /// (kept until `expiresAt`) and returns the new total.
    func incrementCounter(bucket: String, windowStart: Millis, amount: Int, expiresAt: Millis) throws -> Int
    /// The current total without changing it.
    func counter(bucket: String, windowStart: Millis) throws -> Int
    /// `incrementCounter` for each, the new totals in the same order: a client's two tiers are
    /// counted together, in one statement where each statement is a round trip.
    func incrementCounters(_ increments: [CounterIncrement]) throws -> [Int]
    /// `counter` for each, in the same order.
    func counters(_ keys: [CounterKey]) throws -> [Int]
    /// Deletes counters whose windows have passed.
    func purgeCounters(before: Millis) throws
}

/// One counter: a bucket's window.
public struct CounterKey: Hashable, Sendable {
    public let bucket: String
    public let windowStart: Millis
    public init(bucket: String, windowStart: Millis) { self.bucket = bucket; self.windowStart = windowStart }
}

/// `amount` more on a counter, kept until `expiresAt`.
public struct CounterIncrement: Sendable {
    public let key: CounterKey
    public let amount: Int
    public let expiresAt: Millis
    public init(_ key: CounterKey, amount: Int, expiresAt: Millis) { self.key = key; self.amount = amount; self.expiresAt = expiresAt }
}

/// A message waiting for, or done with, delivery.
public struct OutboxMessage: Sendable, Equatable {
    /// `push`: a silent APNs push (recipient: the device token; body: the payload JSON).
    /// `whatsapp` and `voice` carry phone codes like `sms` (recipient: E.164): a WhatsApp row's
    /// body is the code alone (the provider's approved template says the rest); a voice row's is
    /// the words to say, the digits spaced out, as XML text (escaped when composed).
    public enum Channel: String, Sendable, CaseIterable { case sms, email, push, whatsapp, voice }
    public enum Status: String, Sendable { case pending, sending, sent, dead }

    public var id: Int64
    public var projectID: String
    public var channel: Channel
    /// E.164 number or email address.
    public var recipient: String
    public var subject: String?
    /// SMS text, or the plain-text part of an email.
    public var body: String
    public var htmlBody: String?
    /// Extra JSON text for transports and dev listings (e.g. sessionInfo, oobLink in dev mode).
    public var metadata: String
    public var status: Status
    public var attempts: Int
    public var nextAttemptAt: Millis
    public var lastError: String?
    public var createdAt: Millis
    public var sentAt: Millis?
    /// The configured provider that accepted the message, or that a send may have reached
    /// without an answer (then the message is retried there only: no two providers send it).
    public var provider: String?
    /// The provider's id of the message (Twilio's SID), which its receipts name.
    public var providerMessageID: String?
    /// What the provider reported: nil while not yet accepted, `.sent` once accepted.
    public var delivery: DeliveryState?
    /// The provider's error code from its last receipt.
    public var deliveryError: String?
    /// When the last receipt arrived.
    public var deliveryAt: Millis?
    /// The destination's region (ISO 3166), for delivery ratios by country.
    public var region: String?
    /// The person's language (voice and WhatsApp templates).
    public var language: String?
    /// For a phone code with a next channel: when, without a delivered receipt, a new code goes
    /// by that channel (brought forward by an undelivered or failed receipt, or the message dying).
    public var fallbackAt: Millis?
    /// For a phone code: the hash of the sessionInfo it is the code of.
    public var sessionHash: [UInt8]?

    public init(id: Int64 = 0, projectID: String, channel: Channel, recipient: String, subject: String? = nil, body: String,
                htmlBody: String? = nil, metadata: String = "{}", status: Status = .pending, attempts: Int = 0,
                nextAttemptAt: Millis, lastError: String? = nil, createdAt: Millis, sentAt: Millis? = nil,
                region: String? = nil, language: String? = nil, fallbackAt: Millis? = nil, sessionHash: [UInt8]? = nil) {
        self.id = id; self.projectID = projectID; self.channel = channel; self.recipient = recipient; self.subject = subject
        self.body = body; self.htmlBody = htmlBody; self.metadata = metadata; self.status = status; self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt; self.lastError = lastError; self.createdAt = createdAt; self.sentAt = sentAt
        self.region = region; self.language = language; self.fallbackAt = fallbackAt; self.sessionHash = sessionHash
    }

    /// The channels that carry phone codes.
    public var isPhone: Bool { channel == .sms || channel == .whatsapp || channel == .voice }
}

/// What became of a message, as its provider reports it: `queued` until a provider accepts it,
/// then `sent`, then one of the three ends. States only move forward.
public enum DeliveryState: String, Sendable, CaseIterable {
    case queued, sent, delivered, undelivered, failed

    /// queued 0 < sent 1 < the three ends 2: a receipt is applied only when it moves forward.
    public var rank: Int {
        switch self {
        case .queued: 0
        case .sent: 1
        case .delivered, .undelivered, .failed: 2
        }
    }
}

/// A provider's acceptance of a message: its configured name and its id of the message.
public struct ProviderAcceptance: Sendable, Equatable {
    public var provider: String
    public var messageID: String?
    public init(provider: String, messageID: String?) { self.provider = provider; self.messageID = messageID }
}

/// A message leased by one delivery worker. `token` fences the lease: each lease of a message
/// takes the next number, so a worker whose lease was taken over cannot record its outcome.
public struct OutboxLease: Sendable, Equatable {
    public var message: OutboxMessage
    public var token: Int64
    public var until: Millis
    public init(message: OutboxMessage, token: Int64, until: Millis) {
        self.message = message; self.token = token; self.until = until
    }
}

/// What `OutboxStore.lease` did with a due message.
public enum OutboxLeasing: Sendable, Equatable {
    /// This worker holds the message until the lease's `until`.
    case leased(OutboxLease)
    /// Its attempts were used up: it is dead now (body scrubbed), not leased.
    case exhausted(OutboxMessage)
    /// Not due (sent, dead, not yet due) or leased by another worker.
    case unavailable

    /// The `lastError` of a message made dead because its last attempt's lease expired.
    public static let lostAttemptError = "the last attempt recorded no outcome before its lease expired (its process stopped)"
}

/// The durable outbox: a flow commits a message in its own transaction; the delivery worker
/// leases one message at a time just before sending it, sends it and records the outcome under
/// that lease. A lease that outlives a crash expires and the message is sent again, that lost
/// attempt counted, so a message whose send ends the process is not sent forever.
public protocol OutboxStore: Transactional {
    /// Stores a pending message; returns its id.
    func enqueue(_ message: OutboxMessage) throws -> Int64
    /// Ids of the messages of `channels` due at `now` (pending and due, or sending with an
    /// expired lease), the longest waiting first. A read: other workers may lease them first.
    func dueMessageIDs(now: Millis, limit: Int, channels: [OutboxMessage.Channel]) throws -> [Int64]
    /// Leases message `id` until `until` if it is still due at `now` (pending and due, or
    /// sending under an expired lease). Taking over an expired lease counts the attempt it was
    /// (its process stopped before recording an outcome) in `attempts`; a message whose
    /// attempts, so counted, have reached `maxAttempts` is made dead instead (`exhausted`).
    func lease(id: Int64, now: Millis, until: Millis, maxAttempts: Int) throws -> OutboxLeasing
    /// Marks sent and scrubs the body (codes and links must not linger at rest), unless
    /// `keepBody`; records the provider that `accepted` it (its delivery state becomes `sent`).
    /// False (nothing written) when the lease is no longer this one.
    func markSent(_ lease: OutboxLease, at: Millis, keepBody: Bool, accepted: ProviderAcceptance?) throws -> Bool
    /// Records a failed attempt (`attempts` + 1); `nextAttemptAt` nil means dead (no more
    /// retries; a planned fallback is brought forward to `at`). `pinnedTo`: the provider the
    /// attempt may have reached without an answer, the only one to send it from now on.
    /// False (nothing written) when the lease is no longer this one.
    func markFailed(_ lease: OutboxLease, error: String, nextAttemptAt: Millis?, at: Millis, pinnedTo: String?) throws -> Bool
    /// Messages of a project and channel, newest last (dev listings, tests).
    func messages(project: String, channel: OutboxMessage.Channel, limit: Int) throws -> [OutboxMessage]
    /// Per channel with any: messages not yet sent nor dead, and when the oldest was enqueued (metrics).
    func outboxBacklog() throws -> [OutboxBacklog]
}

extension OutboxStore {
    public func markSent(_ lease: OutboxLease, at: Millis, keepBody: Bool) throws -> Bool {
        try markSent(lease, at: at, keepBody: keepBody, accepted: nil)
    }
    public func markFailed(_ lease: OutboxLease, error: String, nextAttemptAt: Millis?, at: Millis) throws -> Bool {
        try markFailed(lease, error: error, nextAttemptAt: nextAttemptAt, at: at, pinnedTo: nil)
    }
}

/// The undelivered messages of one channel (pending or being sent).
public struct OutboxBacklog: Sendable, Equatable {
    public var channel: OutboxMessage.Channel
    public var count: Int
    public var oldestCreatedAt: Millis
    public init(channel: OutboxMessage.Channel, count: Int, oldestCreatedAt: Millis) {
        self.channel = channel; self.count = count; self.oldestCreatedAt = oldestCreatedAt
    }
}

/// An audit event (sign-in, sign-out, factor change, revocation, admin change, key rotation):
/// what happened (`event`), to whom (`localID`), by whom (`actor`: nil for the user themself,
/// `admin` over the Admin API, `cli` for the operator's commands), from where, and how it ended
/// (`outcome`: `ok`, or `refused` for a refusal worth keeping). Never a code, token or secret.
public struct AuditEvent: Sendable, Equatable {
    public var projectID: String
    public var event: AuditEventName
    public var localID: String?
    public var remoteAddress: String?
    public var detail: String?
    public var actor: String?
    public var outcome: String
    public init(projectID: String, event: AuditEventName, localID: String? = nil, remoteAddress: String? = nil, detail: String? = nil,
                actor: String? = nil, outcome: String = "ok") {
        self.projectID = projectID; self.event = event; self.localID = localID; self.remoteAddress = remoteAddress; self.detail = detail
        self.actor = actor; self.outcome = outcome
    }
}

/// Every audit event, one naming style: `<subject>.<action>`, lower case with underscores
/// (docs/operations.md lists them). The raw value is what the store keeps.
public enum AuditEventName: String, CaseIterable, Sendable {
    // Sign-ins and sign-ups
    case phoneSignUp = "phone.sign_up"
    case phoneSignIn = "phone.sign_in"
    case phoneLink = "phone.link"
    case phoneReauth = "phone.reauth"
    case emailLinkSignUp = "email_link.sign_up"
    case emailLinkSignIn = "email_link.sign_in"
    case emailLinkFirstFactor = "email_link.first_factor"
    case mfaSignIn = "mfa.sign_in"
    case customTokenSignUp = "custom_token.sign_up"
    case customTokenSignIn = "custom_token.sign_in"
    case anonymousSignUp = "anonymous.sign_up"
    case passkeySignIn = "passkey.sign_in"
    // Email links and verification
    case emailLinkSent = "email_link.sent"
    case emailLinkGenerated = "email_link.generated"
    case emailVerified = "email.verified"
    // Second factors
    case mfaEnrol = "mfa.enrol"
    case mfaWithdraw = "mfa.withdraw"
    // Passkeys
    case passkeyEnrol = "passkey.enrol"
    case passkeyRename = "passkey.rename"
    case passkeyRemove = "passkey.remove"
    case passkeyCounterRegression = "passkey.counter_regression"
    // Sessions and tokens
    case signOut = "session.sign_out"
    case revoke = "tokens.revoke"
    case refreshTokenReuse = "refresh_token.reuse"
    case sessionRevoke = "session.revoke"
    case sessionRevokeOthers = "session.revoke_others"
    case signInNotice = "sign_in.notice"
    // The user's own changes
    case profileUpdate = "account.update"
    // The Admin API and the operator
    case adminCreate = "admin.create"
    case adminUpdate = "admin.update"
    case adminDelete = "admin.delete"
    case adminBatchDelete = "admin.batch_delete"
    case adminImport = "admin.import"
    case keyRotate = "key.rotate"
    case operatorAdd = "operator.add"
    case operatorRemove = "operator.remove"
    case outboxRetry = "outbox.retry"
    case outboxDiscard = "outbox.discard"
    case smsHoldRelease = "sms_hold.release"
}

/// A stored audit event.
public struct AuditRecord: Sendable, Equatable {
    public var id: Int64
    public var at: Millis
    public var event: AuditEvent
    public init(id: Int64, at: Millis, event: AuditEvent) { self.id = id; self.at = at; self.event = event }
}

/// Append-only audit log, read back by `gatehouse audit`.
public protocol AuditStore {
    func audit(_ event: AuditEvent, at: Millis) throws
    /// Newest first: of one project and user (each optional), at or after `since`.
    func auditEvents(project: String?, localID: String?, since: Millis?, limit: Int) throws -> [AuditRecord]
}

/// Single-use app tokens minted by app verification (issue "App verification") and consumed by
/// `sendVerificationCode`. Stored only as a hash.
public struct AppTokenRecord: Sendable, Equatable {
    public var tokenHash: [UInt8]
    public var projectID: String
    /// The API key it was minted for ("" when minted by a hosted page without one).
    public var apiKey: String
    /// The app it was minted for (bundle id / package, or "web" for hosted pages).
    public var appID: String
    public var expiresAt: Millis
    public init(tokenHash: [UInt8], projectID: String, apiKey: String, appID: String, expiresAt: Millis) {
        self.tokenHash = tokenHash; self.projectID = projectID; self.apiKey = apiKey; self.appID = appID; self.expiresAt = expiresAt
    }
}

public protocol AppTokenStore: Transactional {
    func insertAppToken(_ token: AppTokenRecord, at: Millis) throws
    /// Deletes and returns the token if present and unexpired at `now` (single use, race-free).
    func consumeAppToken(hash: [UInt8], now: Millis) throws -> AppTokenRecord?
}
