import AuthCrypto

/// The email-link flows of one project (firebase-wire.md §2.3–§2.5, §2.7, §2.16; gatehouse.md
/// "Email-link sign-in and the action handler"): sending links, completing sign-in, inspecting and
/// applying codes. oobCodes are 32 random bytes (base64url), stored only as SHA-256, single use.
public struct EmailLinks {
    /// The device signing in, for the refresh tokens this flow issues (`SignInTokens.device`).
    public var device: SignInDevice?
    public let store: any GatehouseStore
    public let clock: any Clock
    public let random: any RandomSource
    public let tokens: TokenService
    public let project: ProjectSettings

    public init(store: any GatehouseStore, clock: any Clock, random: any RandomSource, tokens: TokenService, project: ProjectSettings) {
        self.store = store; self.clock = clock; self.random = random; self.tokens = tokens; self.project = project
    }

    /// Used links are kept this long after they expire, so that a late click still says "used".
    public static let retentionAfterExpiry: Millis = 7 * 86_400_000
    /// Wrong addresses tried against one link before it stops answering (per hour).
    public static let mismatchRule = Limits.Rule("emaillink.mismatch", max: 5, per: 3600)
    /// createAuthUri calls per IP (firebase-wire.md §2.5: 120 per hour).
    public static let authURIRule = Limits.Rule("authuri.ip", max: 120, per: 3600)

    public static func hash(_ oobCode: String) -> [UInt8] { Digest.sha256(oobCode) }

    var limits: Limits { Limits(store: store, clock: clock) }
    var accounts: Accounts { Accounts(store: store, tokens: tokens) }

    var sendsPerAddress: Limits.Rule { Limits.Rule("emaillink.address", max: project.emailLink.sendsPerAddressPerHour, per: 3600) }
    /// One link an hour per client block stays for whoever the mailbox's budget ran out on.
    static let mailboxReserve = Limits.Rule("emaillink.address-reserve", max: 1, per: 3600)
    var sendsPerMailbox: Limits.DestinationBudget { Limits.DestinationBudget([sendsPerAddress], reserve: EmailLinks.mailboxReserve) }
    var sendsPerIP: Limits.Rule { Limits.Rule("emaillink.ip", max: project.emailLink.sendsPerIPPerHour, per: 3600) }

    /// What a link is at this moment, for the action page.
    public enum LinkStatus: Equatable, Sendable {
        case usable(EmailLinkRecord)
        case used(EmailLinkRecord)
        case expired(EmailLinkRecord)
        case unknown
    }

    /// Looks a code up without changing anything (HEAD and GET of the action page use only this).
    public func status(of oobCode: String?) throws -> LinkStatus {
        guard let code = oobCode, !code.isEmpty, code.utf8.count <= 200 else { return .unknown }
        guard let rec = try store.emailLink(hash: EmailLinks.hash(code)), rec.projectID == project.id else { return .unknown }
        if rec.consumedAt != nil { return .used(rec) }
        if rec.expiresAt <= clock.now() { return .expired(rec) }
        return .usable(rec)
    }

    /// The record of a code that may still be used: unknown, used, other project or other kind →
    /// `INVALID_OOB_CODE`; past its lifetime → `EXPIRED_OOB_CODE`.
    public func usableRecord(_ oobCode: String, type: OobRequestType? = nil) throws -> EmailLinkRecord {
        switch try status(of: oobCode) {
        case let .usable(rec):
            if let type, rec.requestType != type { throw AuthError(.invalidOobCode) }
            return rec
        case let .expired(rec):
            if let type, rec.requestType != type { throw AuthError(.invalidOobCode) }
            throw AuthError(.expiredOobCode)
        case .used, .unknown: throw AuthError(.invalidOobCode)
        }
    }

    /// Whether `pendingToken` (the hosted page's pending cookie) is the browser that asked for `record`.
    public static func browserMatches(_ record: EmailLinkRecord, pendingToken: String?) -> Bool {
        guard let binding = record.browserBinding, let token = pendingToken, !token.isEmpty else { return false }
        return Digest.constantTimeEqual(binding, Digest.sha256(token))
    }

    /// Code inspection (`accounts:resetPassword` with only `oobCode`, §2.16): never consumes.
    public func inspect(oobCode: String?) throws -> EmailLinkRecord {
        guard let code = oobCode, !code.isEmpty else { throw AuthError(.missingOobCode) }
        return try usableRecord(code)
    }

    /// Applies a `VERIFY_EMAIL` code (`accounts:update {oobCode}`, §2.7): consumes it and marks the
    /// address verified. `EMAIL_SIGNIN` codes are not accepted here.
    public func applyVerifyEmail(oobCode: String?, remoteAddress: String? = nil) throws -> Account {
        guard let code = oobCode, !code.isEmpty else { throw AuthError(.missingOobCode) }
        let rec = try usableRecord(code, type: .verifyEmail)
        let now = clock.now()
        return try store.transaction {
            guard try store.consumeEmailLink(hash: rec.codeHash, at: now) else { throw AuthError(.invalidOobCode) }
            let found = try rec.localID.flatMap { try store.account(project: project.id, localID: $0) }
                ?? store.account(project: project.id, email: rec.email)
            // The address must still be the one the link was sent to.
            guard var account = found, account.email == rec.email else { throw AuthError(.invalidOobCode) }
            if account.disabled { throw AuthError(.userDisabled) }
            account.emailVerified = true
            try store.updateAccount(account)
            try store.audit(AuditEvent(projectID: project.id, event: .emailVerified, localID: account.localID,
                                       remoteAddress: remoteAddress), at: now)
            return account
        }
    }
}
