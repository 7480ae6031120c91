import AuthCrypto
import AuthEngine
import AuthStore
@testable import Delivery
import JSONValue
import Testing
import TestSupport

/// The APNs sender's parts that need no gateway: the provider token (its claims, its signature
/// checked with OpenSSL, its reuse and renewal), how answers are classified, and the outbox
/// worker that delivers pushes apart from the other messages. The gateway itself is exercised
/// over HTTP/2 and TLS by Tests/integration/test_push_apns.py.
@Suite("APNs sender")
struct APNsSenderTests {
    static let settings = APNsSettings(teamID: "TEAMID1234", keyID: "KEYID12345", keyFile: "/keys/AuthKey_KEYID12345.p8")

    func decode(_ token: String) throws -> (header: JSON, claims: JSON, parts: JWS.Parts) {
        let parts = try #require(JWS.parse(token))
        return (try JSONParser().parse(parts.header), try JSONParser().parse(parts.payload), parts)
    }

    @Test("the provider token is ES256 with kid = key id, iss = team id, iat in seconds, and verifies with the key's public half")
    func providerToken() throws {
        let key = try ES256PrivateKey.generate()
        let token = try APNsSender.makeProviderToken(Self.settings, key: key, issuedAt: 1_700_000_123_456)
        let (header, claims, parts) = try decode(token)
        #expect(header == .obj(("alg", "ES256"), ("kid", "KEYID12345")))
        #expect(claims == .obj(("iss", "TEAMID1234"), ("iat", 1_700_000_123)))
        #expect(try ES256PublicKey(pem: try key.publicKeyPEM()).verify(signature: parts.signature, data: parts.signingInput))
    }

    @Test("one token is reused for 30 minutes, then renewed; an early renewal is made on request")
    func tokenReuse() throws {
        let clock = FixedClock()
        let key = try ES256PrivateKey.generate()
        let sender = APNsSender(apps: [], clock: clock)
        let first = try sender.providerToken(Self.settings, key: key, renew: false)
        clock.advance(seconds: 29 * 60)
        #expect(try sender.providerToken(Self.settings, key: key, renew: false) == first)
        clock.advance(seconds: 60)
        let second = try sender.providerToken(Self.settings, key: key, renew: false)
        #expect(second != first)
        #expect(try decode(second).claims["iat"]?.int64Value == clock.now() / 1000)
        let forced = try sender.providerToken(Self.settings, key: key, renew: true)
        #expect(forced != second)
        #expect(try sender.providerToken(Self.settings, key: key, renew: false) == forced)
        // A clock that went back does not keep a token from the future.
        clock.advance(seconds: -3600)
        #expect(try sender.providerToken(Self.settings, key: key, renew: false) != forced)
    }

    @Test("answers: 200 sent; 429 and 5xx retried; BadDeviceToken, Unregistered, other 4xx permanent")
    func classification() throws {
        #expect(throws: Never.self) { try APNsSender.check(.init(status: 200, reason: nil)) }
        for status in [429, 500, 503] {
            #expect(throws: DeliveryFailure.self) { try APNsSender.check(.init(status: status, reason: "x")) }
        }
        for (status, reason) in [(400, "BadDeviceToken"), (410, "Unregistered"), (400, "DeviceTokenNotForTopic"), (403, "InvalidProviderToken"),
                                 (413, "PayloadTooLarge")] {
            do {
                try APNsSender.check(.init(status: status, reason: reason))
                Issue.record("\(status) accepted")
            } catch let e as PermanentDeliveryError {
                #expect(e.description == "apns: HTTP \(status) \(reason)")
            }
        }
    }

    @Test("a push for an app without a key, or without an app, is dead at once (nothing to retry)")
    func unconfigured() throws {
        let sender = APNsSender(apps: [])
        let m = OutboxMessage(projectID: "p", channel: .push, recipient: String(repeating: "AB", count: 32), body: "{}",
                              metadata: #"{"bundleId":"com.example.app","sandbox":false,"expiresAt":1}"#, nextAttemptAt: 0, createdAt: 0)
        #expect(throws: PermanentDeliveryError.self) { try sender.send(m) }
        var noApp = m
        noApp.metadata = "{}"
        #expect(throws: PermanentDeliveryError.self) { try sender.send(noApp) }
    }

    @Test("gateways: Apple's by isSandbox, or the configured ones")
    func gateways() {
        #expect(Self.settings.gatewayURL(sandbox: false) == "https://api.push.apple.com")
        #expect(Self.settings.gatewayURL(sandbox: true) == "https://api.sandbox.push.apple.com")
        var custom = Self.settings
        custom.gateway = "https://127.0.0.1:8443/"
        #expect(custom.gatewayURL(sandbox: false) == "https://127.0.0.1:8443")
        #expect(custom.gatewayURL(sandbox: true) == "https://127.0.0.1:8443")
        custom.sandboxGateway = "https://127.0.0.1:9443"
        #expect(custom.gatewayURL(sandbox: true) == "https://127.0.0.1:9443")
        #expect(APNsSettings.host(of: "https://API.push.apple.com:443/x") == "api.push.apple.com")
        #expect(APNsSettings.host(of: "http://api.push.apple.com") == nil)
        #expect(APNsSettings.host(of: "https://user@evil.example") == nil)
    }

    @Test("a worker delivers only the channels it has senders for: pushes and SMS go to their own workers")
    func channelsApart() throws {
        let db = TempDatabase()
        defer { db.remove() }
        let store = try db.open()
        let clock = FixedClock()
        let sms = try store.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+33612345678", body: "code",
                                                  nextAttemptAt: 0, createdAt: 0))
        let push = try store.enqueue(OutboxMessage(projectID: "p", channel: .push, recipient: "AB", body: "{}", nextAttemptAt: 0, createdAt: 0))
        let seen = Shared<[Int64]>([])
        let pushWorker = OutboxWorker(makeStore: { try db.open() }, senders: [.push: ScriptedSender { m in seen.update { $0.append(m.id) } }],
                                      clock: clock)
        #expect(try pushWorker.deliverDue(store) == 1)
        #expect(seen.value == [push])
        let smsWorker = OutboxWorker(makeStore: { try db.open() }, senders: [.sms: ScriptedSender { m in seen.update { $0.append(m.id) } }],
                                     clock: clock)
        #expect(try smsWorker.deliverDue(store) == 1)
        #expect(seen.value == [push, sms])
    }
}
