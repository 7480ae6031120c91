import JSONValue
import Testing
@testable import AuthEngine

/// A receipt + secret as app verification for a phone send (gatehouse.md "APNs silent push"):
/// valid for its app for an hour and five sends; anything else is INVALID_APP_CREDENTIAL.
@Suite("Push: receipts and secrets")
struct IOSReceiptTests {
    typealias F = PushFixture
    static let invalid = "INVALID_APP_CREDENTIAL : The iOS app credential is invalid, expired or used up."

    @Test("the pair from the push sends an SMS to a real number in production mode")
    func pairSendsCode() throws {
        let f = try F()
        let (receipt, secret) = try f.pair()
        let sent = try f.send(receipt: receipt, secret: secret)
        #expect(sent.smsQueued)
        #expect(try f.store.iosReceipt(hash: IOSReceipts.hash(receipt))?.uses == 1)
    }

    @Test("without any app credential a real number is refused: MISSING_CLIENT_IDENTIFIER")
    func credentialRequired() throws {
        let f = try F()
        #expect(wireError { try f.send(receipt: nil, secret: nil) } == "MISSING_CLIENT_IDENTIFIER")
    }

    @Test("a wrong secret, an unknown receipt, half a pair: INVALID_APP_CREDENTIAL, no SMS")
    func wrongPair() throws {
        let f = try F()
        let (receipt, secret) = try f.pair()
        #expect(wireError { try f.send(receipt: receipt, secret: secret + "x") } == Self.invalid)
        #expect(wireError { try f.send(receipt: receipt, secret: String(secret.dropLast()) + "A") } == Self.invalid)
        #expect(wireError { try f.send(receipt: IOSReceipts.receiptPrefix + "unknown", secret: secret) } == Self.invalid)
        #expect(wireError { try f.send(receipt: "not-ours", secret: secret) } == Self.invalid)
        #expect(wireError { try f.send(receipt: receipt + String(repeating: "x", count: 300), secret: secret) } == Self.invalid)
        #expect(wireError { try f.send(receipt: receipt, secret: nil) }?.hasPrefix("INVALID_APP_CREDENTIAL") == true)
        #expect(wireError { try f.send(receipt: nil, secret: secret) }?.hasPrefix("INVALID_APP_CREDENTIAL") == true)
        #expect(try f.store.messages(project: f.project.id, channel: .sms, limit: 10).isEmpty)
        // The pair itself is unharmed by the failures.
        try f.send(receipt: receipt, secret: secret)
    }

    @Test("another app's pair is refused (bound to the bundle id)")
    func boundToApp() throws {
        let f = try F()
        f.project.iosApps.append(IOSApp(bundleID: "com.example.other", teamID: "TEAMID1234", appID: "1:1:ios:c",
                                        apns: f.project.iosApps[0].apns))
        let (receipt, secret) = try f.pair()
        #expect(wireError { try f.send(receipt: receipt, secret: secret, bundle: "com.example.other") } == Self.invalid)
        #expect(wireError { try f.send(receipt: receipt, secret: secret, bundle: "") } == Self.invalid)
    }

    @Test("another project's pair is refused")
    func boundToProject() throws {
        let f = try F()
        let (receipt, secret) = try f.pair()
        f.project.id = "other-project"
        #expect(wireError { try f.send(receipt: receipt, secret: secret) } == Self.invalid)
    }

    @Test("reusable for one hour: at 59 min it works, at 60 min it is refused")
    func oneHour() throws {
        let f = try F()
        let (receipt, secret) = try f.pair()
        f.clock.advance(seconds: 3599)
        try f.send(receipt: receipt, secret: secret)
        f.clock.advance(seconds: 1)
        #expect(wireError { try f.send("+33612345679", receipt: receipt, secret: secret) } == Self.invalid)
    }

    @Test("five sends per pair, the sixth is refused")
    func fiveSends() throws {
        let f = try F()
        let (receipt, secret) = try f.pair()
        for i in 0..<5 { try f.send("+3361234567\(i)", receipt: receipt, secret: secret) }
        #expect(wireError { try f.send("+33612345675", receipt: receipt, secret: secret) } == Self.invalid)
        #expect(try f.store.iosReceipt(hash: IOSReceipts.hash(receipt))?.uses == 5)
    }

    @Test("given where none is needed (a test number, dev mode) the pair is still checked, and counted")
    func checkedEvenWhenNotRequired() throws {
        let f = try F()
        let (receipt, secret) = try f.pair()
        #expect(wireError { try f.send(F.testNumber, receipt: receipt, secret: "wrong") } == Self.invalid)
        try f.send(F.testNumber, receipt: receipt, secret: secret)
        #expect(try f.store.iosReceipt(hash: IOSReceipts.hash(receipt))?.uses == 1)

        let dev = try F(devMode: true)
        let devPair = try dev.pair()
        #expect(wireError { try dev.send(receipt: devPair.receipt, secret: "wrong") } == Self.invalid)
        try dev.send(receipt: devPair.receipt, secret: devPair.secret)
        // Without a pair, dev mode needs nothing.
        try dev.send("+33612345679", receipt: nil, secret: nil)
    }

    @Test("the second factor's starts take the pair too")
    func mfaStartsTakeThePair() throws {
        let f = try MFAFixture()
        var project = f.project
        project.iosApps = [IOSApp(bundleID: PushFixture.bundle, teamID: "TEAMID1234", appID: "1:1:ios:a",
                                  apns: APNsSettings(teamID: "TEAMID1234", keyID: "KEYID12345", keyFile: "/k.p8"))]
        let verification = IOSClientVerification(store: f.store, clock: f.clock, random: f.random, project: project)
        let result = try verification.verify(.init(appToken: PushFixture.device, isSandbox: false, bundleID: PushFixture.bundle,
                                                   remoteAddress: MFAFixture.ip))
        let push = try #require(try f.store.messages(project: project.id, channel: .push, limit: 10).last)
        let secret = try #require(try JSONParser().parse(push.body)["com.google.firebase.auth"]?["secret"]?.stringValue)
        let (_, idToken) = try f.user()
        let mfa = PhoneMFA(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, project: project)
        let request = { (s: String) in
            PhoneMFA.CodeRequest(phoneNumber: MFAFixture.phone, iosCredential: IOSCredential(receipt: result.receipt, secret: s),
                                 apiKey: "key-1", appID: PushFixture.bundle, remoteAddress: MFAFixture.ip, composeSMS: { "Code \($0)" })
        }
        #expect(wireError { try mfa.startEnrolment(idToken: idToken, request("wrong")) } == Self.invalid)
        #expect(try mfa.startEnrolment(idToken: idToken, request(secret)).smsQueued)
    }

    @Test("housekeeping deletes receipts once they expire")
    func purged() throws {
        let f = try F()
        let (receipt, _) = try f.pair()
        f.clock.advance(seconds: 3600)
        let deleted = try Housekeeping(store: f.store, clock: f.clock).run()
        #expect(deleted[.iosReceipts] == 1)
        #expect(try f.store.iosReceipt(hash: IOSReceipts.hash(receipt)) == nil)
    }
}

