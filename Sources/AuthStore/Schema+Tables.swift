import AuthEngine

// Every table of the store, declared once (see `Schema`): its columns (a case each, named as in
// SQL), what a record writes in each, and how a row is read back by naming its columns.
// Times are milliseconds since 1970; flags are 0/1 integers; hashes and keys are blobs.

enum AccountColumn: Int, RecordColumns {
    case project_id, local_id, email, email_verified, phone_number, display_name, photo_url, password_hash, disabled,
         email_link_signin, anonymous, custom_attributes, created_at, last_login_at, last_refresh_at, valid_since, providers, mfa
    var column: (ColumnSpec, (Account) -> any SQLBindable) {
        switch self {
        case .project_id: (.text, { $0.projectID })
        case .local_id: (.text, { $0.localID })
        case .email: (.optionalText, { $0.email })
        case .email_verified: (.integer(default: 0), { $0.emailVerified })
        case .phone_number: (.optionalText, { $0.phoneNumber })
        case .display_name: (.optionalText, { $0.displayName })
        case .photo_url: (.optionalText, { $0.photoURL })
        case .password_hash: (.optionalText, { $0.passwordHash })
        case .disabled: (.integer(default: 0), { $0.disabled })
        case .email_link_signin: (.integer(default: 0), { $0.emailLinkSignin })
        case .anonymous: (.integer(default: 0), { $0.anonymous })
        case .custom_attributes: (.optionalText, { $0.customAttributes })
        case .created_at: (.integer, { $0.createdAt })
        case .last_login_at: (.optionalInteger, { $0.lastLoginAt })
        case .last_refresh_at: (.optionalInteger, { $0.lastRefreshAt })
        case .valid_since: (.integer(default: 0), { $0.validSince })
        // JSON arrays: the providers' profiles, the second factors (`AccountJSON`).
        case .providers: (.text(default: "[]"), { AccountJSON.encodeProviders($0.providers) })
        case .mfa: (.text(default: "[]"), { AccountJSON.encodeMFA($0.mfaEnrollments) })
        }
    }
    static let table = Table("accounts", Self.self, primaryKey: [.project_id, .local_id], indexes: [
        IndexSpec(name: "accounts_email", columns: ["project_id", "email"], unique: true, condition: "email IS NOT NULL"),
        IndexSpec(name: "accounts_phone", columns: ["project_id", "phone_number"], unique: true, condition: "phone_number IS NOT NULL"),
        // The console's two orders, pages of 50 from a (time, uid) cursor. The second moves with
        // every sign-in (one index entry rewritten); accounts that never signed in are not in it.
        IndexSpec(name: "accounts_created", columns: ["project_id", "created_at", "local_id"]),
        IndexSpec(name: "accounts_last_sign_in", columns: ["project_id", "last_login_at", "local_id"], condition: "last_login_at IS NOT NULL"),
    ])

    static func read(_ row: SQLRow) throws -> Account {
        let r = Reading(row, AccountColumn.self)
        var a = Account(projectID: r.text(.project_id), localID: r.text(.local_id), createdAt: r.int(.created_at))
        a.email = r.textOrNil(.email)
        a.emailVerified = r.bool(.email_verified)
        a.phoneNumber = r.textOrNil(.phone_number)
        a.displayName = r.textOrNil(.display_name)
        a.photoURL = r.textOrNil(.photo_url)
        a.passwordHash = r.textOrNil(.password_hash)
        a.disabled = r.bool(.disabled)
        a.emailLinkSignin = r.bool(.email_link_signin)
        a.anonymous = r.bool(.anonymous)
        a.customAttributes = r.textOrNil(.custom_attributes)
        a.lastLoginAt = r.intOrNil(.last_login_at)
        a.lastRefreshAt = r.intOrNil(.last_refresh_at)
        a.validSince = r.int(.valid_since)
        a.providers = try AccountJSON.decodeProviders(r.text(.providers)) ?? { throw r.unreadable(.providers, "a list this build cannot read") }()
        a.mfaEnrollments = try AccountJSON.decodeMFA(r.text(.mfa)) ?? { throw r.unreadable(.mfa, "a list this build cannot read") }()
        return a
    }
}

