import AuthCrypto
import JSONValue

/// ActionCodeSettings as `accounts:sendOobCode` carries them (firebase-wire.md §2.3).
public struct ActionCodeSettings: Sendable, Equatable {
    public var continueURL: String?
    public var canHandleCodeInApp = false
    public var iosBundleID: String?
    public var iosAppStoreID: String?
    public var androidPackageName: String?
    public var androidInstallApp = false
    public var androidMinimumVersion: String?
    public var linkDomain: String?
    /// Deprecated by Firebase; accepted as a link domain when `linkDomain` is absent.
    public var dynamicLinkDomain: String?
    public init() {}
}

/// One `accounts:sendOobCode` request (or the hosted page's equivalent).
public struct OobSendRequest: Sendable {
    public var requestType: OobRequestType?
    public var email: String?
    public var idToken: String?
    public var settings = ActionCodeSettings()
    public var returnOobLink = false
    public var isAdmin = false
    /// The API key put in the link (`apiKey` parameter).
    public var apiKey: String
    /// Where Gatehouse's `/__/auth/action` is served, e.g. `https://auth.example.com`.
    public var origin: String
    /// The locale the email is written in (the link's `lang`).
    public var lang: String
    public var remoteAddress: String
    /// SHA-256 of the hosted page's pending cookie.
    public var browserBinding: [UInt8]?
    /// A Gatehouse app token (`captchaResp` on the wire, `appToken` on the hosted page): needed
    /// for `EMAIL_SIGNIN` outside dev mode unless the caller is an admin.
    public var appToken: String?
    /// The app the token must have been minted for (`web`, or a registered bundle id / package).
    public var tokenApp = "web"
    /// The secret a short code beside the link is bound to (`EmailLinks.checkBinding`): the
    /// hosted page's pending cookie, or an app's `emailCodeBinding` (Gatehouse's own field).
    /// Without one the email carries the link alone, as Firebase's does.
    public var codeBinding: String?

    public init(requestType: OobRequestType?, email: String?, apiKey: String, origin: String, lang: String, remoteAddress: String) {
        self.requestType = requestType; self.email = email; self.apiKey = apiKey; self.origin = origin; self.lang = lang
        self.remoteAddress = remoteAddress
    }
}

/// What the email of an `accounts:sendOobCode` link is written from (firebase-wire.md §5.2 item 11).
public struct OobMessageInput: Sendable {
    public let recipient: String
    public let requestType: OobRequestType
    public let link: String
    public let lang: String
    public let projectID: String
    public let lifetimeMinutes: Int
    public let issuedAt: Millis
    /// The short code written beside the link (sign-in requests bound to a browser or an app).
    public var code: String? = nil
    /// How long the code works, in minutes.
    public var codeMinutes = 0
}

/// A rendered link email: subject, plain text and HTML (the web layer renders it; the engine queues it).
public struct OobMessage: Sendable, Equatable {
    public var subject: String
    public var text: String
    public var html: String?
    public init(subject: String, text: String, html: String?) { self.subject = subject; self.text = text; self.html = html }
}

/// The outcome of `accounts:sendOobCode`: `oobCode` and `oobLink` go on the wire only for admin `returnOobLink`.
public struct OobSendResult: Sendable {
    public let email: String
    public let oobCode: String
    public let oobLink: String
    public let record: EmailLinkRecord
    /// Whether an email was queued (false for admin `returnOobLink`).
    public let emailed: Bool
}

