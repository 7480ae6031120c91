import AuthCrypto

/// App verification (gatehouse.md "App verification page", firebase-wire.md §4.4): issues
/// HMAC-signed proof-of-work challenges (`GET /__/auth/challenge`), redeems solutions once
/// (`POST /__/auth/challenge`) and mints the single-use app token that `sendVerificationCode`
/// accepts as `recaptchaToken`. The HMAC key lives in the `SecretStore`, shared by instances.
public struct AppVerification {
    public typealias Store = AppVerificationStore & AppTokenStore & LimitStore & SecretStore

    /// Name of the HMAC key in the secret store.
    public static let keyName = "appverify.hmac"
    /// A challenge whose `expires` lies further ahead than this was not issued by a sane policy.
    public static let maxLifetimeSeconds: Int64 = 3600
    /// Tolerated clock difference between instances sharing one store.
    public static let clockSkewSeconds: Int64 = 30

    public let store: any Store
    public let clock: any Clock
    public let random: any RandomSource

    public init(store: any Store, clock: any Clock, random: any RandomSource) {
        self.store = store; self.clock = clock; self.random = random
    }

    /// Why a solution was refused; the wire message is `CAPTCHA_CHECK_FAILED : … - <reason>`.
    public enum Failure: String, Sendable {
        case malformed = "MALFORMED", invalid = "INVALID", expired = "EXPIRED", replayed = "REPLAYED", scope = "SCOPE"

        public var error: AuthError { AuthError(.captchaCheckFailed, "Proof of work verification failed - " + rawValue) }
    }

    /// The shared HMAC key, created on first use (first writer wins across instances).
    public func key() throws -> [UInt8] {
        if let k = try store.secret(named: AppVerification.keyName) { return k }
        return try store.insertSecretIfAbsent(named: AppVerification.keyName, value: random.bytes(32), at: clock.now())
    }

    /// Binds a challenge to the project and API key it was issued for (not secret: the salt is
    /// public; the signature keeps it from being changed).
    public static func scope(project: String, apiKey: String?) -> String {
        String(Hex.encode(Digest.sha256("gatehouse.appverify.scope\n" + project + "\n" + (apiKey ?? ""))).prefix(16))
    }

    /// Issues a challenge for `project` (and `apiKey` when given), its difficulty set by the
    /// caller's recent rate.
    public func issueChallenge(project: ProjectSettings, apiKey: String?, remoteAddress: String) throws -> PowChallenge {
        let policy = project.appVerification
        guard policy.provider == .pow else {
            throw AuthError(.operationNotAllowed, "This project verifies apps with \(policy.provider.rawValue), not a proof of work.")
        }
        let maxNumber = try nextDifficulty(policy, project: project.id, apiKey: apiKey, client: project.client(remoteAddress))
        return PowChallenge.make(key: try key(), nonce: random.bytes(12), number: uniform(upTo: maxNumber), maxNumber: maxNumber,
                                 expiresAt: clock.nowSeconds + policy.challengeLifetimeSeconds,
                                 scope: AppVerification.scope(project: project.id, apiKey: apiKey))
    }

    /// Checks a solution without consuming it: shape, signature and hash, expiry, scope.
    /// Returns the challenge's expiry (ms) on success.
    public func check(_ payload: String, project: String?, apiKey: String?) throws -> Millis {
        guard let solution = PowSolution(payload: payload), let params = solution.saltParameters else {
            throw Failure.malformed.error
        }
        guard solution.isAuthentic(key: try key()) else { throw Failure.invalid.error }
        let now = clock.nowSeconds
        guard params.expires > now else { throw Failure.expired.error }
        guard params.expires <= now + AppVerification.maxLifetimeSeconds + AppVerification.clockSkewSeconds else {
            throw Failure.invalid.error
        }
        if let scope = params.scope, let project {
            guard Digest.constantTimeEqual(scope, AppVerification.scope(project: project, apiKey: apiKey)) else {
                throw Failure.scope.error
            }
        }
        return params.expires * 1000
    }

    /// Redeems a solution once and mints an app token bound to `project`, `apiKey` and `app`.
    /// Every submission counts against the caller's IP (`TOO_MANY_ATTEMPTS_TRY_LATER` past it).
    public func redeem(payload: String, project: ProjectSettings, apiKey: String?, app: String, remoteAddress: String) throws -> String {
        let policy = project.appVerification
        guard policy.provider == .pow else {
            throw AuthError(.operationNotAllowed, "This project verifies apps with \(policy.provider.rawValue), not a proof of work.")
        }
        guard !payload.isEmpty else { throw AuthError(.missingAppCredential, "Missing proof of work payload.") }
        try Limits(store: store, clock: clock).hit(AppVerification.redemptionRuleIP(policy), client: project.client(remoteAddress),
                                                   scope: project.id)
        let expiresAt = try check(payload, project: project.id, apiKey: apiKey)
        let id = PowSolution(payload: payload)?.challengeID ?? []
        return try store.transaction {
            guard try store.markChallengeUsed(id: id, project: project.id, expiresAt: expiresAt, now: clock.now()) else {
                throw Failure.replayed.error
            }
            return try AppTokens(store: store, clock: clock, random: random).mint(project: project.id, apiKey: apiKey ?? "", app: app)
        }
    }

    /// A uniform integer in `0...upper` from the CSPRNG (rejection sampling, no modulo bias).
    func uniform(upTo upper: Int) -> Int {
        let n = UInt64(max(0, upper)) + 1
        let limit = UInt64.max - (UInt64.max % n)
        while true {
            let v = random.bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if v < limit { return Int(v % n) }
        }
    }
}
