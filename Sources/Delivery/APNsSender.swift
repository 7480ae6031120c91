public import AuthCrypto
public import AuthEngine
import JSONValue
import Locking

/// Sends the silent pushes of `verifyIosClient` (outbox channel `push`) to Apple's APNs provider
/// API: HTTP/2, `POST /3/device/<token>`, token-based authentication.
///
/// - One connection per gateway: each gateway URL has one libcurl handle, kept and reused, so
///   pushes share its HTTP/2 connection (Apple treats a connection per push as a denial-of-service
///   attempt). The outbox worker sends one message at a time; the lock only guards the handles
///   against a second caller (the `apns send` probe shares nothing with a serving process).
/// - Provider tokens: an ES256 JWT (`kid` key id, `iss` team id, `iat`) per key, made once and
///   reused for `tokenRenewal` (Apple refuses tokens older than an hour and renewals more often
///   than every 20 minutes), renewed early only when the gateway answers `ExpiredProviderToken`.
/// - Answers: 200 sent; `BadDeviceToken`, `Unregistered` and the other 4xx are permanent (dead,
///   logged with the reason by the worker); `ExpiredProviderToken` renews the token and retries
///   once at once; 429 and 5xx, network errors and timeouts are retried with the worker's backoff.
public final class APNsSender: MessageSender, Sendable {
    /// One registered app that may push: its settings and its loaded auth key.
    public struct App: Sendable {
        public var projectID: String
        public var bundleID: String
        public var settings: APNsSettings
        public var key: ES256PrivateKey
        public init(projectID: String, bundleID: String, settings: APNsSettings, key: ES256PrivateKey) {
            self.projectID = projectID; self.bundleID = bundleID; self.settings = settings; self.key = key
        }
    }

    /// A provider token is reused this long (inside Apple's 20–60 minute window).
    public static let tokenRenewal: Millis = 30 * 60_000

    let apps: [String: App]
    let timeout: Int
    let clock: any Clock
    private struct State {
        var tokens: [String: (jwt: String, issuedAt: Millis)] = [:]
        var handles: [String: Curl] = [:]
    }
    private let state = Locked(State())

    private let log: Log

    public init(apps: [App], timeout: Int = 10, clock: any Clock = SystemClock(), log: Log = Log()) {
        self.log = log
        var table: [String: App] = [:]
        for app in apps { table[APNsSender.appKey(app.projectID, app.bundleID)] = app }
        self.apps = table
        self.timeout = timeout
        self.clock = clock
    }

    static func appKey(_ project: String, _ bundle: String) -> String { project + "|" + bundle }

    public var keepsBody: Bool { false }
    /// Two requests at most (a renewed token's retry), each within the timeout.
    public var timeLimit: Millis { Millis(2 * timeout) * 1000 }

    /// What a push needs besides its body, from the outbox row's metadata.
    public struct Target: Sendable {
        public let bundleID: String
        public let sandbox: Bool
        public let expiresAt: Millis
    }

    public static func target(_ m: OutboxMessage) throws -> Target {
        guard let meta = try? JSONParser().parse(m.metadata), let bundle = meta["bundleId"]?.stringValue else {
            throw PermanentDeliveryError("apns: the message names no app")
        }
        return Target(bundleID: bundle, sandbox: meta["sandbox"]?.boolValue ?? false, expiresAt: meta["expiresAt"]?.int64Value ?? 0)
    }

    public func send(_ m: OutboxMessage) throws {
        let target = try APNsSender.target(m)
        guard let app = apps[APNsSender.appKey(m.projectID, target.bundleID)] else {
            throw PermanentDeliveryError("apns: no APNs auth key is configured for \(target.bundleID) in \(m.projectID)")
        }
        guard IOSClientVerification.deviceToken(m.recipient) != nil else { throw PermanentDeliveryError("apns: not a device token") }
        let answer = try push(m, to: target, app: app)
        try APNsSender.check(answer)
    }