enum PhoneVerificationColumn: Int, RecordColumns {
    case session_hash, project_id, phone_number, app_id, code_hash, created_at, expires_at, attempts, consumed_at, is_test,
         nonce, superseded_at, client_hash, purpose, message_id, channel
    var column: (ColumnSpec, (PhoneVerificationRecord) -> any SQLBindable) {
        switch self {
        case .session_hash: (.blob, { $0.sessionHash })
        case .project_id: (.text, { $0.projectID })
        case .phone_number: (.text, { $0.phoneNumber })
        case .app_id: (.text(default: ""), { $0.appID })
        case .code_hash: (.blob, { $0.codeHash })
        case .created_at: (.integer, { $0.createdAt })
        case .expires_at: (.integer, { $0.expiresAt })
        case .attempts: (.integer(default: 0), { $0.attempts })
        case .consumed_at: (.optionalInteger, { $0.consumedAt })
        case .is_test: (.integer(default: 0), { $0.isTest })
        case .nonce: (.blobDefaultEmpty, { $0.nonce })
        case .superseded_at: (.optionalInteger, { $0.supersededAt })
        case .client_hash: (.blobDefaultEmpty, { $0.clientHash })
        case .purpose: (.text(default: ""), { $0.purpose.stored })
        case .message_id: (.optionalInteger, { $0.messageID })
        case .channel: (.optionalText, { $0.channel?.rawValue })
        }
    }
    static let table = Table("phone_verifications", Self.self, primaryKey: [.session_hash], indexes: [
        IndexSpec(name: "phone_verifications_expiry", columns: ["expires_at"]),
        // The send's look-up of a code still open for this number and client.
        IndexSpec(name: "phone_verifications_open", columns: ["project_id", "phone_number", "app_id", "created_at"],
                  condition: "consumed_at IS NULL AND superseded_at IS NULL"),
    ])

    static func read(_ row: SQLRow) throws -> PhoneVerificationRecord {
        let r = Reading(row, PhoneVerificationColumn.self)
        return PhoneVerificationRecord(sessionHash: r.blob(.session_hash), projectID: r.text(.project_id), phoneNumber: r.text(.phone_number),
                                       appID: r.text(.app_id), codeHash: r.blob(.code_hash), nonce: r.blob(.nonce),
                                       createdAt: r.int(.created_at), expiresAt: r.int(.expires_at), attempts: r.count(.attempts),
                                       consumedAt: r.intOrNil(.consumed_at), supersededAt: r.intOrNil(.superseded_at),
                                       isTest: r.bool(.is_test), clientHash: r.blob(.client_hash),
                                       purpose: try PhoneCodePurpose(stored: r.text(.purpose)) ?? { throw r.unreadable(.purpose, "\"\(r.text(.purpose).prefix(40))\"") }(),
                                       messageID: r.intOrNil(.message_id),
                                       channel: try r.textOrNil(.channel).map { _ in try r.value(.channel, as: OutboxMessage.Channel.self) })
    }
}

enum PhoneProofColumn: Int, RecordColumns {
    case proof_hash, project_id, phone_number, created_at, expires_at
    var column: (ColumnSpec, (PhoneProofRecord) -> any SQLBindable) {
        switch self {
        case .proof_hash: (.blob, { $0.proofHash })
        case .project_id: (.text, { $0.projectID })
        case .phone_number: (.text, { $0.phoneNumber })
        case .created_at: (.integer, { $0.createdAt })
        case .expires_at: (.integer, { $0.expiresAt })
        }
    }
    static let table = Table("phone_proofs", Self.self, primaryKey: [.proof_hash], indexes: [
        IndexSpec(name: "phone_proofs_expiry", columns: ["expires_at"]),
    ])

    static func read(_ row: SQLRow) throws -> PhoneProofRecord {
        let r = Reading(row, PhoneProofColumn.self)
        return PhoneProofRecord(proofHash: r.blob(.proof_hash), projectID: r.text(.project_id), phoneNumber: r.text(.phone_number),
                                createdAt: r.int(.created_at), expiresAt: r.int(.expires_at))
    }
}

