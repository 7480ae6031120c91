import AuthCrypto
import AuthStore
import JSONValue
import Testing
@testable import AuthEngine

@Suite("Phone sign-in: sending codes and verifying them")
struct PhoneSignInTests {
    let fr = "+33612345678"

    @Test("a send queues one SMS whose text ends with the origin-bound line and a 6-digit code")
    func sendQueuesSMS() throws {
        let f = try PhoneFixture()
        let r = try f.send(fr)
        #expect(r.smsQueued && !r.isTest && r.phoneNumber == fr)
        let sms = try f.smsMessages()
        #expect(sms.count == 1)
        #expect(sms[0].recipient == fr && sms[0].status == .pending)
        let code = try f.lastCode()
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        #expect(sms[0].body == "Your code is \(code).\n\n@auth.example.com #\(code)")
        #expect(sms[0].metadata == "{}", "production messages carry no codes in metadata")
    }

    @Test("national numbers are read with the default region and stored in E.164")
    func nationalNumber() throws {
        let f = try PhoneFixture()
        #expect(try f.send("06 12 34 56 78", region: "FR").phoneNumber == fr)
    }

    @Test("only hashes of the code and sessionInfo are stored")
    func storesOnlyHashes() throws {
        let f = try PhoneFixture()
        let r = try f.send(fr)
        let code = try f.lastCode()
        let rows = try f.store.db.rows("SELECT session_hash, code_hash, nonce FROM phone_verifications") { ($0.blob(0), $0.blob(1), $0.blob(2)) }
        #expect(rows.count == 1)
        #expect(rows[0].0 == Digest.sha256(r.sessionInfo))
        #expect(rows[0].1 != Array(code.utf8) && rows[0].1 != Digest.sha256(code) && rows[0].1.count == 32)
        let texts = try f.store.db.rows("SELECT phone_number, app_id FROM phone_verifications") { $0.text(0) + $0.text(1) }
        #expect(!texts[0].contains(code) && !texts[0].contains(r.sessionInfo))
        // "ghs1." and base64url of three 32-byte HMACs (96 bytes: 128 characters, no padding).
        #expect(r.sessionInfo.hasPrefix("ghs1.") && r.sessionInfo.utf8.count == 133)
    }

    @Test("a second send within the expiry returns the same sessionInfo and sends no second SMS")
    func reentrantSend() throws {
        let f = try PhoneFixture()
        let a = try f.send(fr)
        f.clock.advance(seconds: 100)
        let b = try f.send(fr)
        #expect(a.sessionInfo == b.sessionInfo)
        #expect(!b.smsQueued)
        #expect(try f.smsMessages().count == 1)
    }

    @Test("reentrancy is per network, whatever app the request names: a new app header buys no new send")
    func reentrancyPerNetwork() throws {
        let f = try PhoneFixture()
        let a = try f.send(fr, app: "com.example.one")
        let b = try f.send(fr, app: "com.example.two")
        let c = try f.send(fr, app: "")
        #expect(a.sessionInfo == b.sessionInfo && b.sessionInfo == c.sessionInfo)
        #expect(!b.smsQueued && !c.smsQueued)
        #expect(try f.smsMessages().count == 1)
        // Another network gets a code of its own.
        #expect(try f.send(fr, app: "com.example.one", ip: "192.0.2.50").sessionInfo != a.sessionInfo)
    }

    @Test("after the code expires a send issues a new code and a new sessionInfo")
    func sendAfterExpiry() throws {
        let f = try PhoneFixture()
        let a = try f.send(fr)
        f.clock.advance(seconds: 300)
        let b = try f.send(fr)
        #expect(a.sessionInfo != b.sessionInfo && b.smsQueued)
        #expect(try f.smsMessages().count == 2)
    }

    @Test("an expired code gets SESSION_EXPIRED")
    func expiredCode() throws {
        let f = try PhoneFixture()
        let s = try f.send(fr)
        let code = try f.lastCode()
        f.clock.advance(seconds: 299)
        f.clock.advance(millis: 999)
        #expect(s.expiresAt == f.clock.now() + 1)
        f.clock.advance(millis: 1)
        #expect(wireError { try f.signIn(s.sessionInfo, code) } == "SESSION_EXPIRED")
    }

    @Test("the code lifetime is configurable and never longer than 10 minutes")
    func lifetimeConfigurable() throws {
        let short = try PhoneFixture { $0.phone.codeLifetimeSeconds = 120 }
        let s = try short.send(fr)
        #expect(s.expiresAt == short.clock.now() + 120_000)
        let long = try PhoneFixture { $0.phone.codeLifetimeSeconds = 3600 }
        #expect(try long.send(fr).expiresAt == long.clock.now() + 600_000)
    }

    @Test("the right code signs up a new user with a phone provider entry and phone tokens")
    func firstSignIn() throws {
        let f = try PhoneFixture()
        let s = try f.send(fr)
        guard case let .signedIn(account, tokens?, isNew) = try f.signIn(s.sessionInfo, try f.lastCode()) else {
            Issue.record("not signed in"); return
        }
        #expect(isNew)
        #expect(account.phoneNumber == fr && account.lastLoginAt == f.clock.now())
        #expect(account.providers == [ProviderInfo(providerID: "phone", rawID: fr, phoneNumber: fr)])
        #expect(try f.store.account(project: f.project.id, phoneNumber: fr)?.localID == account.localID)
        let verified = try f.tokens.verify(tokens.idToken, kind: .idToken, project: f.project.id, store: f.store)
        #expect(verified.uid == account.localID && verified.signInProvider == "phone" && verified.phoneNumber == fr)
        #expect(tokens.expiresIn == 3600 && tokens.refreshToken.hasPrefix("ghrt1."))
        #expect(try f.store.refreshToken(hash: SignInTokens.hash(refreshToken: tokens.refreshToken))?.provider == "phone")
    }

