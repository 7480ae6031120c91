import AuthCrypto
/// A registered iOS app: bundle id, team id and the custom URL schemes it may be called back on.
public struct IOSApp: Sendable, Equatable {
    public var bundleID: String
    public var teamID: String
    /// Firebase-style app id (`1:123:ios:abc`): gives the callback scheme `app-1-123-ios-abc`.
    public var appID: String?
    /// OAuth client id (`123.apps.googleusercontent.com`): gives the reversed-client-id scheme.
    public var clientID: String?
    /// Further schemes registered explicitly.
    public var extraSchemes: [String]
    /// Silent pushes (`verifyIosClient`); nil when the app has no APNs auth key configured.
    public var apns: APNsSettings?

    public init(bundleID: String, teamID: String, appID: String? = nil, clientID: String? = nil, extraSchemes: [String] = [],
                apns: APNsSettings? = nil) {
        self.bundleID = bundleID; self.teamID = teamID; self.appID = appID; self.clientID = clientID; self.extraSchemes = extraSchemes
        self.apns = apns
    }

    /// `app-` + app id with every `:` replaced by `-` (firebase-wire.md §4.4).
    public static func scheme(forAppID id: String) -> String { "app-" + String(id.map { $0 == ":" ? "-" : $0 }) }
    /// The client id split on `.`, reversed, re-joined.
    public static func scheme(forClientID id: String) -> String { id.split(separator: ".").reversed().joined(separator: ".") }

    /// Every callback scheme this app may use, lower-cased.
    public var schemes: [String] {
        var out = extraSchemes
        if let appID { out.append(IOSApp.scheme(forAppID: appID)) }
        if let clientID { out.append(IOSApp.scheme(forClientID: clientID)) }
        return out.map { $0.lowercased() }
    }
}

/// A registered Android app.
public struct AndroidApp: Sendable, Equatable {
    public var packageName: String
    public var sha256Fingerprints: [String]
    /// Firebase-style app id (`1:123:android:abc`), optional.
    public var appID: String?
    public var extraSchemes: [String]

    public init(packageName: String, sha256Fingerprints: [String] = [], appID: String? = nil, extraSchemes: [String] = []) {
        self.packageName = packageName; self.sha256Fingerprints = sha256Fingerprints; self.appID = appID; self.extraSchemes = extraSchemes
    }
}

/// Phone sign-in policy (gatehouse.md "Phone sign-in"); every number is a bounded default.
public struct PhonePolicy: Sendable, Equatable {
    public var codeLifetimeSeconds: Int64 = 300          // 5 min, at most 600
    public var maxAttemptsPerSession = 5
    public var failureBudgetPerDay = 20
    public var sendsPerNumberPerHour = 5
    public var sendsPerNumberPerDay = 10
    public var sendsPerIPPerHour = 10
    public var verifyAttemptsPerIPPer5Min = 30
    public var resendAfterSeconds: Int64 = 60
    /// ISO region codes SMS may go to; nil = every region (dev), [] = none.
    public var allowedRegions: [String]? = nil
    /// SMS pumping protection (budgets per destination, automatic holds).
    public var pumping = SMSPumpingPolicy()
    /// The channels a code may go by, in order: the first carries it; the hosted pages offer the
    /// others after the resend delay; the automatic fallback takes the next.
    public var channels: [PhoneChannel] = [.sms]
    /// 0: no automatic fallback. Else, when a code's message is reported undelivered or failed,
    /// dies, or has no delivered receipt this many seconds after it was queued, the next channel
    /// carries a new code for the same session.
    public var fallbackAfterSeconds: Int64 = 0
    public init() {}

    /// The channel after `channel` in `channels`, if any.
    public func channel(after channel: PhoneChannel) -> PhoneChannel? {
        guard let i = channels.firstIndex(of: channel), i + 1 < channels.count else { return nil }
        return channels[i + 1]
    }
}

/// Email-link policy (gatehouse.md "Email-link sign-in").
public struct EmailLinkPolicy: Sendable, Equatable {
    public var linkLifetimeSeconds: Int64 = 1800          // 30 min, 5 min … 24 h
    public var sendsPerAddressPerHour = 5
    public var sendsPerIPPerHour = 20
    public var enabled = true
    public init() {}
}