enum EmailLinkColumn: Int, RecordColumns {
    case code_hash, project_id, request_type, email, local_id, continue_url, can_handle_in_app, ios_bundle_id, android_package,
         lang, browser_binding, created_at, expires_at, consumed_at,
         short_code_hash, short_code_binding, short_code_expires_at, short_code_attempts
    var column: (ColumnSpec, (EmailLinkRecord) -> any SQLBindable) {
        switch self {
        case .code_hash: (.blob, { $0.codeHash })
        case .project_id: (.text, { $0.projectID })
        case .request_type: (.text, { $0.requestType.rawValue })
        case .email: (.text, { $0.email })
        case .local_id: (.optionalText, { $0.localID })
        case .continue_url: (.optionalText, { $0.continueURL })
        case .can_handle_in_app: (.integer(default: 0), { $0.canHandleCodeInApp })
        case .ios_bundle_id: (.optionalText, { $0.iosBundleID })
        case .android_package: (.optionalText, { $0.androidPackage })
        case .lang: (.text(default: "en"), { $0.lang })
        case .browser_binding: (.optionalBlob, { $0.browserBinding })
        case .created_at: (.integer, { $0.createdAt })
        case .expires_at: (.integer, { $0.expiresAt })
        case .consumed_at: (.optionalInteger, { $0.consumedAt })
        case .short_code_hash: (.optionalBlob, { $0.shortCode?.hash })
        case .short_code_binding: (.optionalBlob, { $0.shortCode?.binding })
        case .short_code_expires_at: (.optionalInteger, { $0.shortCode?.expiresAt })
        case .short_code_attempts: (.integer(default: 0), { $0.shortCode?.attempts ?? 0 })
        }
    }
    static let table = Table("email_links", Self.self, primaryKey: [.code_hash], indexes: [
        IndexSpec(name: "email_links_email", columns: ["project_id", "email", "created_at"]),
        IndexSpec(name: "email_links_expiry", columns: ["expires_at"]),
    ])

    static func read(_ row: SQLRow) throws -> EmailLinkRecord {
        let r = Reading(row, EmailLinkColumn.self)
        return EmailLinkRecord(codeHash: r.blob(.code_hash), projectID: r.text(.project_id), requestType: try r.value(.request_type),
                               email: r.text(.email), localID: r.textOrNil(.local_id), continueURL: r.textOrNil(.continue_url),
                               canHandleCodeInApp: r.bool(.can_handle_in_app), iosBundleID: r.textOrNil(.ios_bundle_id),
                               androidPackage: r.textOrNil(.android_package), lang: r.text(.lang),
                               browserBinding: r.blobOrNil(.browser_binding).flatMap { $0.isEmpty ? nil : $0 },
                               createdAt: r.int(.created_at), expiresAt: r.int(.expires_at), consumedAt: r.intOrNil(.consumed_at),
                               shortCode: shortCode(r))
    }

    /// A link's short code: all of hash, binding and expiry, or none.
    static func shortCode(_ r: Reading<EmailLinkColumn>) -> EmailShortCode? {
        guard let hash = r.blobOrNil(.short_code_hash), !hash.isEmpty, let binding = r.blobOrNil(.short_code_binding), !binding.isEmpty,
              let expiresAt = r.intOrNil(.short_code_expires_at) else { return nil }
        return EmailShortCode(hash: hash, binding: binding, expiresAt: expiresAt, attempts: Int(r.int(.short_code_attempts)))
    }
}

enum RefreshTokenColumn: Int, RecordColumns {
    case token_hash, family_id, project_id, local_id, provider, auth_time, created_at, rotated_at, revoked_at, second_factor,
         developer_claims, user_agent, network
    var column: (ColumnSpec, (RefreshTokenRecord) -> any SQLBindable) {
        switch self {
        case .token_hash: (.blob, { $0.tokenHash })
        case .family_id: (.text, { $0.familyID })
        case .project_id: (.text, { $0.projectID })
        case .local_id: (.text, { $0.localID })
        case .provider: (.text, { $0.provider })
        case .auth_time: (.integer, { $0.authTime })
        case .created_at: (.integer, { $0.createdAt })
        case .rotated_at: (.optionalInteger, { $0.rotatedAt })
        case .revoked_at: (.optionalInteger, { $0.revokedAt })
        case .second_factor: (.optionalText, { $0.secondFactor })
        case .developer_claims: (.optionalText, { $0.developerClaims })
        case .user_agent: (.optionalText, { $0.userAgent })
        case .network: (.optionalText, { $0.network })
        }
    }
    static let table = Table("refresh_tokens", Self.self, primaryKey: [.token_hash], indexes: [
        IndexSpec(name: "refresh_tokens_revoked", columns: ["revoked_at"], condition: "revoked_at IS NOT NULL"),
        IndexSpec(name: "refresh_tokens_rotated", columns: ["rotated_at"], condition: "rotated_at IS NOT NULL"),
        // A family belongs to one user: its revocation and the per-user revocations use this index.
        IndexSpec(name: "refresh_tokens_user", columns: ["project_id", "local_id", "family_id"]),
    ])