extension EmailLinks {
    /// Sends (or, for admins with `returnOobLink`, only generates) an `EMAIL_SIGNIN` or
    /// `VERIFY_EMAIL` link. The record and the outbox message commit in one transaction. For
    /// `EMAIL_SIGNIN` the answer is the same whether an account exists or not.
    public func send(_ req: OobSendRequest, compose: (OobMessageInput) throws -> OobMessage) throws -> OobSendResult {
        guard let type = req.requestType, type != .unspecified else { throw AuthError(.missingReqType) }
        if req.returnOobLink && !req.isAdmin { throw AuthError(.insufficientPermission) }
        let s = req.settings
        let continueURL = s.continueURL.flatMap { $0.isEmpty ? nil : $0 }
        if let c = continueURL { try EmailLinkURLs.checkContinueURL(c, project: project) }
        else if s.canHandleCodeInApp { throw AuthError(.missingContinueURI) }
        if nonEmpty(s.iosAppStoreID) != nil, nonEmpty(s.iosBundleID) == nil { throw AuthError(.missingIOSBundleID) }
        if s.androidInstallApp || nonEmpty(s.androidMinimumVersion) != nil, nonEmpty(s.androidPackageName) == nil {
            throw AuthError(.missingAndroidPackageName)
        }
        let linkOrigin = try self.linkOrigin(s, origin: req.origin)
        let binding = try EmailLinks.checkBinding(req.codeBinding)
        if binding != nil, type != .emailSignIn || req.returnOobLink {
            throw AuthError(.invalidArgument, EmailLinks.bindingUnusedDetail)
        }

        let email: String, recipient: String, localID: String?
        switch type {
        case .emailSignIn:
            guard project.emailLink.enabled else { throw AuthError(.operationNotAllowed) }
            guard let raw = nonEmpty(req.email) else { throw AuthError(.missingEmail) }
            guard let valid = EmailAddress.validated(raw) else { throw AuthError(.invalidEmail) }
            (email, recipient, localID) = (EmailAddress.canonical(valid), valid, nil)
        case .verifyEmail:
            let account: Account
            if req.returnOobLink && nonEmpty(req.idToken) == nil {
                guard let raw = nonEmpty(req.email) else { throw AuthError(.missingEmail) }
                guard let found = try store.account(project: project.id, email: EmailAddress.canonical(raw)) else {
                    throw AuthError(.userNotFound)
                }
                account = found
            } else {
                guard let token = nonEmpty(req.idToken) else { throw AuthError(.invalidIDToken) }
                account = try accounts.account(forIDToken: token, project: project.id).0
            }
            guard let address = account.email else { throw AuthError(.missingEmail) }
            (email, recipient, localID) = (address, address, account.localID)
        case .passwordReset:
            throw AuthError(.passwordLoginDisabled)
        default:
            throw AuthError(.operationNotAllowed, "\(type.rawValue) links are not supported.")
        }

        if type == .emailSignIn, !req.isAdmin { try verifyApp(req) }

        let now = clock.now()
        let code = random.token(bytes: 32)
        var record = EmailLinkRecord(
            codeHash: EmailLinks.hash(code), projectID: project.id, requestType: type, email: email, localID: localID,
            continueURL: continueURL, canHandleCodeInApp: s.canHandleCodeInApp, iosBundleID: nonEmpty(s.iosBundleID),
            androidPackage: nonEmpty(s.androidPackageName), lang: req.lang, browserBinding: req.browserBinding,
            createdAt: now, expiresAt: now + project.emailLink.linkLifetimeSeconds * 1000)
        let action = EmailLinkURLs.actionURL(origin: req.origin, mode: type.mode, oobCode: code, apiKey: req.apiKey,
                                             continueURL: continueURL, lang: req.lang)
        let appLink = s.canHandleCodeInApp && (record.iosBundleID != nil || record.androidPackage != nil)
        let link = appLink ? EmailLinkURLs.wrapperURL(linkOrigin: linkOrigin, actionURL: action) : action
        var shortCode: String?
        if let binding {
            let digits = random.digits(EmailLinks.codeDigits)
            record.shortCode = try issueCode(digits, binding: binding, for: record, at: now)
            shortCode = digits
        }

        let emailed = !req.returnOobLink
        let refusal: AuthError? = try store.transaction {
            // A refusal by the limits returns before anything is written but its tally (the
            // console's refusals by budget), which commits.
            if !req.isAdmin {
                do { try countSend(mailbox: EmailAddress.mailbox(email), client: project.client(req.remoteAddress)) } catch let e as AuthError { return e }
            }
            try store.purgeEmailLinks(expiredBefore: now - EmailLinks.retentionAfterExpiry)
            try store.insertEmailLink(record)
            if emailed {
                let message = try compose(OobMessageInput(
                    recipient: recipient, requestType: type, link: link, lang: req.lang, projectID: project.id,
                    lifetimeMinutes: Int(project.emailLink.linkLifetimeSeconds / 60), issuedAt: now, code: shortCode,
                    codeMinutes: record.shortCode.map { Int(($0.expiresAt - now) / 60_000) } ?? 0))
                _ = try store.enqueue(OutboxMessage(
                    projectID: project.id, channel: .email, recipient: recipient, subject: message.subject, body: message.text,
                    htmlBody: message.html, metadata: metadata(code: code, link: link, type: type, email: email),
                    nextAttemptAt: now, createdAt: now))
            }
            try store.audit(AuditEvent(projectID: project.id, event: emailed ? .emailLinkSent : .emailLinkGenerated,
                                       localID: localID, remoteAddress: req.remoteAddress, detail: type.rawValue), at: now)
            return nil
        }
        if let refusal { throw refusal }
        return OobSendResult(email: email, oobCode: code, oobLink: link, record: record, emailed: emailed)
    }

