import JSONValue

/// One linked sign-in method of an account (`providerUserInfo[]` on the wire).
public struct ProviderInfo: Sendable, Equatable {
    /// `phone` or `password` (the provider id Firebase uses for email link too).
    public var providerID: String
    public var rawID: String
    public var email: String?
    public var phoneNumber: String?
    public var displayName: String?
    public var photoURL: String?

    public init(providerID: String, rawID: String, email: String? = nil, phoneNumber: String? = nil,
                displayName: String? = nil, photoURL: String? = nil) {
        self.providerID = providerID; self.rawID = rawID; self.email = email; self.phoneNumber = phoneNumber
        self.displayName = displayName; self.photoURL = photoURL
    }
}

/// A user account of one project (Identity Toolkit `UserInfo`).
public struct Account: Sendable, Equatable {
    public var projectID: String
    public var localID: String
    /// Lower-cased.
    public var email: String?
    public var emailVerified = false
    /// E.164.
    public var phoneNumber: String?
    public var displayName: String?
    public var photoURL: String?
    /// Only ever set by admin import/create; email-link sign-in removes an unverified one.
    public var passwordHash: String?
    public var disabled = false
    public var emailLinkSignin = false
    public var anonymous = false
    /// A JSON object text (≤ 1000 chars), the custom claims.
    public var customAttributes: String?
    public var createdAt: Millis
    public var lastLoginAt: Millis?
    public var lastRefreshAt: Millis?
    /// Seconds: tokens issued before this are revoked.
    public var validSince: Int64 = 0
    public var providers: [ProviderInfo] = []
    /// Phones enrolled as second factors, in enrolment order.
    public var mfaEnrollments: [MFAEnrollment] = []

    public init(projectID: String, localID: String, createdAt: Millis) {
        self.projectID = projectID
        self.localID = localID
        self.createdAt = createdAt
    }

    /// Adds or replaces the provider entry with this id.
    public mutating func upsertProvider(_ p: ProviderInfo) {
        providers.removeAll { $0.providerID == p.providerID }
        providers.append(p)
    }

    public mutating func removeProvider(_ id: String) { providers.removeAll { $0.providerID == id } }
}