    static func read(_ row: SQLRow) throws -> RefreshTokenRecord {
        let r = Reading(row, RefreshTokenColumn.self)
        return RefreshTokenRecord(tokenHash: r.blob(.token_hash), familyID: r.text(.family_id), projectID: r.text(.project_id),
                                  localID: r.text(.local_id), provider: r.text(.provider), authTime: r.int(.auth_time),
                                  createdAt: r.int(.created_at), rotatedAt: r.intOrNil(.rotated_at), revokedAt: r.intOrNil(.revoked_at),
                                  secondFactor: r.textOrNil(.second_factor), developerClaims: r.textOrNil(.developer_claims),
                                  userAgent: r.textOrNil(.user_agent), network: r.textOrNil(.network))
    }
}

enum SessionColumn: Int, RecordColumns {
    case sid_hash, project_id, local_id, provider, created_at, last_seen_at, expires_at, idle_timeout_seconds, revoked_at,
         second_factor, user_agent, network
    var column: (ColumnSpec, (SessionRecord) -> any SQLBindable) {
        switch self {
        case .sid_hash: (.blob, { $0.sidHash })
        case .project_id: (.text, { $0.projectID })
        case .local_id: (.text, { $0.localID })
        case .provider: (.text, { $0.provider })
        case .created_at: (.integer, { $0.createdAt })
        case .last_seen_at: (.integer, { $0.lastSeenAt })
        case .expires_at: (.integer, { $0.expiresAt })
        case .idle_timeout_seconds: (.integer(default: 0), { $0.idleTimeoutSeconds })
        case .revoked_at: (.optionalInteger, { $0.revokedAt })
        case .second_factor: (.optionalText, { $0.secondFactor })
        case .user_agent: (.optionalText, { $0.userAgent })
        case .network: (.optionalText, { $0.network })
        }
    }
    static let table = Table("sessions", Self.self, primaryKey: [.sid_hash], indexes: [
        IndexSpec(name: "sessions_user", columns: ["project_id", "local_id", "created_at"]),
        IndexSpec(name: "sessions_expiry", columns: ["expires_at"]),
    ])

    static func read(_ row: SQLRow) throws -> SessionRecord {
        let r = Reading(row, SessionColumn.self)
        return SessionRecord(sidHash: r.blob(.sid_hash), projectID: r.text(.project_id), localID: r.text(.local_id), provider: r.text(.provider),
                             createdAt: r.int(.created_at), lastSeenAt: r.int(.last_seen_at), expiresAt: r.int(.expires_at),
                             idleTimeoutSeconds: r.int(.idle_timeout_seconds), revokedAt: r.intOrNil(.revoked_at),
                             secondFactor: r.textOrNil(.second_factor), userAgent: r.textOrNil(.user_agent), network: r.textOrNil(.network))
    }
}

enum SigningKeyColumn: Int, RecordColumns {
    case kid, algorithm, private_pem, public_pem, certificate_pem, created_at, retired_at, expires_at
    var column: (ColumnSpec, (SigningKeyRecord) -> any SQLBindable) {
        switch self {
        case .kid: (.text, { $0.kid })
        case .algorithm: (.text, { $0.algorithm })
        case .private_pem: (.text, { $0.privatePEM })
        case .public_pem: (.text, { $0.publicPEM })
        case .certificate_pem: (.text, { $0.certificatePEM })
        case .created_at: (.integer, { $0.createdAt })
        case .retired_at: (.optionalInteger, { $0.retiredAt })
        case .expires_at: (.optionalInteger, { $0.expiresAt })
        }
    }
    static let table = Table("signing_keys", Self.self, primaryKey: [.kid], indexes: [
        IndexSpec(name: "signing_keys_expiry", columns: ["expires_at"], condition: "expires_at IS NOT NULL"),
    ])