    /// Unauthenticated sign-in links need proof that a real app or browser asks (as phone codes
    /// do), else a script could spend a victim's budget and mail-bomb within it. Dev mode needs
    /// none, but a Gatehouse token that is supplied is still checked.
    func verifyApp(_ req: OobSendRequest) throws {
        let tokens = AppTokens(store: store, clock: clock, random: random)
        // The hosted page (the only caller with a browser binding) mints its tokens without a key.
        let apiKey: String? = req.browserBinding == nil ? req.apiKey : nil
        if project.devMode {
            if let t = req.appToken, t.hasPrefix(AppTokens.prefix) { try tokens.consume(t, project: project.id, apiKey: apiKey, app: req.tokenApp) }
            return
        }
        guard let token = nonEmpty(req.appToken) else { throw AuthError(.missingRecaptchaToken) }
        try tokens.consume(token, project: project.id, apiKey: apiKey, app: req.tokenApp)
    }

    /// Send limits per mailbox (canonical, `+tag` removed; with a reserve per client block, so
    /// that strangers who spend the mailbox's links cannot keep its owner from getting one) and
    /// per client network (both tiers), inside the send's transaction: every rule is checked
    /// before any is counted, so a refusal spends nothing and two concurrent sends cannot both
    /// pass the last slot.
    func countSend(mailbox: String, client: ClientAddress) throws {
        let limits = self.limits
        let mailboxKey = project.id + "|" + mailbox
        guard let admission = try limits.admits(sendsPerMailbox, key: mailboxKey, client: client),
              try limits.allows(sendsPerIP, client: client, scope: project.id) else {
            throw AuthError(.tooManyAttempts)
        }
        try limits.count(sendsPerMailbox, key: mailboxKey, client: client, as: admission)
        _ = try limits.record(sendsPerIP, client: client, scope: project.id)
    }

    /// `https://<linkDomain>` when one is given (it must be Gatehouse's host or an authorized
    /// domain), else Gatehouse's own origin.
    func linkOrigin(_ s: ActionCodeSettings, origin: String) throws -> String {
        if let d = nonEmpty(s.linkDomain) {
            guard EmailLinkURLs.isAcceptableLinkDomain(d, origin: origin, project: project) else { throw AuthError(.invalidHostingLinkDomain) }
            return "https://" + d.lowercased()
        }
        if let d = nonEmpty(s.dynamicLinkDomain) {
            guard EmailLinkURLs.isAcceptableLinkDomain(d, origin: origin, project: project) else { throw AuthError(.invalidDynamicLinkDomain) }
            return "https://" + d.lowercased()
        }
        return origin
    }

    /// Dev mode keeps what the emulator listing shows (`/emulator/v1/projects/{p}/oobCodes`); production keeps no secret.
    func metadata(code: String, link: String, type: OobRequestType, email: String) -> String {
        guard project.devMode else { return JSON.obj(("requestType", type.rawValue)).serialized() }
        return JSON.obj(("oobCode", code), ("oobLink", link), ("requestType", type.rawValue), ("email", email)).serialized()
    }

    func nonEmpty(_ s: String?) -> String? { s.flatMap { $0.isEmpty ? nil : $0 } }
}
