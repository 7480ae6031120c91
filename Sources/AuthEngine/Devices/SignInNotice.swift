import AuthCrypto

/// A project's new sign-in notice (`new_sign_in_notice` in the configuration; off by default).
public struct SignInNoticePolicy: Sendable, Equatable {
    public var enabled = false
    /// Notices one account may get per day (a fixed UTC-day window); past it, sign-ins go on unmailed.
    public var perAccountPerDay = 3
    public init(enabled: Bool = false, perAccountPerDay: Int = 3) { self.enabled = enabled; self.perAccountPerDay = perAccountPerDay }
}

/// What the web layer's composer gets to write the notice (`compose` in `noteDevice`).
public struct SignInNoticeMessageInput: Sendable {
    public let recipient: String
    public let projectID: String
    public let device: SignInDevice
    public let at: Millis
    /// The sign-out-everywhere link's token (`SignInNotice.link`).
    public let token: String
}

/// The new sign-in notice: after a sign-in, an email to the account's verified address when the
/// device (`SignInDevice.key`: browser or app, system, network block) is one the account has not
/// used before, with a link that signs out everywhere.
///
/// Who never gets one:
/// - an account's first device ever (nothing to compare with), and every device it used before;
/// - a sign-in by email link: it just came from a message to that same mailbox, so the mailbox's
///   owner has it in hand (this is "the sign-in's own link email"). It is told by the sign-in's
///   provider, `password`, which only the email link issues (Gatehouse has no passwords): a
///   second factor after an email link keeps that first factor, so it is skipped too;
/// - an address that is not verified (it may be anyone's);
/// - past `perAccountPerDay` notices in the day (`Limits`: it never refuses the sign-in, only the
///   mail), so a stranger who can sign in cannot turn the notice into a mail bomb.
///
/// The message is composed by the web layer's closure and enqueued in the caller's transaction.
///
/// The link: `gsn1.<base64url(project \n uid \n issued ms)>.<base64url(HMAC-SHA-256)>` under the
/// server secret `sign-in-notice`; valid 7 days; used once (a counter on its hash, which the
/// confirmation page reads too), and refused once the account's `validSince` is past its issue.
public struct SignInNotice {
    public static let linkLifetime: Millis = 7 * 86_400_000
    public static let emailLinkProvider = "password"
    static let tokenPrefix = "gsn1."
    static let secretName = "sign-in-notice"
    static let maxTokenBytes = 1024

    public enum Outcome: String, Sendable, Equatable {
        case off, firstDevice, known, emailLinkSignIn, noVerifiedEmail, overBudget, mailed
    }

    public typealias Store = AccountStore & SessionStore & SignInListStore & MFAStore & AuditStore & LimitStore & OutboxStore & SecretStore

    public let store: any Store
    public let clock: any Clock
    public let random: any RandomSource
    public let policy: SignInNoticePolicy

    public init(store: any Store, clock: any Clock, random: any RandomSource, policy: SignInNoticePolicy) {
        self.store = store; self.clock = clock; self.random = random; self.policy = policy
    }

    var budget: Limits.Rule { Limits.Rule("sign-in-notice", max: max(1, policy.perAccountPerDay), per: 86_400) }
    /// Longer than a link lives, so a link is counted in at most two windows (and `validSince` covers the rest).
    static let linkUse = Limits.Rule("sign-in-notice-link", max: 1, per: 8 * 86_400)

    /// Notes the device of a sign-in of `account` (in the caller's transaction, or its own) and
    /// mails the notice when the rules above allow. Off: nothing is noted.
    @discardableResult
    public func noteDevice(account: Account, provider: String, device: SignInDevice, remoteAddress: String?,
                           compose: (SignInNoticeMessageInput) throws -> OobMessage) throws -> Outcome {
        guard policy.enabled else { return .off }
        return try store.transaction {
            let now = clock.now()
            let seen = try store.noteDevice(UserDeviceRecord(projectID: account.projectID, localID: account.localID,
                                                             deviceHash: device.keyHash, firstSeenAt: now, lastSeenAt: now))
            switch seen {
            case .firstDevice: return .firstDevice
            case .known: return .known
            case .new: break
            }
            if provider == Self.emailLinkProvider { return .emailLinkSignIn }
            guard let email = account.email, account.emailVerified else { return .noVerifiedEmail }
            let limits = Limits(store: store, clock: clock)
            guard try limits.record(budget, key: account.projectID + "|" + account.localID) else {
                try store.audit(AuditEvent(projectID: account.projectID, event: .signInNotice, localID: account.localID,
                                           remoteAddress: remoteAddress, detail: "not sent: over the daily budget", outcome: "refused"), at: now)
                return .overBudget
            }
            let token = link(project: account.projectID, localID: account.localID, issuedAt: now, key: try secret(now))
            let message = try compose(SignInNoticeMessageInput(recipient: email, projectID: account.projectID, device: device, at: now, token: token))
            _ = try store.enqueue(OutboxMessage(projectID: account.projectID, channel: .email, recipient: email, subject: message.subject,
                                                body: message.text, htmlBody: message.html, metadata: "{\"kind\":\"sign_in_notice\"}",
                                                nextAttemptAt: now, createdAt: now))
            try store.audit(AuditEvent(projectID: account.projectID, event: .signInNotice, localID: account.localID,
                                       remoteAddress: remoteAddress, detail: "sent: new device"), at: now)
            return .mailed
        }
    }

