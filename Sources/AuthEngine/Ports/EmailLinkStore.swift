/// The kinds of out-of-band codes (`requestType`, firebase-wire.md §1.3 rule 3 gives the order of
/// the integer form). Gatehouse issues `EMAIL_SIGNIN` and `VERIFY_EMAIL`.
public enum OobRequestType: String, Sendable, CaseIterable {
    case unspecified = "OOB_REQ_TYPE_UNSPECIFIED"
    case passwordReset = "PASSWORD_RESET"
    case oldEmailAgree = "OLD_EMAIL_AGREE"
    case newEmailAccept = "NEW_EMAIL_ACCEPT"
    case verifyEmail = "VERIFY_EMAIL"
    case recoverEmail = "RECOVER_EMAIL"
    case emailSignIn = "EMAIL_SIGNIN"
    case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
    case revertSecondFactorAddition = "REVERT_SECOND_FACTOR_ADDITION"

    /// The enum by its integer index (Android sends `6` for `EMAIL_SIGNIN`).
    public init?(index: Int) {
        let all = OobRequestType.allCases
        guard all.indices.contains(index) else { return nil }
        self = all[index]
    }

    /// The `mode` parameter of the action link (firebase-wire.md §4.1).
    public var mode: String {
        switch self {
        case .emailSignIn: return "signIn"
        case .verifyEmail: return "verifyEmail"
        case .passwordReset: return "resetPassword"
        case .recoverEmail: return "recoverEmail"
        case .verifyAndChangeEmail: return "verifyAndChangeEmail"
        case .revertSecondFactorAddition: return "revertSecondFactorAddition"
        default: return "unknown"
        }
    }
}

/// One emailed link as stored: only the hash of its oobCode, what it may do and for whom.
public struct EmailLinkRecord: Sendable, Equatable {
    public var codeHash: [UInt8]
    public var projectID: String
    public var requestType: OobRequestType
    /// Lower-cased address the link was sent to.
    public var email: String
    /// The account a `VERIFY_EMAIL` link verifies.
    public var localID: String?
    public var continueURL: String?
    /// True: the app (or page at `continueURL`) completes sign-in; false: Gatehouse's hosted page does.
    public var canHandleCodeInApp: Bool
    public var iosBundleID: String?
    public var androidPackage: String?
    /// The locale the email was written in.
    public var lang: String
    /// SHA-256 of the pending cookie of the browser that asked (hosted page only).
    public var browserBinding: [UInt8]?
    public var createdAt: Millis
    public var expiresAt: Millis
    /// When the link, or the short code beside it, was used: either ends both.
    public var consumedAt: Millis?
    /// The short code emailed beside a sign-in link, when the request was bound to a browser or
    /// an app (`EmailLinks.codeBinding`); nil for a link alone.
    public var shortCode: EmailShortCode?

    public init(codeHash: [UInt8], projectID: String, requestType: OobRequestType, email: String, localID: String? = nil,
                continueURL: String? = nil, canHandleCodeInApp: Bool = false, iosBundleID: String? = nil, androidPackage: String? = nil,
                lang: String = "en", browserBinding: [UInt8]? = nil, createdAt: Millis, expiresAt: Millis, consumedAt: Millis? = nil,
                shortCode: EmailShortCode? = nil) {
        self.codeHash = codeHash; self.projectID = projectID; self.requestType = requestType; self.email = email
        self.localID = localID; self.continueURL = continueURL; self.canHandleCodeInApp = canHandleCodeInApp
        self.iosBundleID = iosBundleID; self.androidPackage = androidPackage; self.lang = lang
        self.browserBinding = browserBinding; self.createdAt = createdAt; self.expiresAt = expiresAt; self.consumedAt = consumedAt
        self.shortCode = shortCode
    }
}

/// A short code as stored with its link: keyed hashes only (`EmailCodeKeys`), never the digits
/// or the binding secret.
public struct EmailShortCode: Sendable, Equatable {
    /// HMAC of the digits, bound to the link's own hash (equal codes of two links differ).
    public var hash: [UInt8]
    /// HMAC of the secret of the browser (the hosted page's pending cookie) or the app
    /// (`emailCodeBinding`) that asked: the code works only where that secret is shown again.
    public var binding: [UInt8]
    /// Never after the link's own expiry.
    public var expiresAt: Millis
    /// Tries spent on this code (each taken before the digits are compared, so concurrent
    /// guesses cannot outrun the budget).
    public var attempts: Int

    public init(hash: [UInt8], binding: [UInt8], expiresAt: Millis, attempts: Int = 0) {
        self.hash = hash; self.binding = binding; self.expiresAt = expiresAt; self.attempts = attempts
    }
}

/// Storage of emailed links (email-link sign-in and email verification).
public protocol EmailLinkStore: Transactional {
    func insertEmailLink(_ link: EmailLinkRecord) throws
    func emailLink(hash: [UInt8]) throws -> EmailLinkRecord?
    /// Marks the link used at `at` if it is still unused and unexpired; true only for the call that did.
    func consumeEmailLink(hash: [UInt8], at: Millis) throws -> Bool
    /// The sign-in links to `email` (canonical) of `project` that carry a short code and were
    /// created at or after `since`, newest first, at most `limit`, whatever their state.
    func emailLinksWithCodes(project: String, email: String, since: Millis, limit: Int) throws -> [EmailLinkRecord]
    /// Takes one try of a link's short code: true when it was still unused, its link unused and
    /// fewer than `maxAttempts` tries spent (the try is counted); false changes nothing.
    func takeEmailCodeAttempt(hash: [UInt8], maxAttempts: Int) throws -> Bool
    /// Uses a link through its short code at `at` (the link is used with it): true only for the
    /// call that did, while link and code are unused and unexpired.
    func consumeEmailCode(hash: [UInt8], at: Millis) throws -> Bool
    /// Deletes links that expired before `before`; returns how many.
    @discardableResult
    func purgeEmailLinks(expiredBefore before: Millis) throws -> Int
}
