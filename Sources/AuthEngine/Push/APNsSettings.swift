/// How one registered iOS app's silent pushes reach Apple (configuration `ios_apps[].apns`):
/// token-based authentication with the team's APNs auth key. The key itself is read by delivery;
/// the engine only needs to know that pushes can be sent.
public struct APNsSettings: Sendable, Equatable {
    /// The team the key belongs to (`iss` of the provider token).
    public var teamID: String
    /// The key's id (`kid` of the provider token), 10 characters.
    public var keyID: String
    /// The `.p8` file: the key as an unencrypted PKCS#8 PEM, EC on P-256.
    public var keyFile: String
    /// Replace Apple's gateways (tests, an outbound proxy). Outside dev mode a host that is not
    /// Apple's is refused unless `allowCustomGateway`.
    public var gateway: String?
    public var sandboxGateway: String?
    /// PEM bundle of the certificate authorities a custom gateway is checked against.
    public var caFile: String?
    public var allowCustomGateway = false

    public static let productionGateway = "https://api.push.apple.com"
    public static let developmentGateway = "https://api.sandbox.push.apple.com"
    /// Apple's gateway hosts (the second development name is Apple's older one).
    public static let appleHosts: Set<String> = ["api.push.apple.com", "api.sandbox.push.apple.com", "api.development.push.apple.com"]

    public init(teamID: String, keyID: String, keyFile: String, gateway: String? = nil, sandboxGateway: String? = nil,
                caFile: String? = nil, allowCustomGateway: Bool = false) {
        self.teamID = teamID; self.keyID = keyID; self.keyFile = keyFile; self.gateway = gateway
        self.sandboxGateway = sandboxGateway; self.caFile = caFile; self.allowCustomGateway = allowCustomGateway
    }

    /// The gateway a push goes to: the development one for apps built with the sandbox
    /// environment (`isSandbox`), else production.
    public func gatewayURL(sandbox: Bool) -> String {
        let url = sandbox ? (sandboxGateway ?? gateway ?? APNsSettings.developmentGateway) : (gateway ?? APNsSettings.productionGateway)
        var trimmed = url
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed
    }

    /// The host of an `https://host[:port][/…]` URL, lower-cased; nil for anything else.
    public static func host(of url: String) -> String? {
        guard url.hasPrefix("https://") else { return nil }
        let rest = url.dropFirst("https://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.hasPrefix("[") { return authority.firstIndex(of: "]").map { String(authority[...$0]).lowercased() } }
        let host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return host.isEmpty || host.contains("@") ? nil : host.lowercased()
    }
}

/// Silent-push app verification policy of a project (gatehouse.md "APNs silent push").
public struct PushPolicy: Sendable, Equatable {
    /// How long a receipt + secret pair may be reused by its app (the iOS SDK keeps it in the
    /// keychain and reuses it until the server refuses it).
    public var receiptLifetimeSeconds: Int64 = 3600
    /// Sends one pair may start.
    public var sendsPerReceipt = 5
    /// `suggestedTimeout`: how long the SDK waits for the push before it falls back to the page.
    public var suggestedTimeoutSeconds = 5
    /// `verifyIosClient` calls per client network per hour (both tiers of `ClientAddress`).
    public var verificationsPerIPPerHour = 30
    /// Pushes to one device token per hour: whoever knows a token cannot flood that device.
    public var pushesPerDevicePerHour = 10
    public init() {}
}
