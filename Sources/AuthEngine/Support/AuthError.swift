/// The one error type flows throw. `code` raw values are the wire codes of firebase-wire.md §1.5;
/// the message on the wire is `CODE` or `CODE : detail`.
public struct AuthError: Error, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        // Request shape
        case invalidArgument = "INVALID_ARGUMENT"
        case missingPhoneNumber = "MISSING_PHONE_NUMBER"
        case invalidPhoneNumber = "INVALID_PHONE_NUMBER"
        case missingCode = "MISSING_CODE"
        case invalidCode = "INVALID_CODE"
        case missingSessionInfo = "MISSING_SESSION_INFO"
        case invalidSessionInfo = "INVALID_SESSION_INFO"
        case sessionExpired = "SESSION_EXPIRED"
        case invalidTemporaryProof = "INVALID_TEMPORARY_PROOF"
        case phoneNumberExists = "PHONE_NUMBER_EXISTS"
        case missingClientIdentifier = "MISSING_CLIENT_IDENTIFIER"
        /// Email endpoints' word for a missing app verification (firebase-wire.md §2.14).
        case missingRecaptchaToken = "MISSING_RECAPTCHA_TOKEN"
        case captchaCheckFailed = "CAPTCHA_CHECK_FAILED"
        case invalidAppCredential = "INVALID_APP_CREDENTIAL"
        case missingAppCredential = "MISSING_APP_CREDENTIAL"
        /// `verifyIosClient` without a device token (firebase-wire.md §2.15).
        case missingIOSAppToken = "MISSING_IOS_APP_TOKEN"
        case quotaExceeded = "QUOTA_EXCEEDED"
        case tooManyAttempts = "TOO_MANY_ATTEMPTS_TRY_LATER"
        case operationNotAllowed = "OPERATION_NOT_ALLOWED"
        case unsupportedTenantOperation = "UNSUPPORTED_TENANT_OPERATION"
        // Email
        case missingEmail = "MISSING_EMAIL"
        case invalidEmail = "INVALID_EMAIL"
        case missingReqType = "MISSING_REQ_TYPE"
        case missingOobCode = "MISSING_OOB_CODE"
        case invalidOobCode = "INVALID_OOB_CODE"
        case expiredOobCode = "EXPIRED_OOB_CODE"
        case emailExists = "EMAIL_EXISTS"
        case emailNotFound = "EMAIL_NOT_FOUND"
        case invalidContinueURI = "INVALID_CONTINUE_URI"
        case missingContinueURI = "MISSING_CONTINUE_URI"
        case unauthorizedDomain = "UNAUTHORIZED_DOMAIN"
        case missingIdentifier = "MISSING_IDENTIFIER"
        case invalidIdentifier = "INVALID_IDENTIFIER"
        case missingIOSBundleID = "MISSING_IOS_BUNDLE_ID"
        case missingAndroidPackageName = "MISSING_ANDROID_PACKAGE_NAME"
        case invalidReqType = "INVALID_REQ_TYPE"
        case invalidHostingLinkDomain = "INVALID_HOSTING_LINK_DOMAIN"
        case invalidDynamicLinkDomain = "INVALID_DYNAMIC_LINK_DOMAIN"
        case passwordLoginDisabled = "PASSWORD_LOGIN_DISABLED"
        // Custom tokens (accounts:signInWithCustomToken)
        case missingCustomToken = "MISSING_CUSTOM_TOKEN"
        case invalidCustomToken = "INVALID_CUSTOM_TOKEN"
        case credentialMismatch = "CREDENTIAL_MISMATCH"
        // Second factor (firebase-wire.md §2.17)
        case missingMFAPendingCredential = "MISSING_MFA_PENDING_CREDENTIAL"
        case invalidMFAPendingCredential = "INVALID_MFA_PENDING_CREDENTIAL"
        case missingCredential = "MISSING_CREDENTIAL"
        case missingMFAEnrollmentID = "MISSING_MFA_ENROLLMENT_ID"
        case mfaEnrollmentNotFound = "MFA_ENROLLMENT_NOT_FOUND"
        case secondFactorExists = "SECOND_FACTOR_EXISTS"
        case secondFactorLimitExceeded = "SECOND_FACTOR_LIMIT_EXCEEDED"
        case unverifiedEmail = "UNVERIFIED_EMAIL"
        case unsupportedFirstFactor = "UNSUPPORTED_FIRST_FACTOR"
        // Passkeys (the Firebase preview SDKs' strings, and the emulator's)
        case passkeyNotEnabled = "PASSKEY_NOT_ENABLED"
        case passkeyExists = "PASSKEY_EXISTS"
        case passkeyLimitExceeded = "PASSKEY_LIMIT_EXCEEDED"
        case passkeyChallengeTimeout = "PASSKEY_CHALLENGE_TIMEOUT"
        case passkeyEnrollmentNotFound = "PASSKEY_ENROLLMENT_NOT_FOUND"
        case invalidAuthenticatorResponse = "INVALID_AUTHENTICATOR_RESPONSE"
        case missingAuthenticatorResponse = "MISSING_AUTHENTICATOR_RESPONSE"
        case invalidCredentialID = "INVALID_CREDENTIAL_ID"
        case credentialAlreadyInUse = "CREDENTIAL_ALREADY_IN_USE"
        case passkeyCredentialNotFound = "PASSKEY_CREDENTIAL_NOT_FOUND"
        // Tokens and accounts
        case missingIDToken = "MISSING_ID_TOKEN"
        case invalidIDToken = "INVALID_ID_TOKEN"
        case tokenExpired = "TOKEN_EXPIRED"
        case userNotFound = "USER_NOT_FOUND"
        case userDisabled = "USER_DISABLED"
        case credentialTooOld = "CREDENTIAL_TOO_OLD_LOGIN_AGAIN"
        case missingLocalID = "MISSING_LOCAL_ID"
        case duplicateLocalID = "DUPLICATE_LOCAL_ID"
        case missingUserAccount = "MISSING_USER_ACCOUNT"
        case maximumUserCountExceeded = "MAXIMUM_USER_COUNT_EXCEEDED"
        case invalidRefreshToken = "INVALID_REFRESH_TOKEN"
        case missingRefreshToken = "MISSING_REFRESH_TOKEN"
        case invalidGrantType = "INVALID_GRANT_TYPE"
        case missingGrantType = "MISSING_GRANT_TYPE"
        case invalidSessionCookieDuration = "INVALID_SESSION_COOKIE_DURATION"
        case claimsTooLarge = "CLAIMS_TOO_LARGE"
        case invalidClaims = "INVALID_CLAIMS"
        case forbiddenClaim = "FORBIDDEN_CLAIM"
        case insufficientPermission = "INSUFFICIENT_PERMISSION"
        case localIDListExceedsLimit = "LOCAL_ID_LIST_EXCEEDS_LIMIT"
        case unexpectedParameter = "UNEXPECTED_PARAMETER"
        case projectNotFound = "CONFIGURATION_NOT_FOUND"
        case invalidProjectID = "INVALID_PROJECT_ID"
        // Transport-level classes (status field present on the wire)
        case permissionDenied = "PERMISSION_DENIED"
        case unauthenticated = "UNAUTHENTICATED"
        case notFound = "NOT_FOUND"
        case internalError = "INTERNAL"
        case notImplemented = "NOT_IMPLEMENTED"
    }

    public let code: Code
    public let detail: String?

    public init(_ code: Code, _ detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// `CODE` or `CODE : detail`, exactly as clients split it.
    public var message: String { detail.map { "\(code.rawValue) : \($0)" } ?? code.rawValue }
    public var description: String { message }
}

/// A failure of a port (storage, delivery) — logged with the request id, rendered as INTERNAL.
public struct PortError: Error, CustomStringConvertible {
    public let port: String
    public let detail: String
    public init(_ port: String, _ detail: String) { self.port = port; self.detail = detail }
    public var description: String { "\(port): \(detail)" }
}
