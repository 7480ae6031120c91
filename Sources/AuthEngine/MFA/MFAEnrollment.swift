import AuthCrypto

/// A project's phone second factor (gatehouse.md "Second factor"): `disabled` refuses every MFA
/// call (`OPERATION_NOT_ALLOWED`), `enabled` lets users enrol, `mandatory` also has the hosted
/// pages ask a user without a factor to enrol one.
public enum MFAState: String, Sendable, Equatable, CaseIterable {
    case disabled = "DISABLED"
    case enabled = "ENABLED"
    case mandatory = "MANDATORY"

    public var allowsPhone: Bool { self != .disabled }
}

/// One second factor of an account (`mfaInfo[]` on the wire): a phone, or a TOTP authenticator.
public struct MFAEnrollment: Sendable, Equatable {
    /// 28 characters, unique within the account.
    public var enrollmentID: String
    /// E.164 for a phone factor; nil for a TOTP one.
    public var phoneNumber: String?
    /// A TOTP factor's sealed secret and last accepted time step; nil for a phone factor.
    public var totp: TOTPFactor?
    public var displayName: String?
    public var enrolledAt: Millis

    public init(enrollmentID: String, phoneNumber: String, displayName: String? = nil, enrolledAt: Millis) {
        self.enrollmentID = enrollmentID; self.phoneNumber = phoneNumber; self.displayName = displayName; self.enrolledAt = enrolledAt
    }

    public init(enrollmentID: String, totp: TOTPFactor, displayName: String? = nil, enrolledAt: Millis) {
        self.enrollmentID = enrollmentID; self.totp = totp; self.displayName = displayName; self.enrolledAt = enrolledAt
    }

    /// `phone` or `totp`: the factor's `sign_in_second_factor`.
    public var factorID: String { totp == nil ? "phone" : "totp" }

    /// Every digit but the last four as `*` (`+*******1234`): what a hint shows before the second
    /// factor is passed ("" for a TOTP factor).
    public var obfuscatedPhone: String { MFAEnrollment.obfuscate(phoneNumber ?? "") }

    public static func obfuscate(_ number: String) -> String {
        let digits = number.utf8.filter { $0 >= 0x30 && $0 <= 0x39 }.count
        var seen = 0
        var out = ""
        for c in number {
            if c.isASCII, let d = c.asciiValue, d >= 0x30, d <= 0x39 {
                seen += 1
                out.append(seen > digits - 4 ? c : "*")
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// At most this many factors per account.
    public static let maxPerAccount = 5
    /// The length of an enrollment id, as Firebase's.
    public static let idLength = 28
}

/// A TOTP factor at rest: its secret sealed under the deployment's TOTP key (`TOTPPolicy.sealingKey`,
/// kept outside the database; the box is bound to the project, user and enrollment id), and the
/// last time step a code was accepted for (no code is accepted twice, nor an older one).
public struct TOTPFactor: Sendable, Equatable {
    /// Base64url of the sealed box.
    public var sealedSecret: String
    public var lastStep: Int64
    public init(sealedSecret: String, lastStep: Int64) { self.sealedSecret = sealedSecret; self.lastStep = lastStep }
}

/// The second factor a token was earned with: its claims `firebase.sign_in_second_factor` and
/// `firebase.second_factor_identifier`.
public struct SecondFactor: Sendable, Equatable {
    /// `phone` or `totp`.
    public var factor: String
    /// The enrollment id used.
    public var identifier: String

    public init(factor: String = "phone", identifier: String) { self.factor = factor; self.identifier = identifier }
}

/// What a phone code is for (`PhoneVerificationRecord.purpose`): each flow accepts only codes
/// sent for it, so a second factor's code signs nobody in as a first factor, and one sent to
/// enrol a phone for one user, or for one pending sign-in, serves no other.
public enum PhoneCodePurpose: Hashable, Sendable {
    /// A first-factor sign-in.
    case signIn
    /// Enrolling a phone as `localID`'s second factor.
    case enrolment(localID: String)
    /// The second factor of one pending sign-in (the hex of its credential's hash).
    case secondFactor(pending: String)

    public static func secondFactor(pending credentialHash: [UInt8]) -> PhoneCodePurpose { .secondFactor(pending: Hex.encode(credentialHash)) }

    private static let enrolmentPrefix = "mfa-enrol:", secondFactorPrefix = "mfa-sign-in:"

    /// As stored with the code: "" for a sign-in, `mfa-enrol:<localID>`, `mfa-sign-in:<hex>`.
    public var stored: String {
        switch self {
        case .signIn: ""
        case let .enrolment(localID): PhoneCodePurpose.enrolmentPrefix + localID
        case let .secondFactor(pending): PhoneCodePurpose.secondFactorPrefix + pending
        }
    }

    /// The purpose `stored` wrote; nil for any other text.
    public init?(stored: String) {
        if stored.isEmpty {
            self = .signIn
        } else if stored.hasPrefix(PhoneCodePurpose.enrolmentPrefix) {
            self = .enrolment(localID: String(stored.dropFirst(PhoneCodePurpose.enrolmentPrefix.count)))
        } else if stored.hasPrefix(PhoneCodePurpose.secondFactorPrefix) {
            self = .secondFactor(pending: String(stored.dropFirst(PhoneCodePurpose.secondFactorPrefix.count)))
        } else {
            return nil
        }
    }

    public var isSecondFactor: Bool {
        if case .secondFactor = self { return true }
        return false
    }
}