    @Test("a sessionInfo is single use; the next sign-in finds the same account")
    func singleUse() throws {
        let f = try PhoneFixture()
        let (first, _) = try f.signedInUser(fr)
        let s = try f.send(fr)
        let code = try f.lastCode()
        guard case let .signedIn(again, _, isNew) = try f.signIn(s.sessionInfo, code) else { Issue.record("not signed in"); return }
        #expect(!isNew && again.localID == first.localID)
        #expect(wireError { try f.signIn(s.sessionInfo, code) } == "SESSION_EXPIRED")
        #expect(try f.store.countAccounts(project: f.project.id) == 1)
    }

    @Test("five wrong codes burn the session: the right code then gets SESSION_EXPIRED")
    func fiveWrongCodes() throws {
        let f = try PhoneFixture()
        let s = try f.send(fr)
        let code = try f.lastCode()
        let wrong = code == "000000" ? "111111" : "000000"
        for _ in 0..<5 { #expect(wireError { try f.signIn(s.sessionInfo, wrong) } == "INVALID_CODE") }
        #expect(wireError { try f.signIn(s.sessionInfo, code) } == "SESSION_EXPIRED")
        // A burned session is no longer pending: the next send issues a new code.
        let t = try f.send(fr)
        #expect(t.sessionInfo != s.sessionInfo && t.smsQueued)
    }

    @Test("malformed codes count as wrong codes")
    func malformedCode() throws {
        let f = try PhoneFixture()
        let s = try f.send(fr)
        for bad in ["12345", "1234567", "abcdef", "١٢٣٤٥٦"] { #expect(wireError { try f.signIn(s.sessionInfo, bad) } == "INVALID_CODE") }
        #expect(try f.flow.status(sessionInfo: s.sessionInfo)?.attemptsLeft == 1)
    }

    @Test("missing and unknown sessionInfo and code get their own errors")
    func signInInputErrors() throws {
        let f = try PhoneFixture()
        let s = try f.send(fr)
        #expect(wireError { try f.signIn(nil, "123456") } == "MISSING_SESSION_INFO")
        #expect(wireError { try f.signIn("", "123456") } == "MISSING_SESSION_INFO")
        #expect(wireError { try f.signIn(s.sessionInfo, nil) } == "MISSING_CODE")
        #expect(wireError { try f.signIn("not-a-session", "123456") } == "INVALID_SESSION_INFO")
        #expect(wireError { try f.signIn(s.sessionInfo + "x", "123456") } == "INVALID_SESSION_INFO")
        // A sessionInfo of another project (same store) is unknown here.
        var other = f.project
        other.id = "other-project"
        let elsewhere = PhoneSignIn(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, project: other)
        #expect(wireError { try elsewhere.signIn(.init(sessionInfo: s.sessionInfo, code: "123456", remoteAddress: "x")) } == "INVALID_SESSION_INFO")
    }

    @Test("missing or malformed numbers get INVALID_PHONE_NUMBER with the Firebase details", arguments: [
        (nil, "INVALID_PHONE_NUMBER : Invalid format."),
        ("", "INVALID_PHONE_NUMBER : Invalid format."),
        ("not a number", "INVALID_PHONE_NUMBER : Invalid format."),
        ("0612345678", "INVALID_PHONE_NUMBER : Invalid format."),
        ("+1 650", "INVALID_PHONE_NUMBER : TOO_SHORT"),
        ("+33 6 12 34 56 78 90 12 34", "INVALID_PHONE_NUMBER : TOO_LONG"),
    ] as [(String?, String)])
    func invalidNumbers(input: String?, message: String) throws {
        let f = try PhoneFixture(dev: true)
        #expect(wireError { try f.send(input) } == message)
        #expect(try f.smsMessages().isEmpty)
    }

    @Test("dev mode puts sessionInfo, code and number in the message metadata")
    func devMetadata() throws {
        let f = try PhoneFixture(dev: true)
        let s = try f.send(fr, token: .some(nil))
        let meta = try JSONParser().parse(try f.smsMessages()[0].metadata)
        #expect(meta["sessionInfo"]?.stringValue == s.sessionInfo)
        #expect(meta["code"]?.stringValue == (try f.lastCode()))
        #expect(meta["phoneNumber"]?.stringValue == fr)
    }

    @Test("codes differ between sends and come from the random source")
    func codesAreRandom() throws {
        var codes = Set<String>()
        let f = try PhoneFixture(dev: true)
        for i in 0..<8 {
            try f.send("+3361234560\(i)")
            codes.insert(try f.lastCode())
        }
        #expect(codes.count == 8)
        let a = try PhoneFixture(dev: true, seed: 7), b = try PhoneFixture(dev: true, seed: 7)
        try a.send(fr)
        try b.send(fr)
        #expect(try a.lastCode() == b.lastCode(), "same seed, same code: the code comes from the RandomSource")
    }
}