    static func read(_ row: SQLRow) throws -> SigningKeyRecord {
        let r = Reading(row, SigningKeyColumn.self)
        return SigningKeyRecord(kid: r.text(.kid), algorithm: r.text(.algorithm), privatePEM: r.text(.private_pem), publicPEM: r.text(.public_pem),
                                certificatePEM: r.text(.certificate_pem), createdAt: r.int(.created_at), retiredAt: r.intOrNil(.retired_at),
                                expiresAt: r.intOrNil(.expires_at))
    }
}

enum SecretColumn: Int, Columns {
    case name, value, created_at
    var spec: ColumnSpec {
        switch self {
        case .name: .text
        case .value: .blob
        case .created_at: .integer
        }
    }
    static let table = Table("secrets", Self.self, primaryKey: [.name])
}

enum LimitCounterColumn: Int, Columns {
    case bucket, window_start, count, expires_at
    var spec: ColumnSpec { self == .bucket ? .text : .integer }
    // No expiry index on purpose: counters are small rows, and an index would add a page to every
    // window written (housekeeping scans them).
    static let table = Table("limit_counters", Self.self, primaryKey: [.bucket, .window_start])
}

enum OutboxColumn: Int, Columns {
    case id, project_id, channel, recipient, subject, body, html_body, metadata, status, attempts, next_attempt_at, lease_until,
         last_error, created_at, sent_at, lease_token, provider, provider_message_id, delivery, delivery_error, delivery_at, region,
         language, fallback_at, session_hash
    var spec: ColumnSpec {
        switch self {
        case .id: .identity
        case .project_id, .channel, .recipient, .body: .text
        case .subject, .html_body, .last_error: .optionalText
        case .metadata: .text(default: "{}")
        case .status: .text(default: "pending")
        case .attempts, .lease_token: .integer(default: 0)
        case .next_attempt_at, .created_at: .integer
        case .lease_until, .sent_at, .delivery_at, .fallback_at: .optionalInteger
        case .provider, .provider_message_id, .delivery, .delivery_error, .region, .language: .optionalText
        case .session_hash: .optionalBlob
        }
    }
    // Ids are never reused: a delivery's outcome names its message by id.
    static let table = Table("outbox", Self.self, primaryKey: [.id], indexes: [
        IndexSpec(name: "outbox_due", columns: ["status", "next_attempt_at"]),
        // The automatic fallback's look-up of codes due for the next channel: only the messages
        // of projects with a fallback have an entry.
        IndexSpec(name: "outbox_fallback", columns: ["fallback_at"], condition: "fallback_at IS NOT NULL"),
        // Delivery ratios (metrics, the console) over the last day of a project's messages.
        IndexSpec(name: "outbox_project_created", columns: ["project_id", "created_at"]),
    ], neverReuseIDs: true)

    static func read(_ row: SQLRow) throws -> OutboxMessage {
        let r = Reading(row, OutboxColumn.self)
        var m = OutboxMessage(id: r.int(.id), projectID: r.text(.project_id), channel: try r.value(.channel), recipient: r.text(.recipient),
                             subject: r.textOrNil(.subject), body: r.text(.body), htmlBody: r.textOrNil(.html_body), metadata: r.text(.metadata),
                             status: try r.value(.status), attempts: r.count(.attempts), nextAttemptAt: r.int(.next_attempt_at),
                             lastError: r.textOrNil(.last_error), createdAt: r.int(.created_at), sentAt: r.intOrNil(.sent_at))
        m.provider = r.textOrNil(.provider)
        m.providerMessageID = r.textOrNil(.provider_message_id)
        m.delivery = try r.textOrNil(.delivery).map { _ in try r.value(.delivery, as: DeliveryState.self) }
        m.deliveryError = r.textOrNil(.delivery_error)
        m.deliveryAt = r.intOrNil(.delivery_at)
        m.region = r.textOrNil(.region)
        m.language = r.textOrNil(.language)
        m.fallbackAt = r.intOrNil(.fallback_at)
        m.sessionHash = r.blobOrNil(.session_hash)
        return m
    }