/// Session-cookie and token policy (gatehouse.md "Tokens, sessions, nginx").
public struct SessionPolicy: Sendable, Equatable {
    public var cookieName = "__Host-gatehouse"
    /// Setting a domain drops the `__Host-` prefix requirement.
    public var cookieDomain: String? = nil
    public var cookieLifetimeSeconds: Int64 = 14 * 86400  // 5 min … 14 days
    public var idleTimeoutSeconds: Int64 = 1800
    public var refreshReuseGraceSeconds: Int64 = 10
    /// A sensitive change needs a sign-in at most this old (`SensitiveChange`).
    public var recentSignInSeconds: Int64 = SensitiveChange.defaultRecentSeconds
    /// A refresh family unused this long ends (0: never). Firebase's never end; 90 days ends the
    /// tokens of lost devices and forgotten copies, and an app in use refreshes hourly.
    public var refreshIdleTimeoutSeconds: Int64 = 90 * 86400
    /// A refresh family ends this long after its sign-in, used or not (0: never, as Firebase).
    public var refreshLifetimeSeconds: Int64 = 0
    public init() {}
}

/// One project served by this deployment.
public struct ProjectSettings: Sendable, Equatable {
    public var id: String
    /// Accepted API keys; in dev mode any non-empty key is accepted.
    public var apiKeys: [String]
    public var devMode: Bool
    /// Hosts allowed in continue URLs (exact host or a `*.example.com` wildcard).
    public var authorizedDomains: [String]
    public var iosApps: [IOSApp]
    public var androidApps: [AndroidApp]
    /// E.164 → fixed 6-digit code; no SMS, no app verification.
    public var testPhoneNumbers: [String: String]
    /// API key → the only origins a browser may call the client API from with it (CORS; like an
    /// API key's HTTP-referrer restriction). A key without a list: the authorized domains' origins.
    public var apiKeyOrigins: [String: [String]] = [:]
    public var defaultLocale: String
    /// The domain used in the SMS origin-bound line (`@domain #code`).
    public var smsOriginDomain: String
    public var phone = PhonePolicy()
    /// The service accounts whose custom tokens sign users in (`custom_token_signers`).
    public var customTokenSigners: [CustomTokenSigner] = []
    public var emailLink = EmailLinkPolicy()
    public var session = SessionPolicy()
    public var appVerification = AppVerificationPolicy()
    public var network = NetworkPolicy()
    /// Phone second factor (firebase-wire.md §2.17, §5.4).
    public var mfa = MFAState.disabled
    /// TOTP second factor (needs `mfa` on as well).
    public var totp = TOTPPolicy()
    /// Silent-push app verification (`verifyIosClient`).
    public var push = PushPolicy()
    /// Passkeys (WebAuthn): sign-in, enrolment, `?require=passkey`.
    public var passkeys = PasskeyPolicy()
    /// The new sign-in notice (`Devices/SignInNotice.swift`); off by default.
    public var signInNotice = SignInNoticePolicy()

    public init(id: String, apiKeys: [String] = [], devMode: Bool = false, authorizedDomains: [String] = [],
                iosApps: [IOSApp] = [], androidApps: [AndroidApp] = [], testPhoneNumbers: [String: String] = [:],
                defaultLocale: String = "en", smsOriginDomain: String = "localhost") {
        self.id = id; self.apiKeys = apiKeys; self.devMode = devMode; self.authorizedDomains = authorizedDomains
        self.iosApps = iosApps; self.androidApps = androidApps; self.testPhoneNumbers = testPhoneNumbers
        self.defaultLocale = defaultLocale; self.smsOriginDomain = smsOriginDomain
    }

    /// The embedded dev default (gatehouse.md "Dev mode").
    public static func devDefault() -> ProjectSettings {
        var p = ProjectSettings(id: "demo-gatehouse", apiKeys: [], devMode: true, authorizedDomains: ["localhost", "127.0.0.1"],
                                iosApps: [IOSApp(bundleID: "com.example.gatehouse.demo", teamID: "DEMOTEAM01",
                                                 appID: "1:123456789:ios:abcdef0123456789")],
                                defaultLocale: "en", smsOriginDomain: "localhost")
        p.phone.allowedRegions = nil
        p.mfa = .enabled
        p.totp.enabled = true
        p.passkeys.enabled = true
        return p
    }

    /// Whether `host` is an authorized domain (case-insensitive; `*.x` matches sub-domains of x).
    public func isAuthorized(host: String) -> Bool {
        let h = host.lowercased()
        return authorizedDomains.contains { d in
            let d = d.lowercased()
            if d.hasPrefix("*.") { return h.hasSuffix(String(d.dropFirst(1))) }
            return h == d
        }
    }

    /// How per-client limits key this request's address.
    public func client(_ remoteAddress: String) -> ClientAddress { ClientAddress(remoteAddress, policy: network) }

    public func iosApp(bundleID: String) -> IOSApp? { iosApps.first { $0.bundleID == bundleID } }
    public func androidApp(packageName: String) -> AndroidApp? { androidApps.first { $0.packageName == packageName } }
}
