import Testing
@testable import AuthEngine

@Suite("Email link: code inspection, verification and createAuthUri")
struct EmailActionCodeTests {
    @Test("Inspection returns the record without using it; missing code is MISSING_OOB_CODE")
    func inspect() throws {
        let f = try EmailLinkFixture()
        let code = try f.code()
        #expect(try f.flows.inspect(oobCode: code).requestType == .emailSignIn)
        #expect(try f.flows.inspect(oobCode: code).email == "ada@example.com")
        #expect(authError { _ = try f.flows.inspect(oobCode: nil) }?.code == .missingOobCode)
        #expect(authError { _ = try f.flows.inspect(oobCode: "unknown") }?.code == .invalidOobCode)
        _ = try f.flows.signIn(email: "ada@example.com", oobCode: code)
        #expect(authError { _ = try f.flows.inspect(oobCode: code) }?.code == .invalidOobCode)
    }

    @Test("Inspection of an expired code is EXPIRED_OOB_CODE")
    func inspectExpired() throws {
        let f = try EmailLinkFixture()
        let code = try f.code()
        f.clock.advance(seconds: 1800)
        #expect(authError { _ = try f.flows.inspect(oobCode: code) }?.code == .expiredOobCode)
    }

    @Test("A VERIFY_EMAIL code marks the address verified once")
    func applyVerify() throws {
        let f = try EmailLinkFixture()
        let a = try f.insertAccount(email: "lee@example.com", verified: false)
        var r = f.request(.verifyEmail)
        r.idToken = try f.idToken(for: a)
        let code = try f.send(r).oobCode
        let verified = try f.flows.applyVerifyEmail(oobCode: code)
        #expect(verified.localID == a.localID && verified.emailVerified)
        #expect(try f.store.account(project: f.project.id, localID: a.localID)?.emailVerified == true)
        #expect(authError { _ = try f.flows.applyVerifyEmail(oobCode: code) }?.code == .invalidOobCode)
    }

    @Test("Sign-in codes cannot verify; expired verify codes are EXPIRED_OOB_CODE; a changed address invalidates")
    func applyVerifyErrors() throws {
        let f = try EmailLinkFixture()
        #expect(authError { _ = try f.flows.applyVerifyEmail(oobCode: try f.code()) }?.code == .invalidOobCode)
        #expect(authError { _ = try f.flows.applyVerifyEmail(oobCode: nil) }?.code == .missingOobCode)
        let a = try f.insertAccount(email: "max@example.com", verified: false)
        var r = f.request(.verifyEmail)
        r.idToken = try f.idToken(for: a)
        let stale = try f.send(r).oobCode
        let late = try f.send(r).oobCode
        try f.store.change(project: a.projectID, localID: a.localID) { $0.email = "max2@example.com" }
        #expect(authError { _ = try f.flows.applyVerifyEmail(oobCode: stale) }?.code == .invalidOobCode)
        f.clock.advance(seconds: 3600)
        #expect(authError { _ = try f.flows.applyVerifyEmail(oobCode: late) }?.code == .expiredOobCode)
    }

    @Test("Status tells usable, used, expired and unknown apart; purging forgets long-expired links")
    func status() throws {
        let f = try EmailLinkFixture()
        let used = try f.code()
        let fresh = try f.code()
        _ = try f.flows.signIn(email: "ada@example.com", oobCode: used)
        guard case .used = try f.flows.status(of: used), case .usable = try f.flows.status(of: fresh),
              case .unknown = try f.flows.status(of: "zzz"), case .unknown = try f.flows.status(of: nil) else {
            Issue.record("wrong status"); return
        }
        f.clock.advance(seconds: 1800)
        guard case .expired = try f.flows.status(of: fresh) else { Issue.record("not expired"); return }
        f.clock.advance(millis: EmailLinks.retentionAfterExpiry + 1000)
        try f.send(f.request(email: "other@example.com"))
        guard case .unknown = try f.flows.status(of: fresh) else { Issue.record("not purged"); return }
    }