    static func lease(_ row: SQLRow, until: Millis) throws -> OutboxLease {
        OutboxLease(message: try read(row), token: Reading(row, OutboxColumn.self).int(.lease_token), until: until)
    }
}

enum AppTokenColumn: Int, Columns {
    case token_hash, project_id, api_key, app_id, created_at, expires_at
    var spec: ColumnSpec {
        switch self {
        case .token_hash: .blob
        case .project_id, .api_key, .app_id: .text
        case .created_at, .expires_at: .integer
        }
    }
    // No expiry index: tokens live minutes and are deleted as they are used.
    static let table = Table("app_tokens", Self.self, primaryKey: [.token_hash])

    static func read(_ row: SQLRow) throws -> AppTokenRecord {
        let r = Reading(row, AppTokenColumn.self)
        return AppTokenRecord(tokenHash: r.blob(.token_hash), projectID: r.text(.project_id), apiKey: r.text(.api_key), appID: r.text(.app_id),
                              expiresAt: r.int(.expires_at))
    }
}

enum ChallengeReplayColumn: Int, Columns {
    case challenge_id, project_id, expires_at
    var spec: ColumnSpec {
        switch self {
        case .challenge_id: .blob
        case .project_id: .text
        case .expires_at: .integer
        }
    }
    static let table = Table("app_verification_replays", Self.self, primaryKey: [.challenge_id], indexes: [
        IndexSpec(name: "app_verification_replays_expiry", columns: ["expires_at"]),
    ])
}

enum AuditColumn: Int, Columns {
    case id, at, project_id, event, local_id, remote_address, detail, actor, outcome
    var spec: ColumnSpec {
        switch self {
        case .id: .identity
        case .at: .integer
        case .project_id, .event: .text
        case .local_id, .remote_address, .detail, .actor: .optionalText
        case .outcome: .text(default: "ok")
        }
    }
    // Append-only, in time order. One index, a user's trail (the console's user page and its
    // filter): one page per audited event more. Other filters scan back from a time's id.
    static let table = Table("audit_log", Self.self, primaryKey: [.id], indexes: [
        IndexSpec(name: "audit_log_user", columns: ["project_id", "local_id", "id"], condition: "local_id IS NOT NULL"),
    ])

    static func read(_ row: SQLRow) throws -> AuditRecord {
        let r = Reading(row, AuditColumn.self)
        return AuditRecord(id: r.int(.id), at: r.int(.at),
                           event: AuditEvent(projectID: r.text(.project_id), event: try r.value(.event), localID: r.textOrNil(.local_id),
                                             remoteAddress: r.textOrNil(.remote_address), detail: r.textOrNil(.detail),
                                             actor: r.textOrNil(.actor), outcome: r.text(.outcome)))
    }
}

enum SMSHoldColumn: Int, RecordColumns {
    case project_id, kind, key, held_at, expires_at, released_at, recent_count, baseline_count
    var column: (ColumnSpec, (SMSHold) -> any SQLBindable) {
        switch self {
        case .project_id: (.text, { $0.projectID })
        case .kind: (.text, { $0.kind.rawValue })
        case .key: (.text, { $0.key })
        case .held_at: (.integer, { $0.heldAt })
        case .expires_at: (.optionalInteger, { $0.expiresAt })
        case .released_at: (.optionalInteger, { $0.releasedAt })
        case .recent_count: (.integer, { $0.recentCount })
        case .baseline_count: (.integer, { $0.baselineCount })
        }
    }
    static let table = Table("sms_holds", Self.self, primaryKey: [.project_id, .kind, .key])

    static func read(_ row: SQLRow) throws -> SMSHold {
        let r = Reading(row, SMSHoldColumn.self)
        return SMSHold(projectID: r.text(.project_id), kind: try r.value(.kind), key: r.text(.key), heldAt: r.int(.held_at),
                       expiresAt: r.intOrNil(.expires_at), releasedAt: r.intOrNil(.released_at), recentCount: r.count(.recent_count),
                       baselineCount: r.count(.baseline_count))
    }
}

