import JSONValue
import Testing
@testable import AuthEngine

/// `verifyIosClient` (firebase-wire.md §2.15; gatehouse.md "APNs silent push"): what it answers,
/// what it commits to the outbox, what it refuses, and the budgets an attacker could drive.
@Suite("Push: verifyIosClient")
struct IOSClientVerificationTests {
    typealias F = PushFixture

    @Test("answers a receipt and suggestedTimeout \"5\", and commits one push with the receipt and its secret")
    func answersAndCommitsThePush() throws {
        let f = try F()
        let result = try f.verification.verify(.init(appToken: F.device.lowercased(), isSandbox: true, bundleID: F.bundle,
                                                     remoteAddress: F.ip))
        #expect(result.receipt.hasPrefix(IOSReceipts.receiptPrefix))
        #expect(result.suggestedTimeout == "5")
        let pushes = try f.pushes()
        #expect(pushes.count == 1)
        let push = try #require(pushes.first)
        #expect(push.recipient == F.device)  // upper-case hex, as Apple's path takes it
        #expect(push.status == .pending)
        let payload = try JSONParser().parse(push.body)
        #expect(payload["aps"] == .obj(("content-available", 1)))
        #expect(payload["com.google.firebase.auth"]?["receipt"]?.stringValue == result.receipt)
        let meta = try JSONParser().parse(push.metadata)
        #expect(meta["bundleId"]?.stringValue == F.bundle)
        #expect(meta["sandbox"]?.boolValue == true)
        #expect(meta["expiresAt"]?.int64Value == f.clock.now() + 3_600_000)
    }

    @Test("only hashes are stored: neither the receipt nor the secret is in the receipts table")
    func storedHashed() throws {
        let f = try F()
        let (receipt, secret) = try f.pair()
        let record = try #require(try f.store.iosReceipt(hash: IOSReceipts.hash(receipt)))
        #expect(record.secretHash == IOSReceipts.hash(secret))
        #expect(record.secretHash != Array(secret.utf8))
        #expect(record.bundleID == F.bundle && record.projectID == f.project.id && record.uses == 0)
        #expect(record.deviceTokenHash.count == 32)
    }

    @Test("each call issues a new receipt and secret")
    func freshEachTime() throws {
        let f = try F()
        let a = try f.pair(), b = try f.pair()
        #expect(a.receipt != b.receipt && a.secret != b.secret)
        #expect(try f.pushes().count == 2)
    }

    @Test("no appToken: MISSING_IOS_APP_TOKEN; not hex or the wrong length: INVALID_APP_CREDENTIAL; nothing committed")
    func appTokenShape() throws {
        let f = try F()
        for token in [nil, ""] as [String?] {
            #expect(wireError { try f.verification.verify(.init(appToken: token, isSandbox: false, bundleID: F.bundle, remoteAddress: F.ip)) }
                    == "MISSING_IOS_APP_TOKEN")
        }
        let bad = [String(repeating: "A", count: 63), String(repeating: "AB", count: 31), String(repeating: "AB", count: 101),
                   String(repeating: "G1", count: 32), String(repeating: "é", count: 32), "AB AB"]
        for token in bad {
            #expect(wireError { try f.verification.verify(.init(appToken: token, isSandbox: false, bundleID: F.bundle, remoteAddress: F.ip)) }?
                .hasPrefix("INVALID_APP_CREDENTIAL") == true, "\(token)")
        }
        #expect(IOSClientVerification.deviceToken(String(repeating: "ab", count: 100)) == String(repeating: "AB", count: 100))
        #expect(try f.pushes().isEmpty)
    }

    @Test("an unknown or missing bundle id, or an app without an APNs key: INVALID_APP_CREDENTIAL (the SDK then uses the page)")
    func appMustPush() throws {
        let f = try F()
        for bundle in [nil, "", "com.example.unknown", F.bundleWithoutKey] as [String?] {
            #expect(wireError { try f.verification.verify(.init(appToken: F.device, isSandbox: false, bundleID: bundle, remoteAddress: F.ip)) }?
                .hasPrefix("INVALID_APP_CREDENTIAL") == true)
        }
        #expect(try f.pushes().isEmpty)
    }

    @Test("dev mode needs no APNs key: the push is only listed")
    func devModeNeedsNoKey() throws {
        let f = try F(devMode: true)
        _ = try f.pair(bundle: F.bundleWithoutKey)
        #expect(try f.pushes().count == 1)
    }

    @Test("a caller's network gets 30 verifications an hour, then TOO_MANY_ATTEMPTS_TRY_LATER; another network is unaffected")
    func perClientBudget() throws {
        let f = try F()
        for i in 0..<30 { _ = try f.pair(device: String(format: "%064X", i + 1)) }
        #expect(wireError { try f.pair(device: String(repeating: "C0", count: 32)) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(try f.pushes().count == 30)
        _ = try f.pair(device: String(repeating: "C0", count: 32), ip: "198.51.100.4")
        f.clock.advance(seconds: 3600)
        _ = try f.pair(device: String(repeating: "C1", count: 32))
    }

    @Test("one device gets 10 pushes an hour; past that INVALID_APP_CREDENTIAL, so its owner falls back to the page")
    func perDeviceBudget() throws {
        let f = try F()
        for i in 0..<10 { _ = try f.pair(ip: "198.51.100.\(i + 1)") }
        #expect(wireError { try f.pair(ip: "192.0.2.1") }?.hasPrefix("INVALID_APP_CREDENTIAL") == true)
        #expect(try f.pushes().count == 10)
        // Another device is not held back.
        _ = try f.pair(device: String(repeating: "B2", count: 32), ip: "192.0.2.1")
    }
}
