public import AuthCrypto
import JSONValue

/// A service account whose custom tokens a project accepts: its email (the token's `iss` and
/// `sub`) and its public keys, each with the key id the Admin SDKs put in the header (nil: any).
public struct CustomTokenSigner: Sendable, Equatable {
    public var serviceAccount: String
    public var keys: [(kid: String?, key: RSAPublicKey)]
    public init(serviceAccount: String, keys: [(kid: String?, key: RSAPublicKey)]) {
        self.serviceAccount = serviceAccount; self.keys = keys
    }

    /// The same account with the same keys (by key id and modulus).
    public static func == (a: CustomTokenSigner, b: CustomTokenSigner) -> Bool {
        a.serviceAccount == b.serviceAccount && a.keys.count == b.keys.count
            && zip(a.keys, b.keys).allSatisfy { $0.kid == $1.kid && (try? $0.key.modulus()) == (try? $1.key.modulus()) }
    }
}

/// Custom tokens as the Admin SDKs' `create_custom_token` mints them (firebase-wire.md
/// `verifyCustomToken`): an RS256 JWT signed with a service account's key, `iss` = `sub` = its
/// email, `aud` the Identity Toolkit audience, living at most an hour, with `uid` and optional
/// developer `claims`. Dev mode also takes unsigned ones (`alg: none`), as the emulator does.
public enum CustomTokens {
    public static let audience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
    public static let maxLifetime: Int64 = 3600
    public static let maxLength = 8 * 1024

    public struct Verified: Sendable, Equatable {
        public let uid: String
        /// The developer claims as JSON text (nil: none).
        public let developerClaims: String?
    }

    /// The token's uid and claims, or `INVALID_CUSTOM_TOKEN` with what was wrong (never the token).
    public static func verify(_ token: String, project: ProjectSettings, now: Int64) throws -> Verified {
        func invalid(_ why: String) -> AuthError { AuthError(.invalidCustomToken, why) }
        guard let parts = JWS.parse(token, maxLength: maxLength),
              let header = try? JSONParser(TokenService.headerLimits).parse(parts.header), case .object = header,
              let claims = try? JSONParser(TokenService.claimsLimits).parse(parts.payload), case .object = claims else {
            throw invalid("Invalid assertion format")
        }
        let alg = header["alg"]?.stringValue
        if alg == "none" {
            guard project.devMode, parts.signature.isEmpty else { throw invalid("Unsigned custom tokens are accepted in dev mode only") }
        } else {
            guard alg == "RS256" else { throw invalid("Unsupported signing algorithm") }
            guard let issuer = claims["iss"]?.stringValue, claims["sub"]?.stringValue == issuer,
                  let signer = project.customTokenSigners.first(where: { $0.serviceAccount == issuer }) else {
                throw AuthError(.credentialMismatch, "The custom token was not signed by a service account of this project")
            }
            let kid = header["kid"]?.stringValue
            let candidates = signer.keys.filter { $0.kid == nil || kid == nil || $0.kid == kid }
            guard candidates.contains(where: { $0.key.verifyRS256(signature: parts.signature, data: parts.signingInput) }) else {
                throw invalid("Invalid signature")
            }
            guard let iat = claims["iat"]?.int64Value, let exp = claims["exp"]?.int64Value,
                  TokenService.plausibleTimes.contains(iat), TokenService.plausibleTimes.contains(exp) else {
                throw invalid("Missing iat or exp")
            }
            guard exp > iat, exp - iat <= maxLifetime else { throw invalid("The token must expire within an hour of being issued") }
            guard exp > now else { throw invalid("Token expired") }
            guard iat <= now + 300 else { throw invalid("Token used before issued") }
        }
        guard claims["aud"]?.stringValue == audience else {
            throw invalid("Invalid audience. Firebase ID tokens and third-party tokens cannot be used with signInWithCustomToken")
        }
        if claims["tenant_id"] != nil { throw AuthError(.unsupportedTenantOperation) }
        guard let uid = claims["uid"]?.stringValue ?? claims["user_id"]?.stringValue else { throw AuthError(.missingIdentifier) }
        guard !uid.isEmpty, uid.utf8.count <= 128 else { throw invalid("The uid must be 1 to 128 characters") }
        // The same rule as every other uid (no control characters).
        do { try AccountRules.checkLocalID(uid) } catch { throw invalid("The uid may not contain control characters") }
        var developer: String?
        if let extra = claims["claims"] {
            guard case .object = extra else { throw AuthError(.invalidClaims) }
            developer = try CustomClaims.validate(extra.serialized())
        }
        return Verified(uid: uid, developerClaims: developer)
    }
}

/// `accounts:signInWithCustomToken`: the token's uid signs in, its account made on first use
/// (no provider: `sign_in_provider` is `custom`). The developer claims go into this sign-in's ID
/// tokens and stay with its refresh token. A second factor is not asked for (as in Firebase: the
/// server that minted the token vouched for the user).
public struct CustomTokenSignIn {
    /// The device signing in, for the refresh tokens this flow issues (`SignInTokens.device`).
    public var device: SignInDevice?
    public let project: ProjectSettings
    public let store: any AccountStore & SessionStore & SigningKeyStore & AuditStore
    public let tokens: TokenService
    public let random: any RandomSource

    public init(project: ProjectSettings, store: any AccountStore & SessionStore & SigningKeyStore & AuditStore, tokens: TokenService,
                random: any RandomSource) {
        self.project = project; self.store = store; self.tokens = tokens; self.random = random
    }

    public struct Result: Sendable {
        public let tokens: IssuedTokens
        public let localID: String
        public let isNewUser: Bool
    }

    public func signIn(token: String?, remoteAddress: String?) throws -> Result {
        guard let token, !token.isEmpty else { throw AuthError(.missingCustomToken) }
        let verified = try CustomTokens.verify(token, project: project, now: tokens.clock.nowSeconds)
        let now = tokens.clock.now()
        let issuer = SignInTokens(tokens: tokens, store: store, random: random, device: device)
        let (pending, isNew): (SignInTokens.Pending, Bool) = try store.transaction {
            var isNew = false
            var account: Account
            if let existing = try store.account(project: project.id, localID: verified.uid) {
                account = existing
                if account.disabled { throw AuthError(.userDisabled) }
            } else {
                account = Account(projectID: project.id, localID: verified.uid, createdAt: now)
                isNew = true
            }
            account.lastLoginAt = now
            account.lastRefreshAt = now
            if isNew { try store.insertAccount(account) } else { try store.updateAccount(account) }
            try store.audit(AuditEvent(projectID: project.id, event: isNew ? .customTokenSignUp : .customTokenSignIn,
                                       localID: account.localID, remoteAddress: remoteAddress), at: now)
            return (try issuer.record(for: account, provider: "custom", authTime: now / 1000, developerClaims: verified.developerClaims), isNew)
        }
        return Result(tokens: try issuer.finish(pending), localID: verified.uid, isNewUser: isNew)
    }
}
