import AuthCrypto
import AuthStore
import Testing
@testable import AuthEngine

/// The short code beside an email link: issued only for a request bound to a browser or an app,
/// stored as keyed hashes, single use together with its link, ten minutes, five tries, a daily
/// failure budget per client, and only where it was asked for.
@Suite("Email link: the code beside the link")
struct EmailCodeTests {
    static let browser = "pending-cookie-of-the-asking-browser"
    static let elsewhere = "pending-cookie-of-another-browser!"

    /// Sends a sign-in link bound to `binding` (an admin send when `admin`: no send budget) and
    /// returns the code the email carries and the stored record.
    @discardableResult
    static func ask(_ f: EmailLinkFixture, email: String = "ada@example.com", binding: String? = browser, admin: Bool = false,
                    ip: String = "192.0.2.1") throws -> (code: String?, result: OobSendResult) {
        var r = f.request(email: email, ip: ip)
        r.codeBinding = binding
        r.isAdmin = admin
        let result = try f.send(r)
        return (f.composed.last?.code, result)
    }

    static func signIn(_ f: EmailLinkFixture, email: String = "ada@example.com", code: String?, binding: String? = browser,
                       ip: String = "192.0.2.1", issueTokens: Bool = true) throws -> EmailLinkSignInResult {
        try f.flows.signIn(email: email, code: code, binding: binding, issueTokens: issueTokens, remoteAddress: ip)
    }

    /// A six-digit code that is not `code`.
    static func wrong(_ code: String) -> String { code == "000000" ? "000001" : "000000" }

    @Test("A bound request's email carries six digits; only keyed hashes of the code and the binding are stored")
    func issuedAndHashed() throws {
        let f = try EmailLinkFixture()
        let (code, result) = try Self.ask(f)
        let digits = try #require(code)
        #expect(digits.count == 6 && digits.allSatisfy(\.isNumber))
        #expect(f.composed.last?.codeMinutes == 10)
        let stored = try #require(try f.store.emailLink(hash: result.record.codeHash)?.shortCode)
        #expect(stored.expiresAt == f.clock.now() + 600_000 && stored.attempts == 0)
        // Neither the digits nor the binding, nor their plain SHA-256, are in the row.
        #expect(stored.hash != Digest.sha256(digits) && stored.hash != Array(digits.utf8))
        #expect(stored.binding != Digest.sha256(Self.browser) && stored.binding != Array(Self.browser.utf8))
        // They are HMACs under the deployment's `email-code` secret, the code bound to its link.
        let secret = try #require(try f.store.secret(named: "email-code"))
        let keys = EmailCodeKeys(codeKey: HMACKey(Digest.hmacSHA256(key: secret, "email-code-digits")),
                                 bindingKey: HMACKey(Digest.hmacSHA256(key: secret, "email-code-binding")))
        #expect(stored.hash == keys.codeHash(digits, link: result.record.codeHash))
        #expect(stored.binding == keys.bindingHash(Self.browser))
        #expect(keys.codeHash(digits, link: Digest.sha256("another link")) != stored.hash)
    }

    @Test("Without a binding the email is the link alone, as Firebase's; a bad or misplaced binding is INVALID_ARGUMENT")
    func bindingRules() throws {
        let f = try EmailLinkFixture()
        let (code, result) = try Self.ask(f, binding: nil)
        #expect(code == nil && result.record.shortCode == nil)
        #expect(f.composed.last?.codeMinutes == 0)
        for bad in ["too-short", String(repeating: "x", count: 257), "sixteen chars \u{7}!!"] {
            let e = authError { try Self.ask(f, binding: bad) }
            #expect(e?.message == "INVALID_ARGUMENT : " + EmailLinks.bindingInvalidDetail)
        }
        // Only an emailed sign-in link can carry a code.
        var verify = f.request(.verifyEmail)
        verify.idToken = try f.idToken(for: try f.insertAccount(email: "ada@example.com", verified: false))
        verify.codeBinding = Self.browser
        #expect(authError { _ = try f.send(verify) }?.message == "INVALID_ARGUMENT : " + EmailLinks.bindingUnusedDetail)
        var generated = f.request()
        generated.isAdmin = true
        generated.returnOobLink = true
        generated.codeBinding = Self.browser
        #expect(authError { _ = try f.send(generated) }?.code == .invalidArgument)
    }