    func secret(_ now: Millis) throws -> [UInt8] {
        try store.secret(named: Self.secretName) ?? store.insertSecretIfAbsent(named: Self.secretName, value: random.bytes(32), at: now)
    }

    /// The link's token for (`project`, `localID`), issued at `issuedAt`.
    static func link(project: String, localID: String, issuedAt: Millis, key: [UInt8]) -> String {
        let payload = project + "\n" + localID + "\n" + String(issuedAt)
        return tokenPrefix + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode(Digest.hmacSHA256(key: key, "sign-in-notice\n" + payload))
    }

    func link(project: String, localID: String, issuedAt: Millis, key: [UInt8]) -> String {
        Self.link(project: project, localID: localID, issuedAt: issuedAt, key: key)
    }

    /// The key a link's use is counted under.
    static func useKey(_ token: String?) -> String { Hex.encode(Digest.sha256(token ?? "")) }

    /// What a link names, once its signature is checked.
    public struct Link: Sendable, Equatable {
        public let projectID: String
        public let localID: String
        public let issuedAt: Millis
    }

    /// The link's project, unchecked (which project's pages to show); nil when it is no link.
    public static func project(ofToken token: String?) -> String? { parts(token)?.project }

    static func parts(_ token: String?) -> (project: String, localID: String, issued: Millis, payload: String, mac: [UInt8])? {
        guard let token, token.utf8.count <= maxTokenBytes, token.hasPrefix(tokenPrefix) else { return nil }
        let rest = token.dropFirst(tokenPrefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard rest.count == 2, let raw = Base64URL.decode(String(rest[0])), let mac = Base64URL.decode(String(rest[1])), mac.count == 32,
              let payload = String(validating: raw, as: UTF8.self) else { return nil }
        // One spelling per link: its single use is counted on the token's text.
        guard Base64URL.encode(raw) == rest[0], Base64URL.encode(mac) == rest[1] else { return nil }
        let fields = payload.split(separator: "\n", omittingEmptySubsequences: false)
        guard fields.count == 3, !fields[0].isEmpty, !fields[1].isEmpty, let issued = Millis(fields[2]) else { return nil }
        return (String(fields[0]), String(fields[1]), issued, payload, mac)
    }

    /// Checks a link without using it (the confirmation page a GET shows): signature, age, and
    /// that the account still exists and was not signed out everywhere since. `INVALID_OOB_CODE`
    /// for anything else than a good, unused link; `EXPIRED_OOB_CODE` past 7 days.
    public func check(token: String?) throws -> Link {
        guard let p = Self.parts(token), let key = try store.secret(named: Self.secretName),
              Digest.constantTimeEqual(Digest.hmacSHA256(key: key, "sign-in-notice\n" + p.payload), p.mac) else {
            throw AuthError(.invalidOobCode)
        }
        let now = clock.now()
        if p.issued > now + 60_000 { throw AuthError(.invalidOobCode) }
        if now - p.issued > Self.linkLifetime { throw AuthError(.expiredOobCode) }
        // Used already: `validSince` says so only from the next second on (it has whole seconds).
        if try Limits(store: store, clock: clock).count(Self.linkUse, key: Self.useKey(token)) >= 1 { throw AuthError(.invalidOobCode) }
        guard let account = try store.account(project: p.project, localID: p.localID), account.validSince * 1000 <= p.issued else {
            throw AuthError(.invalidOobCode)
        }
        return Link(projectID: p.project, localID: p.localID, issuedAt: p.issued)
    }

    /// The link's POST: signs the account out everywhere (`SignInList.signOutEverywhere`), once.
    @discardableResult
    public func signOutEverywhere(token: String?, remoteAddress: String?) throws -> Account {
        try store.transaction {
            let link = try check(token: token)
            let now = clock.now()
            guard try Limits(store: store, clock: clock).record(Self.linkUse, key: Self.useKey(token)) else { throw AuthError(.invalidOobCode) }
            guard let account = try store.account(project: link.projectID, localID: link.localID) else { throw AuthError(.invalidOobCode) }
            let fresh = try SignInList(store: store, clock: clock).signOutEverywhere(account: account, remoteAddress: remoteAddress,
                                                                                     reason: "sign-in notice link")
            try store.audit(AuditEvent(projectID: link.projectID, event: .signInNotice, localID: link.localID, remoteAddress: remoteAddress,
                                       detail: "link used: signed out everywhere"), at: now)
            return fresh
        }
    }
}