enum MFAPendingColumn: Int, RecordColumns {
    case credential_hash, project_id, local_id, first_factor, auth_time, created_at, expires_at, consumed_at
    var column: (ColumnSpec, (MFAPendingRecord) -> any SQLBindable) {
        switch self {
        case .credential_hash: (.blob, { $0.credentialHash })
        case .project_id: (.text, { $0.projectID })
        case .local_id: (.text, { $0.localID })
        case .first_factor: (.text, { $0.firstFactor })
        case .auth_time: (.integer, { $0.authTime })
        case .created_at: (.integer, { $0.createdAt })
        case .expires_at: (.integer, { $0.expiresAt })
        case .consumed_at: (.optionalInteger, { $0.consumedAt })
        }
    }
    static let table = Table("mfa_pending", Self.self, primaryKey: [.credential_hash], indexes: [
        IndexSpec(name: "mfa_pending_expiry", columns: ["expires_at"]),
    ])

    static func read(_ row: SQLRow) throws -> MFAPendingRecord {
        let r = Reading(row, MFAPendingColumn.self)
        return MFAPendingRecord(credentialHash: r.blob(.credential_hash), projectID: r.text(.project_id), localID: r.text(.local_id),
                                firstFactor: r.text(.first_factor), authTime: r.int(.auth_time), createdAt: r.int(.created_at),
                                expiresAt: r.int(.expires_at), consumedAt: r.intOrNil(.consumed_at))
    }
}

enum IOSReceiptColumn: Int, RecordColumns {
    case receipt_hash, project_id, bundle_id, device_token_hash, sandbox, secret_hash, created_at, expires_at, uses
    var column: (ColumnSpec, (IOSReceiptRecord) -> any SQLBindable) {
        switch self {
        case .receipt_hash: (.blob, { $0.receiptHash })
        case .project_id: (.text, { $0.projectID })
        case .bundle_id: (.text, { $0.bundleID })
        case .device_token_hash: (.blob, { $0.deviceTokenHash })
        case .sandbox: (.integer, { $0.sandbox })
        case .secret_hash: (.blob, { $0.secretHash })
        case .created_at: (.integer, { $0.createdAt })
        case .expires_at: (.integer, { $0.expiresAt })
        case .uses: (.integer(default: 0), { $0.uses })
        }
    }
    static let table = Table("ios_receipts", Self.self, primaryKey: [.receipt_hash], indexes: [
        IndexSpec(name: "ios_receipts_expiry", columns: ["expires_at"]),
    ])

    static func read(_ row: SQLRow) throws -> IOSReceiptRecord {
        let r = Reading(row, IOSReceiptColumn.self)
        return IOSReceiptRecord(receiptHash: r.blob(.receipt_hash), projectID: r.text(.project_id), bundleID: r.text(.bundle_id),
                                deviceTokenHash: r.blob(.device_token_hash), sandbox: r.bool(.sandbox), secretHash: r.blob(.secret_hash),
                                createdAt: r.int(.created_at), expiresAt: r.int(.expires_at), uses: r.count(.uses))
    }
}

/// The migrator's own record: one row per schema version applied.
enum SchemaMigrationColumn: Int, Columns {
    case version, applied_at
    var spec: ColumnSpec { .integer }
    static let table = Table("schema_migrations", Self.self, primaryKey: [.version])
}

enum PasskeyColumn: Int, RecordColumns {
    case project_id, credential_id, local_id, public_key, algorithm, sign_count, name, aaguid, backup_eligible, backed_up, created_at,
         last_used_at
    var column: (ColumnSpec, (PasskeyRecord) -> any SQLBindable) {
        switch self {
        case .project_id: (.text, { $0.projectID })
        case .credential_id: (.text, { $0.credentialID })
        case .local_id: (.text, { $0.localID })
        case .public_key: (.blob, { $0.publicKey })
        case .algorithm: (.integer, { $0.algorithm })
        case .sign_count: (.integer(default: 0), { $0.signCount })
        case .name: (.optionalText, { $0.name })
        case .aaguid: (.blob, { $0.aaguid })
        case .backup_eligible: (.integer(default: 0), { $0.backupEligible })
        case .backed_up: (.integer(default: 0), { $0.backedUp })
        case .created_at: (.integer, { $0.createdAt })
        case .last_used_at: (.optionalInteger, { $0.lastUsedAt })
        }
    }
    // A credential id is unique within its project (the key); a user's are found by the index.
    static let table = Table("passkeys", Self.self, primaryKey: [.project_id, .credential_id], indexes: [
        IndexSpec(name: "passkeys_user", columns: ["project_id", "local_id"]),
    ])