    @Test("The code signs in as the link would (new account, tokens, audit row) and uses the link; it works once")
    func singleUseWithItsLink() throws {
        let f = try EmailLinkFixture()
        let (code, result) = try Self.ask(f, email: "Dana@Example.com")
        let res = try Self.signIn(f, email: "dana@example.com", code: code)
        #expect(res.isNewUser && res.account.email == "dana@example.com" && res.account.emailVerified && res.account.emailLinkSignin)
        let tokens = try #require(res.tokens)
        #expect(try f.tokens.verify(tokens.idToken, kind: .idToken, project: f.project.id, store: f.store).signInProvider == "password")
        let audit = try f.store.auditEvents(project: f.project.id, localID: res.account.localID, since: nil, limit: 10)
        #expect(audit.map(\.event.event) == [.emailLinkSignUp] && audit.first?.event.detail == "code")
        // One sign-in per request: the code again, and the link, are both used.
        #expect(authError { _ = try Self.signIn(f, email: "dana@example.com", code: code) }?.code == .sessionExpired)
        #expect(authError { _ = try f.flows.signIn(email: "dana@example.com", oobCode: result.oobCode) }?.code == .invalidOobCode)
    }

    @Test("The link used first makes the code dead")
    func linkFirst() throws {
        let f = try EmailLinkFixture()
        let (code, result) = try Self.ask(f)
        _ = try f.flows.signIn(email: "ada@example.com", oobCode: result.oobCode)
        let e = authError { _ = try Self.signIn(f, code: code) }
        #expect(e?.message == "SESSION_EXPIRED : " + EmailLinks.codeExpiredDetail)
    }

    @Test("Ten minutes, never past the link: a link of five minutes has a code of five")
    func expiry() throws {
        let f = try EmailLinkFixture()
        let (code, _) = try Self.ask(f)
        f.clock.advance(seconds: 600)
        #expect(authError { _ = try Self.signIn(f, code: code) }?.code == .sessionExpired)

        let short = try EmailLinkFixture { $0.emailLink.linkLifetimeSeconds = 300 }
        let (early, _) = try Self.ask(short, email: "bo@example.com")
        let (late, sent) = try Self.ask(short, email: "cy@example.com")
        #expect(sent.record.shortCode?.expiresAt == sent.record.expiresAt)
        #expect(short.composed.last?.codeMinutes == 5)
        short.clock.advance(seconds: 299)
        _ = try Self.signIn(short, email: "bo@example.com", code: early)
        short.clock.advance(seconds: 1)
        #expect(authError { _ = try Self.signIn(short, email: "cy@example.com", code: late) }?.code == .sessionExpired)
    }

