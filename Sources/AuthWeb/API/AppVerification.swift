import AuthEngine
import HTTP
import JSONValue

/// `GET /__/auth/challenge` (a proof-of-work challenge in ALTCHA's v1 format), `POST
/// /__/auth/challenge` (a solution, or an external widget's response → single-use app token, and
/// with the verification page's parameters the server-computed redirect), and the reCAPTCHA
/// parameter endpoints `v1/recaptchaParams` and `v2/recaptchaConfig` (firebase-wire.md §2.14).
enum AppVerificationAPI {
    static let noStore: [(String, String)] = [("Cache-Control", "no-store")]

    /// The API key a challenge call names: the body's `apiKey` (a solution's), else the query's
    /// `apiKey` or `key`, for GET and POST alike (an ALTCHA widget's form action may carry it).
    static func apiKey(_ ctx: Context) -> String? {
        ctx.nonEmpty("apiKey") ?? ctx.request.query("apiKey") ?? ctx.request.query("key")
    }

    /// `apiKey` (optional: it selects the project and the per-key difficulty).
    static func challenge(_ ctx: inout Context) throws -> Response {
        try bind(&ctx, apiKey: apiKey(ctx))
        let policy = ctx.project.appVerification
        if policy.provider != .pow {
            return .json(.obj(("provider", policy.provider.rawValue), ("siteKey", policy.siteKey),
                              ("version", policy.provider == .recaptcha ? policy.recaptchaVersion : nil)), headers: noStore)
        }
        let c = try ctx.appVerification.issueChallenge(project: ctx.project, apiKey: ctx.apiKey, remoteAddress: ctx.request.remoteAddress)
        return .json(c.json, headers: noStore)
    }

    /// Body (JSON, or form-encoded as ALTCHA's widget posts it): `payload` or `altcha` (base64
    /// ALTCHA v1 solution) or `response` (external widget), optional
    /// `apiKey`, `app`, or the handler's `eventId` + `ibi`|`apn` + `clientId`|`appId`.
    /// Answer: `{token}`, plus `redirect` when the handler's parameters were given.
    static func solve(_ ctx: inout Context) throws -> Response {
        try bind(&ctx, apiKey: apiKey(ctx))
        let callback = try handlerCallback(ctx)
        let app = try callback?.app ?? requestedApp(ctx)
        let flow = ctx.appVerification
        let token: String
        if ctx.project.appVerification.provider == .pow {
            // `altcha`: the field ALTCHA's widget submits its solution in (a form post).
            token = try flow.redeem(payload: ctx.nonEmpty("payload") ?? ctx.string("altcha") ?? "", project: ctx.project, apiKey: ctx.apiKey, app: app,
                                    remoteAddress: ctx.request.remoteAddress)
        } else {
            token = try flow.redeemExternal(response: ctx.string("response") ?? "", project: ctx.project, apiKey: ctx.apiKey, app: app,
                                            remoteAddress: ctx.request.remoteAddress, expectedHostname: hostname(ctx.origin),
                                            verifier: ctx.app.externalVerifier)
        }
        return .json(.obj(("token", token), ("redirect", callback?.successURL(authority: authority(ctx.origin), token: token))),
                     headers: noStore)
    }

    /// What `recaptchaParams` answers when no reCAPTCHA key is configured: fixed values that say
    /// what they are, so clients that read the fields (as they do from the Firebase emulator)
    /// find them, and nobody mistakes them for a key (docs/configuration-app-verification.md).
    static let placeholderSiteKey = "gatehouse-no-recaptcha-site-key"
    static let placeholderStoken = "gatehouse-no-recaptcha-stoken"

    /// `GET v1/recaptchaParams`: the reCAPTCHA site key when reCAPTCHA is the verifier, else the
    /// placeholders; `recaptchaStoken` is always a placeholder (Gatehouse issues no secure tokens).
    static func recaptchaParams(_ ctx: inout Context) throws -> Response {
        let policy = ctx.project.appVerification
        let siteKey = policy.provider == .recaptcha ? policy.siteKey : nil
        return .json(.obj(("kind", "identitytoolkit#GetRecaptchaParamResponse"),
                          ("recaptchaSiteKey", siteKey ?? placeholderSiteKey), ("recaptchaStoken", placeholderStoken)))
    }

