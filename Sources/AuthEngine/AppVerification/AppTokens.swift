import AuthCrypto

/// Single-use app tokens: proof that app verification (the proof-of-work page, or an external
/// verifier) succeeded. Random, stored hashed, 2-minute life, bound to project, API key and app.
public struct AppTokens {
    public static let lifetime: Millis = 120_000
    public static let prefix = "ghat1."

    public let store: any AppTokenStore
    public let clock: any Clock
    public let random: any RandomSource

    public init(store: any AppTokenStore, clock: any Clock, random: any RandomSource) {
        self.store = store; self.clock = clock; self.random = random
    }

    static func hash(_ token: String) -> [UInt8] { Digest.sha256(token) }

    /// Mints a token for `project`/`apiKey`/`app`.
    public func mint(project: String, apiKey: String, app: String) throws -> String {
        let token = AppTokens.prefix + random.token(bytes: 32)
        let now = clock.now()
        try store.insertAppToken(AppTokenRecord(tokenHash: AppTokens.hash(token), projectID: project, apiKey: apiKey, appID: app,
                                                expiresAt: now + AppTokens.lifetime), at: now)
        return token
    }

    /// Consumes a token once. Unknown, reused, expired or bound elsewhere →
    /// `CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED|MALFORMED`.
    /// `apiKey`: nil skips the key binding (hosted pages of the same project). `app`: the app
    /// the token must have been minted for (`web` or a registered bundle id / package).
    public func consume(_ token: String, project: String, apiKey: String?, app: String) throws {
        guard token.hasPrefix(AppTokens.prefix), token.utf8.count < 200 else {
            throw AuthError(.captchaCheckFailed, "Recaptcha verification failed - MALFORMED")
        }
        guard let rec = try store.consumeAppToken(hash: AppTokens.hash(token), now: clock.now()) else {
            throw AuthError(.captchaCheckFailed, "Recaptcha verification failed - EXPIRED")
        }
        guard rec.projectID == project, apiKey == nil || rec.apiKey.isEmpty || rec.apiKey == apiKey, rec.appID == app else {
            throw AuthError(.captchaCheckFailed, "Recaptcha verification failed - MALFORMED")
        }
    }
}
