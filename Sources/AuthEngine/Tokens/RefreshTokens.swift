import AuthCrypto
/// Secure Token `v1/token` with `grant_type=refresh_token` (firebase-wire.md §2.10, §3.2, §3.3):
/// every use rotates the refresh token; a rotated token presented again outside the grace
/// window revokes its whole family (it was stolen, or a client raced itself for too long).
///
/// A token has at most one successor. It is derived from the token itself under a server secret
/// (`successor(of:key:)`), so a retry inside the grace window (a client that lost the answer, or
/// raced itself) is answered with the same successor, recomputed, never a second one: replays
/// cannot fan a family out, and only hashes are stored.
public struct RefreshTokens {
    /// What a successful refresh returns.
    public struct Result: Sendable, Equatable {
        public let idToken: String
        public let refreshToken: String
        public let expiresIn: Int64
        public let localID: String
    }

    public let store: any AccountStore & SessionStore & SigningKeyStore & AuditStore & SecretStore
    public let tokens: TokenService
    public let random: any RandomSource

    public init(store: any AccountStore & SessionStore & SigningKeyStore & AuditStore & SecretStore, tokens: TokenService, random: any RandomSource) {
        self.store = store; self.tokens = tokens; self.random = random
    }

    private enum Outcome {
        case rotated(Account, RefreshTokenRecord, SecondFactor?)
        case reused(familyID: String, localID: String)
    }

    /// Exchanges `refreshToken` for a new ID token and a new refresh token.
    /// - `grantType` missing → `MISSING_GRANT_TYPE`; not `refresh_token` → `INVALID_GRANT_TYPE`.
    /// - token missing → `MISSING_REFRESH_TOKEN`; unknown or of another project → `INVALID_REFRESH_TOKEN`.
    /// - family revoked, or issued before the user's `validSince`, or reused outside the grace
    ///   window, or unused for `idleTimeoutSeconds`, or older than `lifetimeSeconds` since its
    ///   sign-in (0: no limit), or bound to a second factor the user no longer has →
    ///   `TOKEN_EXPIRED`; user deleted → `USER_NOT_FOUND`; disabled → `USER_DISABLED`.
    public func refresh(grantType: String?, refreshToken: String?, project: String, graceSeconds: Int64,
                        idleTimeoutSeconds: Int64 = 0, lifetimeSeconds: Int64 = 0) throws -> Result {
        guard let grantType, !grantType.isEmpty else { throw AuthError(.missingGrantType) }
        guard grantType == "refresh_token" else { throw AuthError(.invalidGrantType) }
        guard let refreshToken, !refreshToken.isEmpty else { throw AuthError(.missingRefreshToken) }
        guard refreshToken.utf8.count <= 512 else { throw AuthError(.invalidRefreshToken) }
        let hash = SignInTokens.hash(refreshToken: refreshToken)
        let secret = try store.secret(named: "refresh")
            ?? store.insertSecretIfAbsent(named: "refresh", value: random.bytes(32), at: tokens.clock.now())
        let next = RefreshTokens.successor(of: refreshToken, key: secret)
        let nextHash = SignInTokens.hash(refreshToken: next)

        var reusedAt: Millis = 0
        let outcome: Outcome = try store.transaction {
            guard let seen = try store.refreshToken(hash: hash), seen.projectID == project else {
                throw AuthError(.invalidRefreshToken)
            }
            // The user's row first: a revocation, a disable or a factor change holds it while it
            // writes, so this refresh either commits before it (and its successor is revoked with
            // the rest) or waits and reads, below, what it wrote. The clock is read after the
            // wait, so a request that waited is not taken for a reuse from the past.
            let locked = try store.account(project: project, localID: seen.localID)
            guard let record = try store.refreshToken(hash: hash) else { throw AuthError(.invalidRefreshToken) }
            let now = tokens.clock.now()
            reusedAt = now
            if record.revokedAt != nil { throw AuthError(.tokenExpired) }
            if let rotated = record.rotatedAt, now - rotated > graceSeconds * 1000 || rotated - now > graceSeconds * 1000 {
                try store.revokeRefreshFamily(record.familyID, project: record.projectID, localID: record.localID, at: now)
                return .reused(familyID: record.familyID, localID: record.localID)
            }
            guard var account = locked else { throw AuthError(.userNotFound) }
            if account.disabled { throw AuthError(.userDisabled) }
            if record.createdAt / 1000 < account.validSince { throw AuthError(.tokenExpired) }
            if idleTimeoutSeconds > 0, record.rotatedAt == nil, now - record.createdAt > idleTimeoutSeconds * 1000 {
                throw AuthError(.tokenExpired)
            }
            if lifetimeSeconds > 0, now / 1000 - record.authTime > lifetimeSeconds { throw AuthError(.tokenExpired) }
            let factor = record.secondFactor.map { SecondFactor(identifier: $0) }
            if !SensitiveChange.factorStillEnrolled(factor, in: account) { throw AuthError(.tokenExpired) }
            // First use rotates and stores the successor; a retry inside the grace window gets the
            // same successor again, as long as it is itself still unused.
            if record.rotatedAt == nil, try store.markRefreshTokenRotated(hash: hash, at: now) {
                try store.insertRefreshToken(RefreshTokenRecord(
                    tokenHash: nextHash, familyID: record.familyID, projectID: project,
                    localID: record.localID, provider: record.provider, authTime: record.authTime, createdAt: now,
                    secondFactor: record.secondFactor, developerClaims: record.developerClaims,
                    // The family's device: the account page lists where a sign-in came from, not who refreshed last.
                    userAgent: record.userAgent, network: record.network))
            } else {
                guard let successor = try store.refreshToken(hash: nextHash), successor.familyID == record.familyID,
                      successor.rotatedAt == nil, successor.revokedAt == nil else {
                    try store.revokeRefreshFamily(record.familyID, project: record.projectID, localID: record.localID, at: now)
                    return .reused(familyID: record.familyID, localID: record.localID)
                }
            }
            account.lastRefreshAt = now
            try store.updateAccount(account)
            return .rotated(account, record, factor)
        }

        switch outcome {
        case let .rotated(account, record, factor):
            // Signed after the commit, as a sign-in's token is: the RSA signature is most of a
            // refresh's work, and under SQLite's write lock it would make every refresh wait for
            // every other. A revocation committed meanwhile is no different from one committed
            // a moment after this answer: the successor it revokes is already stored.
            let idToken = try tokens.mintIDToken(for: account, provider: record.provider, store: store, authTime: record.authTime,
                                                 secondFactor: factor, developerClaims: record.developerClaims)
            return Result(idToken: idToken, refreshToken: next, expiresIn: TokenService.idTokenLifetime, localID: account.localID)
        case let .reused(family, localID):
            tokens.log.warning("refresh token reuse detected: family \(family.prefix(6))… of a user in \(project) revoked")
            try? store.audit(AuditEvent(projectID: project, event: .refreshTokenReuse, localID: localID,
                                        detail: "family revoked", outcome: "refused"), at: reusedAt)
            throw AuthError(.tokenExpired)
        }
    }

    /// The one successor of `token`: HMAC-SHA-256 under the server's refresh secret, so it is
    /// unguessable without the token and recomputable from it.
    static func successor(of token: String, key: [UInt8]) -> String {
        SignInTokens.refreshPrefix + Base64URL.encode(Digest.hmacSHA256(key: key, "refresh-successor\n" + token))
    }
}
