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
    public let store: any SessionStore & SigningKeyStore
    public let random: any RandomSource
    /// The device signing in, kept on the refresh token (and by every refresh of its family):
    /// where the account page says the account is signed in. Written with the token, in the
    /// flow's own transaction.
    public let device: SignInDevice?

    public init(tokens: TokenService, store: any SessionStore & SigningKeyStore, random: any RandomSource, device: SignInDevice? = nil) {
        self.tokens = tokens; self.store = store; self.random = random; self.device = device
    }

    public static func hash(refreshToken: String) -> [UInt8] { Digest.sha256(refreshToken) }

    public func issue(for account: Account, provider: String, authTime: Int64? = nil, secondFactor: SecondFactor? = nil) throws -> IssuedTokens {
        try finish(record(for: account, provider: provider, authTime: authTime, secondFactor: secondFactor))
    }

    /// A sign-in whose refresh token is written and whose ID token is still to be signed.
    public struct Pending {
        public let account: Account
        let provider: String
        let authTime: Int64
        let secondFactor: SecondFactor?
        let developerClaims: String?
        let refreshToken: String
        let key: KeyRing.Key
    }

    /// The store half of `issue`, for the caller's write transaction: picks the signer (parsing
    /// its private key on first use) and stores the new refresh token. `finish` signs the ID token
    /// after the commit, so the RSA signature does not hold the store's write lock.
    public func record(for account: Account, provider: String, authTime: Int64? = nil, secondFactor: SecondFactor? = nil,
                       developerClaims: String? = nil) throws -> Pending {
        let auth = authTime ?? tokens.clock.nowSeconds
        let key = try tokens.keyRing.signer(store: store)
        _ = try key.privateKey
        let refresh = SignInTokens.refreshPrefix + random.token(bytes: 32)
        try store.insertRefreshToken(RefreshTokenRecord(
            tokenHash: SignInTokens.hash(refreshToken: refresh), familyID: random.token(bytes: 12), projectID: account.projectID,
            localID: account.localID, provider: provider, authTime: auth, createdAt: tokens.clock.now(),
            secondFactor: secondFactor?.identifier, developerClaims: developerClaims, userAgent: device?.userAgent, network: device?.network))
        return Pending(account: account, provider: provider, authTime: auth, secondFactor: secondFactor, developerClaims: developerClaims,
                       refreshToken: refresh, key: key)
    }

    /// Signs the ID token of a recorded sign-in (no store access).
    public func finish(_ p: Pending) throws -> IssuedTokens {
        let idToken = try tokens.mintIDToken(for: p.account, provider: p.provider, key: p.key, authTime: p.authTime, secondFactor: p.secondFactor,
                                             developerClaims: p.developerClaims)
        return IssuedTokens(idToken: idToken, refreshToken: p.refreshToken, expiresIn: TokenService.idTokenLifetime)
    }
}
