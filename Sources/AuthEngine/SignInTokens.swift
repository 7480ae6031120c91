import AuthCrypto

/// What a successful sign-in returns on the wire: ID token, refresh token, lifetime.
public struct IssuedTokens: Sendable, Equatable {
    public let idToken: String
    public let refreshToken: String
    public let expiresIn: Int64
}

/// Issues the ID token (RS256, 1 h) and a new opaque refresh token (stored hashed, new family).
public struct SignInTokens {
    public static let refreshPrefix = "ghrt1."
    public let tokens: TokenService
    public let store: SessionStore & SigningKeyStore
    public let random: RandomSource

    public init(tokens: TokenService, store: SessionStore & SigningKeyStore, random: RandomSource) {
        self.tokens = tokens; self.store = store; self.random = random
    }

    public static func hash(refreshToken: String) -> [UInt8] { Digest.sha256(refreshToken) }

    public func issue(for account: Account, provider: String, authTime: Int64? = nil) throws -> IssuedTokens {
        let auth = authTime ?? tokens.clock.nowSeconds
        let idToken = try tokens.mintIDToken(for: account, provider: provider, store: store, authTime: auth)
        let refresh = SignInTokens.refreshPrefix + random.token(bytes: 32)
        try store.insertRefreshToken(RefreshTokenRecord(
            tokenHash: SignInTokens.hash(refreshToken: refresh), familyID: random.token(bytes: 12), projectID: account.projectID,
            localID: account.localID, provider: provider, authTime: auth, createdAt: tokens.clock.now()))
        return IssuedTokens(idToken: idToken, refreshToken: refresh, expiresIn: TokenService.idTokenLifetime)
    }
}
