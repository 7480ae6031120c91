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
    /// The second factor the sign-in passed (its enrollment id), kept by every refresh.
    public var secondFactor: String?
    /// A custom-token sign-in's developer claims (a JSON object), kept by every refresh.
    public var developerClaims: String?
    /// The device that signed in (its user agent, cut to `SignInDevice.maxUserAgent`) and its
    /// network as a coarse prefix, kept by every refresh: what the account page lists.
    public var userAgent: String?
    public var network: String?

    public init(tokenHash: [UInt8], familyID: String, projectID: String, localID: String, provider: String, authTime: Int64,
                createdAt: Millis, rotatedAt: Millis? = nil, revokedAt: Millis? = nil, secondFactor: String? = nil,
                developerClaims: String? = nil, userAgent: String? = nil, network: String? = nil) {
        self.tokenHash = tokenHash; self.familyID = familyID; self.projectID = projectID; self.localID = localID
        self.provider = provider; self.authTime = authTime; self.createdAt = createdAt; self.rotatedAt = rotatedAt; self.revokedAt = revokedAt
        self.secondFactor = secondFactor; self.developerClaims = developerClaims; self.userAgent = userAgent; self.network = network
    }
}

/// A server-side browser session behind one session cookie (the cookie's `sid` claim, stored
/// hashed). Lets Gatehouse enforce the idle timeout and revoke a single cookie on sign-out.
public struct SessionRecord: Sendable, Equatable {
    public var sidHash: [UInt8]
    public var projectID: String
    public var localID: String
    public var provider: String
    public var createdAt: Millis
    /// Last request seen with this session (written at most once per touch interval).
    public var lastSeenAt: Millis
    public var expiresAt: Millis
    /// 0 = no idle timeout (cookies minted by `createSessionCookie` behave as Firebase's).
    public var idleTimeoutSeconds: Int64
    public var revokedAt: Millis?
    /// The second factor the sign-in passed (its enrollment id), and the device and network it
    /// came from (as on `RefreshTokenRecord`): what the account page lists.
    public var secondFactor: String?
    public var userAgent: String?
    public var network: String?

    public init(sidHash: [UInt8], projectID: String, localID: String, provider: String, createdAt: Millis, lastSeenAt: Millis,
                expiresAt: Millis, idleTimeoutSeconds: Int64, revokedAt: Millis? = nil, secondFactor: String? = nil,
                userAgent: String? = nil, network: String? = nil) {
        self.sidHash = sidHash; self.projectID = projectID; self.localID = localID; self.provider = provider
        self.createdAt = createdAt; self.lastSeenAt = lastSeenAt; self.expiresAt = expiresAt
        self.idleTimeoutSeconds = idleTimeoutSeconds; self.revokedAt = revokedAt
        self.secondFactor = secondFactor; self.userAgent = userAgent; self.network = network
    }
}

/// Refresh tokens, browser sessions, and the account operations that must take them along
/// (deleting a user deletes its tokens; revoking marks them).
public protocol SessionStore: Transactional {
    func insertRefreshToken(_ token: RefreshTokenRecord) throws
    func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord?
    /// Marks the token rotated if it is neither rotated nor revoked; false when it already was.
    func markRefreshTokenRotated(hash: [UInt8], at: Millis) throws -> Bool
    /// Revokes every token of a family (reuse of a rotated token); a family belongs to one user.
    func revokeRefreshFamily(_ familyID: String, project: String, localID: String, at: Millis) throws
    /// Revokes the user's refresh tokens created before `createdBefore`; returns how many.
    @discardableResult
    func revokeRefreshTokens(project: String, localID: String, createdBefore: Millis, at: Millis) throws -> Int

    func insertSession(_ session: SessionRecord) throws
    func session(sidHash: [UInt8]) throws -> SessionRecord?
    /// Records activity on a live session.
    func touchSession(sidHash: [UInt8], at: Millis) throws
    /// Revokes one session; false if it was unknown or already revoked.
    @discardableResult
    func revokeSession(sidHash: [UInt8], at: Millis) throws -> Bool
    /// Revokes the user's sessions created before `createdBefore`; returns how many.
    @discardableResult
    func revokeSessions(project: String, localID: String, createdBefore: Millis, at: Millis) throws -> Int
    /// Live (unrevoked, unexpired) sessions of a user.
    func activeSessions(project: String, localID: String, now: Millis) throws -> [SessionRecord]

    /// Deletes the user's refresh tokens and sessions (account deletion).
    func deleteTokensAndSessions(project: String, localID: String) throws
    /// Deletes every account of a project with its tokens and sessions; returns the count.
    @discardableResult
    func deleteAllAccounts(project: String) throws -> Int
    /// The account with a linked provider `providerID` whose raw id is `rawID`.
    func account(project: String, providerID: String, rawID: String) throws -> Account?
    /// Deletes sessions expired before `now`, and refresh-token records revoked or rotated before
    /// `retiredBefore` (reuse of such an old token is then simply unknown, still refused).
    func purgeSessions(now: Millis, retiredBefore: Millis) throws
}