    /// The key `recaptchaConfig` names when the proof of work verifies apps: it is no reCAPTCHA
    /// key, but the web SDK keeps a config only with one, and asks it before every phone send
    /// otherwise; its reCAPTCHA Enterprise path (email links, after `MISSING_RECAPTCHA_TOKEN`)
    /// needs one to call `grecaptcha.enterprise`, which Gatehouse's verifier.js provides.
    static let proofOfWorkKey = "gatehouse-proof-of-work"

    /// `GET v2/recaptchaConfig`: both providers `OFF` unless reCAPTCHA is configured with an
    /// enforcement state (so the web SDK asks its application verifier, e.g. verifier.js, for
    /// phone sends); `recaptchaKey` splits into the 4 parts iOS expects.
    static func recaptchaConfig(_ ctx: inout Context) throws -> Response {
        let policy = ctx.project.appVerification
        let recaptcha = policy.provider == .recaptcha ? policy.siteKey : nil
        let phone = recaptcha == nil ? AppVerificationPolicy.Enforcement.off : policy.enforcement
        let key = recaptcha ?? (policy.provider == .pow ? proofOfWorkKey : nil)
        return .json(.obj(
            ("recaptchaKey", key.map { "projects/\(ctx.project.id)/keys/\($0)" }),
            ("recaptchaEnforcementState", JSON.array([
                .obj(("provider", "EMAIL_PASSWORD_PROVIDER"), ("enforcementState", "OFF")),
                .obj(("provider", "PHONE_PROVIDER"), ("enforcementState", phone.rawValue)),
            ])),
            ("useSmsBotScore", false), ("useSmsTollFraudProtection", false)))
    }

    // MARK: - Helpers

    /// Selects the project of `apiKey` (else the default project); an unknown key is refused.
    static func bind(_ ctx: inout Context, apiKey: String?) throws {
        guard let apiKey, !apiKey.isEmpty else { return }
        guard apiKey.utf8.count <= 200, let p = ctx.app.settings.project(apiKey: apiKey) else { throw WireFailure.invalidAPIKey }
        ctx.project = p
        ctx.apiKey = apiKey
    }

    /// The verification page's target, when its parameters are in the body.
    static func handlerCallback(_ ctx: Context) throws -> AppCallback? {
        guard ctx.string("eventId") != nil || ctx.string("ibi") != nil || ctx.string("apn") != nil else { return nil }
        do {
            return try AppCallback.resolve(project: ctx.project, ibi: ctx.string("ibi"), apn: ctx.string("apn"),
                                           clientID: ctx.string("clientId"), appID: ctx.string("appId"), eventID: ctx.string("eventId"))
        } catch {
            throw AuthError(.invalidArgument, VerifyAppPage.problemDetail(error))
        }
    }

    /// `app` of a plain redemption: `web` (hosted pages) or a registered bundle id / package.
    static func requestedApp(_ ctx: Context) throws -> String {
        let app = ctx.nonEmpty("app") ?? "web"
        guard app == "web" || ctx.project.iosApp(bundleID: app) != nil || ctx.project.androidApp(packageName: app) != nil else {
            throw AuthError(.invalidArgument, "app is neither \"web\" nor a registered iOS bundle id or Android package.")
        }
        return app
    }

    /// `host[:port]` of an origin.
    static func authority(_ origin: String) -> String {
        if let r = origin.firstRange(of: "://") { return String(origin[r.upperBound...]) }
        return origin
    }

    /// The host of an origin, without port (IPv6 brackets removed).
    static func hostname(_ origin: String) -> String {
        let a = authority(origin)
        if a.hasPrefix("["), let end = a.firstIndex(of: "]") { return String(a[a.index(after: a.startIndex)..<end]) }
        return String(a.split(separator: ":", maxSplits: 1).first ?? Substring(a))
    }
}

extension Context {
    var appVerification: AppVerification { AppVerification(store: store, clock: app.clock, random: app.random) }
}
