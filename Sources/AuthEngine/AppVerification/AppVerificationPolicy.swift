/// App verification policy of one project (gatehouse.md "App verification page"): the
/// self-hosted proof of work by default, or an external `siteverify` service. Every number is a
/// default the configuration may change within the bounds `Config` checks.
public struct AppVerificationPolicy: Sendable, Equatable {
    /// Who proves that a human (or at least a paying machine) is on the other side.
    public enum Provider: String, Sendable, CaseIterable {
        /// HMAC-signed SHA-256 proof of work in ALTCHA's v1 format, solved in the browser.
        case pow
        /// Google reCAPTCHA v2 (checkbox/invisible) or v3 (score) `siteverify`.
        case recaptcha
        /// hCaptcha `siteverify`.
        case hcaptcha
        /// Cloudflare Turnstile `siteverify`.
        case turnstile

        /// The provider's public `siteverify` endpoint.
        public var defaultVerifyURL: String? {
            switch self {
            case .pow: return nil
            case .recaptcha: return "https://www.google.com/recaptcha/api/siteverify"
            case .hcaptcha: return "https://api.hcaptcha.com/siteverify"
            case .turnstile: return "https://challenges.cloudflare.com/turnstile/v0/siteverify"
            }
        }
    }

    /// What `v2/recaptchaConfig` reports for PHONE_PROVIDER (firebase-wire.md §2.14).
    public enum Enforcement: String, Sendable, CaseIterable {
        case off = "OFF", audit = "AUDIT", enforce = "ENFORCE"
    }

    public var provider: Provider = .pow
    /// Public key of the external widget (external providers only).
    public var siteKey: String? = nil
    /// Server secret for `siteverify` (external providers only). Never logged.
    public var secret: String? = nil
    /// Overrides the provider's `siteverify` URL (tests, proxies).
    public var verifyURL: String? = nil
    /// reCAPTCHA only: `v2` renders the widget, `v3` runs invisibly and is judged by `minScore`.
    public var recaptchaVersion = "v2"
    /// Lowest acceptable score when the verifier returns one (reCAPTCHA v3).
    public var minScore = 0.5
    /// PHONE_PROVIDER state in `recaptchaConfig`; anything but OFF makes iOS clients use the
    /// reCAPTCHA Enterprise SDK, so it is only meaningful with a reCAPTCHA (Enterprise) key.
    public var enforcement: Enforcement = .off

    /// `maxnumber` of a challenge when the caller is quiet (expected work: half of it): about
    /// 0.65 s in a desktop browser, 47 ms of one core for a native solver (docs/security.md
    /// "Proof of work", measured with bench/appverify/pow_native.sh).
    public var minDifficulty = 250_000
    /// The cap: difficulty doubles with the caller's rate but never exceeds this (about 3.7 s of
    /// one core natively per solution, which only a caller far above the free rate meets).
    public var maxDifficulty = 20_000_000
    /// How long a challenge may be solved and redeemed.
    public var challengeLifetimeSeconds: Int64 = 300
    /// The window over which request rates are counted.
    public var windowSeconds: Int64 = 600
    /// Challenges one IP address gets per window before difficulty starts doubling.
    public var freeChallengesPerIP = 20
    /// Challenges one API key gets per window (all callers together) before difficulty doubles.
    public var freeChallengesPerKey = 1000
    /// Solution (or external response) submissions per IP address per window.
    public var redemptionsPerIP = 100

    public init() {}

    /// The `siteverify` URL in use (nil for the proof of work).
    public var effectiveVerifyURL: String? { verifyURL ?? provider.defaultVerifyURL }
}