    @Test("The store consumes a link only once and never after expiry (the guard against two racing requests)")
    func conditionalConsume() throws {
        let f = try EmailLinkFixture()
        let rec = try f.send(f.request()).record
        #expect(try f.store.consumeEmailLink(hash: rec.codeHash, at: f.clock.now()))
        #expect(try !f.store.consumeEmailLink(hash: rec.codeHash, at: f.clock.now()))
        let late = try f.send(f.request()).record
        #expect(try !f.store.consumeEmailLink(hash: late.codeHash, at: late.expiresAt))
        #expect(try f.store.emailLink(hash: late.codeHash)?.consumedAt == nil)
    }

    @Test("A code of another project is unknown here")
    func otherProject() throws {
        let f = try EmailLinkFixture()
        let code = try f.code()
        var other = f.project
        other.id = "other-project"
        let flows = EmailLinks(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, project: other)
        #expect(authError { _ = try flows.signIn(email: "ada@example.com", oobCode: code) }?.code == .invalidOobCode)
    }

    @Test("createAuthUri validates identifier and continueUri")
    func createAuthUriErrors() throws {
        let f = try EmailLinkFixture()
        let ok = "https://app.example.com/"
        #expect(authError { _ = try f.flows.createAuthUri(identifier: nil, continueUri: ok, sessionID: nil, remoteAddress: "ip") }?.code == .missingIdentifier)
        #expect(authError { _ = try f.flows.createAuthUri(identifier: "a@example.com", continueUri: nil, sessionID: nil, remoteAddress: "ip") }?.code == .missingContinueURI)
        #expect(authError { _ = try f.flows.createAuthUri(identifier: "+15555550100", continueUri: ok, sessionID: nil, remoteAddress: "ip") }?.code == .invalidIdentifier)
        #expect(authError { _ = try f.flows.createAuthUri(identifier: "a@example.com", continueUri: "nope", sessionID: nil, remoteAddress: "ip") }?.code == .invalidContinueURI)
    }

    @Test("createAuthUri: emailLink for an email-link account, password only with a password, nothing for unknown addresses")
    func createAuthUriMethods() throws {
        let f = try EmailLinkFixture()
        let unknown = try f.flows.createAuthUri(identifier: "nobody@example.com", continueUri: "https://x.test/", sessionID: nil, remoteAddress: "ip")
        #expect(!unknown.registered && unknown.signinMethods.isEmpty && unknown.allProviders.isEmpty)
        #expect(unknown.sessionID.count == 27)
        _ = try f.flows.signIn(email: "ada@example.com", oobCode: try f.code())
        let linked = try f.flows.createAuthUri(identifier: "ADA@example.com", continueUri: "https://x.test/", sessionID: "s1", remoteAddress: "ip")
        #expect(linked == AuthURIResult(registered: true, allProviders: ["password"], signinMethods: ["emailLink"], sessionID: "s1"))
        _ = try f.insertAccount(email: "pw@example.com", verified: false, password: "hash")
        let pw = try f.flows.createAuthUri(identifier: "pw@example.com", continueUri: "https://x.test/", sessionID: nil, remoteAddress: "ip")
        #expect(pw.signinMethods == ["password"] && pw.registered)
    }

    @Test("createAuthUri is limited to 120 calls per IP per hour")
    func createAuthUriLimit() throws {
        let f = try EmailLinkFixture()
        for _ in 0..<120 { _ = try f.flows.createAuthUri(identifier: "a@example.com", continueUri: "https://x.test/", sessionID: nil, remoteAddress: "ip") }
        #expect(authError { _ = try f.flows.createAuthUri(identifier: "a@example.com", continueUri: "https://x.test/", sessionID: nil, remoteAddress: "ip") }?.code == .tooManyAttempts)
    }
}
