/// A refresh token as stored: only its hash, its family (for reuse detection) and its user.
public struct RefreshTokenRecord: Sendable, Equatable {
    public var tokenHash: [UInt8]
    /// All tokens rotated from one sign-in share a family; reuse of a rotated one revokes it.
    public var familyID: String
    public var projectID: String
    public var localID: String
    /// `phone`, `password`, `anonymous`, `custom`.
    public var provider: String
    /// Seconds: the sign-in time carried into every refreshed ID token.
    public var authTime: Int64
    public var createdAt: Millis
    public var rotatedAt: Millis?
    public var revokedAt: Millis?

    public init(tokenHash: [UInt8], familyID: String, projectID: String, localID: String, provider: String, authTime: Int64,
                createdAt: Millis, rotatedAt: Millis? = nil, revokedAt: Millis? = nil) {
        self.tokenHash = tokenHash; self.familyID = familyID; self.projectID = projectID; self.localID = localID
        self.provider = provider; self.authTime = authTime; self.createdAt = createdAt; self.rotatedAt = rotatedAt; self.revokedAt = revokedAt
    }
}

/// Refresh tokens and session state (the tokens/sessions feature extends this port).
public protocol SessionStore: Transactional {
    func insertRefreshToken(_ token: RefreshTokenRecord) throws
    func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord?
}