    @Test("Five tries per code: four wrong and the right one signs in; five wrong and the code is dead, the link still works")
    func perCodeBudget() throws {
        let f = try EmailLinkFixture()
        let (first, _) = try Self.ask(f, email: "eve@example.com")
        let code = try #require(first)
        for _ in 0..<4 { #expect(authError { _ = try Self.signIn(f, email: "eve@example.com", code: Self.wrong(code)) }?.code == .invalidCode) }
        _ = try Self.signIn(f, email: "eve@example.com", code: code)

        let (second, result) = try Self.ask(f, email: "fay@example.com")
        let dead = try #require(second)
        // Letters and other lengths are wrong codes too, each a try.
        for guess in ["12345", "abcdef", Self.wrong(dead), "1234567", Self.wrong(dead)] {
            #expect(authError { _ = try Self.signIn(f, email: "fay@example.com", code: guess) }?.code == .invalidCode)
        }
        let e = authError { _ = try Self.signIn(f, email: "fay@example.com", code: dead) }
        #expect(e?.message == "TOO_MANY_ATTEMPTS_TRY_LATER : " + EmailLinks.codeTriesDetail)
        #expect(try f.store.emailLink(hash: result.record.codeHash)?.shortCode?.attempts == 5)
        _ = try f.flows.signIn(email: "fay@example.com", oobCode: result.oobCode)
    }

    @Test("A code works only where it was asked for: another browser, or none, is refused before the digits are compared")
    func wrongBrowser() throws {
        let f = try EmailLinkFixture()
        let (code, result) = try Self.ask(f)
        for other in [Self.elsewhere, nil, ""] {
            let e = authError { _ = try Self.signIn(f, code: code, binding: other) }
            #expect(e?.message == "CREDENTIAL_MISMATCH : " + EmailLinks.codeBindingDetail)
        }
        // Those refusals spent none of the code's tries: the asking browser still has five.
        #expect(try f.store.emailLink(hash: result.record.codeHash)?.shortCode?.attempts == 0)
        #expect(try Self.signIn(f, code: code).account.email == "ada@example.com")
    }

    @Test("Each client has 20 failures a day; a stranger spending theirs never locks the owner out")
    func perClientBudget() throws {
        let f = try EmailLinkFixture()
        let (code, _) = try Self.ask(f)
        // A stranger without the browser's secret: 20 refusals, then refused whatever it sends.
        for _ in 0..<20 { #expect(authError { _ = try Self.signIn(f, code: code, binding: Self.elsewhere, ip: "198.51.100.7") }?.code == .credentialMismatch) }
        #expect(authError { _ = try Self.signIn(f, code: code, binding: Self.browser, ip: "198.51.100.7") }?.message == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // The owner, from their own network, signs in.
        #expect(try Self.signIn(f, code: code).account.email == "ada@example.com")

        // Wrong codes across several requests count on the same daily budget; the next day it is whole again.
        let g = try EmailLinkFixture()
        var codes: [String] = []
        for i in 0..<5 { codes.append(try #require(try Self.ask(g, email: "u\(i)@example.com", admin: true).code)) }
        for (i, c) in codes.enumerated() {
            for _ in 0..<4 { #expect(authError { _ = try Self.signIn(g, email: "u\(i)@example.com", code: Self.wrong(c)) }?.code == .invalidCode) }
        }
        #expect(authError { _ = try Self.signIn(g, email: "u0@example.com", code: codes[0]) }?.message == "TOO_MANY_ATTEMPTS_TRY_LATER")
        g.clock.advance(seconds: 86_400)
        let (fresh, _) = try Self.ask(g, email: "u0@example.com", admin: true)
        _ = try Self.signIn(g, email: "u0@example.com", code: fresh)
    }

    @Test("Two requests from one browser: each code works for its own request")
    func twoRequests() throws {
        let f = try EmailLinkFixture()
        let (older, first) = try Self.ask(f)
        f.clock.advance(seconds: 30)
        let (newer, second) = try Self.ask(f)
        #expect(older != newer || first.record.shortCode?.hash != second.record.shortCode?.hash)
        _ = try Self.signIn(f, code: older, issueTokens: false)
        #expect(try f.store.emailLink(hash: first.record.codeHash)?.consumedAt != nil)
        #expect(try f.store.emailLink(hash: second.record.codeHash)?.consumedAt == nil)
        _ = try Self.signIn(f, code: newer, issueTokens: false)
    }

    @Test("A user with a second factor gets a pending credential, not tokens, as with the link")
    func secondFactor() throws {
        let f = try EmailLinkFixture { $0.mfa = .enabled }
        var a = try f.insertAccount(email: "gus@example.com")
        try f.store.transaction {
            a = try #require(try f.store.account(project: f.project.id, localID: a.localID))
            a.mfaEnrollments = [MFAEnrollment(enrollmentID: "e1", phoneNumber: "+15555550123", enrolledAt: 1)]
            try f.store.updateAccount(a)
        }
        let (code, _) = try Self.ask(f, email: "gus@example.com")
        let res = try Self.signIn(f, email: "gus@example.com", code: code)
        #expect(res.tokens == nil && res.challenge != nil && res.account.localID == a.localID)
    }

    @Test("Missing fields and unknown addresses")
    func badInputs() throws {
        let f = try EmailLinkFixture()
        #expect(authError { _ = try Self.signIn(f, email: "", code: "123456") }?.code == .missingEmail)
        #expect(authError { _ = try Self.signIn(f, email: "not-an-address", code: "123456") }?.code == .invalidEmail)
        #expect(authError { _ = try Self.signIn(f, code: "") }?.code == .missingCode)
        #expect(authError { _ = try Self.signIn(f, email: "nobody@example.com", code: "123456") }?.code == .sessionExpired)
        let off = try EmailLinkFixture { $0.emailLink.enabled = false }
        #expect(authError { _ = try Self.signIn(off, code: "123456") }?.code == .operationNotAllowed)
    }

    // MARK: Old credentials (docs/security.md)

    @Test("Old credential: a code asked before the owner changed the account's email signs in the old address only")
    func emailChangedSince() throws {
        let f = try EmailLinkFixture()
        var owner = try f.insertAccount(email: "old@example.com")
        let (code, _) = try Self.ask(f, email: "old@example.com")
        try f.store.transaction {
            owner = try #require(try f.store.account(project: f.project.id, localID: owner.localID))
            owner.email = "new@example.com"
            try f.store.updateAccount(owner)
        }
        let res = try Self.signIn(f, email: "old@example.com", code: code)
        #expect(res.isNewUser && res.account.localID != owner.localID && res.account.email == "old@example.com")
        #expect(try f.store.account(project: f.project.id, localID: owner.localID)?.email == "new@example.com")
    }

    @Test("Old credential: a code of a disabled account is USER_DISABLED and uses nothing")
    func disabledAccount() throws {
        let f = try EmailLinkFixture()
        _ = try f.insertAccount(email: "jo@example.com", disabled: true)
        let (code, result) = try Self.ask(f, email: "jo@example.com")
        #expect(authError { _ = try Self.signIn(f, email: "jo@example.com", code: code) }?.code == .userDisabled)
        #expect(try f.store.emailLink(hash: result.record.codeHash)?.consumedAt == nil)
    }
}
