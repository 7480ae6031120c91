import AuthCrypto

/// What an external verifier's `siteverify` answered (reCAPTCHA, hCaptcha and Turnstile share
/// this shape: `success`, `hostname`, `error-codes`, and for reCAPTCHA v3 `score` and `action`).
public struct ExternalVerdict: Sendable, Equatable {
    public var success: Bool
    public var hostname: String?
    public var score: Double?
    public var action: String?
    public var errorCodes: [String]

    public init(success: Bool, hostname: String? = nil, score: Double? = nil, action: String? = nil, errorCodes: [String] = []) {
        self.success = success; self.hostname = hostname; self.score = score; self.action = action; self.errorCodes = errorCodes
    }
}

/// Port to an external verifier's `siteverify` endpoint (implemented over HTTPS in Delivery).
/// Throws on transport failures; a refusal is a verdict with `success == false`. `siteKey` is
/// passed only to verifiers that check it (hCaptcha).
public protocol ExternalVerifying: Sendable {
    func siteverify(url: String, secret: String, response: String, remoteAddress: String?, siteKey: String?) throws -> ExternalVerdict
}

/// Used when no transport is wired in: every external check fails closed.
public struct UnavailableExternalVerifier: ExternalVerifying {
    public init() {}
    public func siteverify(url: String, secret: String, response: String, remoteAddress: String?, siteKey: String?) throws -> ExternalVerdict {
        throw PortError("external verifier", "no siteverify transport configured")
    }
}

extension AppVerification {
    public static let maxExternalResponseLength = 8192
    /// External responses are single use at the provider; Gatehouse remembers them this long too.
    public static let externalReplayWindow: Millis = 600_000

    /// Redeems an external widget's response: `siteverify` with the project's secret, then the
    /// same single-use app token as the proof of work. `expectedHostname`: the host the page was
    /// served on (a verdict for another site is refused).
    public func redeemExternal(response: String, project: ProjectSettings, apiKey: String?, app: String, remoteAddress: String,
                               expectedHostname: String?, verifier: any ExternalVerifying) throws -> String {
        let policy = project.appVerification
        guard policy.provider != .pow, let url = policy.effectiveVerifyURL, let secret = policy.secret else {
            throw AuthError(.operationNotAllowed, "This project verifies apps with a proof of work.")
        }
        guard !response.isEmpty else { throw AuthError(.missingAppCredential, "Missing verifier response.") }
        guard response.utf8.count <= AppVerification.maxExternalResponseLength else {
            throw AuthError(.captchaCheckFailed, "External verification failed - MALFORMED")
        }
        try Limits(store: store, clock: clock).hit(AppVerification.redemptionRuleIP(policy), client: project.client(remoteAddress),
                                                   scope: project.id)
        let verdict: ExternalVerdict
        do {
            verdict = try verifier.siteverify(url: url, secret: secret, response: response, remoteAddress: remoteAddress,
                                              siteKey: policy.provider == .hcaptcha ? policy.siteKey : nil)
        } catch {
            throw AuthError(.internalError, "siteverify at \(url) failed: \(error)")
        }
        guard verdict.success else {
            let reason = verdict.errorCodes.first.map { $0.uppercased().replacingDashes } ?? "INVALID"
            throw AuthError(.captchaCheckFailed, "External verification failed - " + reason)
        }
        if let score = verdict.score, score < policy.minScore {
            throw AuthError(.captchaCheckFailed, "External verification failed - LOW_SCORE")
        }
        if let expected = expectedHostname, let host = verdict.hostname, !host.isEmpty, host.lowercased() != expected.lowercased() {
            throw AuthError(.captchaCheckFailed, "External verification failed - HOSTNAME")
        }
        let now = clock.now()
        return try store.transaction {
            guard try store.markChallengeUsed(id: Digest.sha256("external\n" + response), project: project.id,
                                              expiresAt: now + AppVerification.externalReplayWindow, now: now) else {
                throw AuthError(.captchaCheckFailed, "External verification failed - REPLAYED")
            }
            return try AppTokens(store: store, clock: clock, random: random).mint(project: project.id, apiKey: apiKey ?? "", app: app)
        }
    }
}

extension String {
    var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }
}