    /// The gateway's answer: status and `reason`.
    public struct Answer: Sendable, Equatable {
        public let status: Int
        public let reason: String?
    }

    /// Posts the push; on `ExpiredProviderToken` renews the provider token and posts once more.
    /// Network failures are `DeliveryFailure` (retried).
    public func push(_ m: OutboxMessage, to target: Target, app: App) throws -> Answer {
        let url = app.settings.gatewayURL(sandbox: target.sandbox) + "/3/device/" + m.recipient
        var answer = try post(url, body: Array(m.body.utf8), target: target, app: app, renew: false)
        if answer.status == 403 && answer.reason == "ExpiredProviderToken" {
            log.info("apns: the provider token of key \(app.settings.keyID) expired early; renewed")
            answer = try post(url, body: Array(m.body.utf8), target: target, app: app, renew: true)
        }
        return answer
    }

    static func check(_ a: Answer) throws {
        let detail = "apns: HTTP \(a.status)" + (a.reason.map { " " + $0 } ?? "")
        switch a.status {
        case 200: return
        case 429, 500...599: throw DeliveryFailure(detail)
        default: throw PermanentDeliveryError(detail)
        }
    }

    func post(_ url: String, body: [UInt8], target: Target, app: App, renew: Bool) throws -> Answer {
        let jwt = try providerToken(app.settings, key: app.key, renew: renew)
        let expiration = max(target.expiresAt / 1000, 0)
        let headers = ["authorization: bearer " + jwt, "apns-topic: " + target.bundleID, "apns-push-type: background",
                       "apns-priority: 5", "apns-expiration: \(expiration)", "content-type: application/json"]
        let gateway = app.settings.gatewayURL(sandbox: target.sandbox)
        return try state.withLock { s -> Answer in
            let curl: Curl
            if let existing = s.handles[gateway] {
                curl = existing
            } else {
                do {
                    curl = try Curl()
                    try curl.useHTTP2()
                    if let ca = app.settings.caFile { try curl.trust(caFile: ca) }
                } catch let e as CurlError { throw DeliveryFailure("apns: \(e)") }
                s.handles[gateway] = curl
            }
            let response: Curl.Response
            do {
                response = try curl.http(method: "POST", url: url, headers: headers, body: body, timeout: timeout)
            } catch let e as CurlError {
                // A broken handle is replaced by the next push (libcurl reconnects either way).
                s.handles[gateway] = nil
                throw DeliveryFailure("apns: \(e)")
            }
            let reason = (try? JSONParser().parse(response.text))?["reason"]?.stringValue
            return Answer(status: response.status, reason: reason)
        }
    }

    /// The provider token of a key, made when missing, older than `tokenRenewal`, or `renew`.
    func providerToken(_ settings: APNsSettings, key: ES256PrivateKey, renew: Bool) throws -> String {
        let id = settings.teamID + "." + settings.keyID
        let now = clock.now()
        return try state.withLock { s -> String in
            if !renew, let t = s.tokens[id], now - t.issuedAt < APNsSender.tokenRenewal, now >= t.issuedAt { return t.jwt }
            let jwt = try APNsSender.makeProviderToken(settings, key: key, issuedAt: now)
            s.tokens[id] = (jwt, now)
            return jwt
        }
    }

    /// `{"alg":"ES256","kid":…}.{"iss":<team>,"iat":<seconds>}`, signed with the auth key.
    public static func makeProviderToken(_ settings: APNsSettings, key: ES256PrivateKey, issuedAt: Millis) throws -> String {
        let header = JSON.obj(("alg", "ES256"), ("kid", settings.keyID)).serialized()
        let claims = JSON.obj(("iss", settings.teamID), ("iat", Int(issuedAt / 1000))).serialized()
        do {
            return try JWS.signES256(header: Array(header.utf8), payload: Array(claims.utf8), key: key)
        } catch {
            throw PermanentDeliveryError("apns: cannot sign the provider token: \(error)")
        }
    }
}
