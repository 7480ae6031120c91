import AuthStore
import JSONValue
import Testing
@testable import AuthEngine
import TestSupport

/// Silent-push app verification over a real in-memory store: a production-mode project with one
/// iOS app that has an APNs key configured and one that has none, a clock the tests move and
/// seeded randomness. The push the app would receive is read back from the outbox.
final class PushFixture {
    static let bundle = "com.example.pushapp"
    static let bundleWithoutKey = "com.example.nokey"
    static let device = String(repeating: "A1", count: 32)
    static let phone = "+33612345678"
    static let testNumber = "+15555550123"
    static let ip = "203.0.113.9"

    let store: SQLStore
    let clock = FixedClock()
    let random = SeededRandom(seed: 17)
    let tokens: TokenService
    var project: ProjectSettings

    init(devMode: Bool = false) throws {
        store = try makeStore()
        try store.insertSigningKey(EmailLinkFixture.signingKey)
        tokens = TokenService(keyRing: KeyRing(clock: clock), clock: clock)
        let apns = APNsSettings(teamID: "TEAMID1234", keyID: "KEYID12345", keyFile: "/keys/AuthKey.p8")
        project = ProjectSettings(id: "push-project", apiKeys: ["key-1"], devMode: devMode,
                                  iosApps: [IOSApp(bundleID: PushFixture.bundle, teamID: "TEAMID1234", appID: "1:1:ios:a", apns: apns),
                                            IOSApp(bundleID: PushFixture.bundleWithoutKey, teamID: "TEAMID1234", appID: "1:1:ios:b")],
                                  testPhoneNumbers: [PushFixture.testNumber: "123456"], smsOriginDomain: "auth.example.com")
        project.phone.allowedRegions = ["FR"]
    }

    var verification: IOSClientVerification { IOSClientVerification(store: store, clock: clock, random: random, project: project) }
    var phone: PhoneSignIn { PhoneSignIn(store: store, clock: clock, random: random, tokens: tokens, project: project) }

    /// `verifyIosClient`, then the pair as the app reads it from the push.
    func pair(device: String = PushFixture.device, bundle: String = PushFixture.bundle, sandbox: Bool = false,
              ip: String = PushFixture.ip) throws -> (receipt: String, secret: String) {
        let result = try verification.verify(.init(appToken: device, isSandbox: sandbox, bundleID: bundle, remoteAddress: ip))
        let push = try #require(try pushes().last)
        let auth = try #require(try JSONParser().parse(push.body)["com.google.firebase.auth"])
        #expect(auth["receipt"]?.stringValue == result.receipt)
        return (result.receipt, try #require(auth["secret"]?.stringValue))
    }

    func pushes() throws -> [OutboxMessage] { try store.messages(project: project.id, channel: .push, limit: 100) }

    /// `sendVerificationCode` as the iOS SDK makes it with a pair.
    @discardableResult
    func send(_ number: String = PushFixture.phone, receipt: String?, secret: String?, bundle: String = PushFixture.bundle,
              ip: String = PushFixture.ip) throws -> PhoneSignIn.SendResult {
        try phone.sendCode(.init(phoneNumber: number, iosCredential: IOSCredential(receipt: receipt, secret: secret), apiKey: "key-1",
                                 appID: bundle, remoteAddress: ip, composeSMS: { "Your code is \($0)" }))
    }
}