    static func read(_ row: SQLRow) throws -> PasskeyRecord {
        let r = Reading(row, PasskeyColumn.self)
        return PasskeyRecord(projectID: r.text(.project_id), credentialID: r.text(.credential_id), localID: r.text(.local_id),
                             publicKey: r.blob(.public_key), algorithm: r.int(.algorithm), signCount: r.int(.sign_count),
                             name: r.textOrNil(.name), aaguid: r.blob(.aaguid), backupEligible: r.bool(.backup_eligible),
                             backedUp: r.bool(.backed_up), createdAt: r.int(.created_at), lastUsedAt: r.intOrNil(.last_used_at))
    }
}

enum PasskeyChallengeColumn: Int, RecordColumns {
    case challenge_hash, project_id, local_id, created_at, expires_at, consumed_at
    var column: (ColumnSpec, (PasskeyChallengeRecord) -> any SQLBindable) {
        switch self {
        case .challenge_hash: (.blob, { $0.challengeHash })
        case .project_id: (.text, { $0.projectID })
        case .local_id: (.optionalText, { $0.localID })
        case .created_at: (.integer, { $0.createdAt })
        case .expires_at: (.integer, { $0.expiresAt })
        case .consumed_at: (.optionalInteger, { $0.consumedAt })
        }
    }
    static let table = Table("passkey_challenges", Self.self, primaryKey: [.challenge_hash], indexes: [
        IndexSpec(name: "passkey_challenges_expiry", columns: ["expires_at"]),
    ])

    static func read(_ row: SQLRow) throws -> PasskeyChallengeRecord {
        let r = Reading(row, PasskeyChallengeColumn.self)
        return PasskeyChallengeRecord(challengeHash: r.blob(.challenge_hash), projectID: r.text(.project_id), localID: r.textOrNil(.local_id),
                                      createdAt: r.int(.created_at), expiresAt: r.int(.expires_at), consumedAt: r.intOrNil(.consumed_at))
    }
}

/// The devices an account has signed in from (`SignInDevice.key`, hashed): a sign-in from one not
/// listed is new (the new sign-in notice). Deleted with the account.
enum UserDeviceColumn: Int, RecordColumns {
    case project_id, local_id, device_hash, first_seen_at, last_seen_at
    var column: (ColumnSpec, (UserDeviceRecord) -> any SQLBindable) {
        switch self {
        case .project_id: (.text, { $0.projectID })
        case .local_id: (.text, { $0.localID })
        case .device_hash: (.blob, { $0.deviceHash })
        case .first_seen_at: (.integer, { $0.firstSeenAt })
        case .last_seen_at: (.integer, { $0.lastSeenAt })
        }
    }
    static let table = Table("user_devices", Self.self, primaryKey: [.project_id, .local_id, .device_hash])

    static func read(_ row: SQLRow) throws -> UserDeviceRecord {
        let r = Reading(row, UserDeviceColumn.self)
        return UserDeviceRecord(projectID: r.text(.project_id), localID: r.text(.local_id), deviceHash: r.blob(.device_hash),
                                firstSeenAt: r.int(.first_seen_at), lastSeenAt: r.int(.last_seen_at))
    }
}

/// The accounts of a project that may open the operator console (`gatehouse operators`).
enum OperatorColumn: Int, RecordColumns {
    case project_id, local_id, added_at, added_by
    var column: (ColumnSpec, (OperatorRecord) -> any SQLBindable) {
        switch self {
        case .project_id: (.text, { $0.projectID })
        case .local_id: (.text, { $0.localID })
        case .added_at: (.integer, { $0.addedAt })
        case .added_by: (.text, { $0.addedBy })
        }
    }
    static let table = Table("operators", Self.self, primaryKey: [.project_id, .local_id])

    static func read(_ row: SQLRow) throws -> OperatorRecord {
        let r = Reading(row, OperatorColumn.self)
        return OperatorRecord(projectID: r.text(.project_id), localID: r.text(.local_id), addedAt: r.int(.added_at), addedBy: r.text(.added_by))
    }
}
