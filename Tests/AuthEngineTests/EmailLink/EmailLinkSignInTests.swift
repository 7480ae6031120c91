import AuthCrypto
import Testing
@testable import AuthEngine

@Suite("Email link: signInWithEmailLink")
struct EmailLinkSignInTests {
    @Test("A first sign-in creates a verified email-link account with the password provider entry")
    func newAccount() throws {
        let f = try EmailLinkFixture()
        let code = try f.code(for: "Dana@Example.com")
        let res = try f.flows.signIn(email: "dana@example.com", oobCode: code)
        #expect(res.isNewUser)
        let a = res.account
        #expect(a.email == "dana@example.com" && a.emailVerified && a.emailLinkSignin)
        #expect(a.providers == [ProviderInfo(providerID: "password", rawID: "dana@example.com", email: "dana@example.com")])
        #expect(a.passwordHash == nil)
        #expect(a.lastLoginAt == f.clock.now())
        #expect(try f.store.account(project: f.project.id, email: "dana@example.com") == a)
        let tokens = try #require(res.tokens)
        let verified = try f.tokens.verify(tokens.idToken, kind: .idToken, project: f.project.id, store: f.store)
        #expect(verified.uid == a.localID)
        #expect(verified.signInProvider == "password")
        #expect(verified.email == "dana@example.com")
        #expect(tokens.refreshToken.hasPrefix(SignInTokens.refreshPrefix))
    }

    @Test("The email must be the one the link was sent to (case-insensitive); a mismatch does not use the link")
    func sameEmailRule() throws {
        let f = try EmailLinkFixture()
        let code = try f.code(for: "erin@example.com")
        let e = authError { _ = try f.flows.signIn(email: "mallory@example.com", oobCode: code) }
        #expect(e?.message == "INVALID_EMAIL : The email provided does not match the sign-in email address.")
        #expect(try f.flows.signIn(email: "ERIN@example.com ", oobCode: code).account.email == "erin@example.com")
    }

    @Test("After five wrong addresses the link answers TOO_MANY_ATTEMPTS_TRY_LATER")
    func mismatchBudget() throws {
        let f = try EmailLinkFixture()
        let code = try f.code(for: "erin@example.com")
        for i in 0..<5 { #expect(authError { _ = try f.flows.signIn(email: "x\(i)@example.com", oobCode: code) }?.code == .invalidEmail) }
        #expect(authError { _ = try f.flows.signIn(email: "erin@example.com", oobCode: code) }?.code == .tooManyAttempts)
    }

    @Test("A link works once: the second use is INVALID_OOB_CODE")
    func singleUse() throws {
        let f = try EmailLinkFixture()
        let code = try f.code()
        _ = try f.flows.signIn(email: "ada@example.com", oobCode: code)
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: code) }?.code == .invalidOobCode)
    }

    @Test("A link is valid for 30 minutes, then EXPIRED_OOB_CODE")
    func expiry() throws {
        let f = try EmailLinkFixture()
        let early = try f.code()
        let late = try f.code()
        f.clock.advance(seconds: 30 * 60 - 1)
        _ = try f.flows.signIn(email: "ada@example.com", oobCode: early)
        f.clock.advance(seconds: 1)
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: late) }?.code == .expiredOobCode)
    }

    @Test("Unknown codes, codes of another kind and missing fields are refused")
    func badInputs() throws {
        let f = try EmailLinkFixture()
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: "nope") }?.code == .invalidOobCode)
        #expect(authError { _ = try f.flows.signIn(email: nil, oobCode: "x") }?.code == .missingEmail)
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: "") }?.code == .missingOobCode)
        let a = try f.insertAccount(email: "ada@example.com", verified: false)
        var r = f.request(.verifyEmail)
        r.idToken = try f.idToken(for: a)
        let verify = try f.send(r).oobCode
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: verify) }?.code == .invalidOobCode)
    }

    @Test("Signing in again reuses the account and keeps its sessions")
    func existingVerifiedAccount() throws {
        let f = try EmailLinkFixture()
        let a = try f.insertAccount(email: "fay@example.com", verified: true, phone: "+15555550101")
        let res = try f.flows.signIn(email: "fay@example.com", oobCode: try f.code(for: "fay@example.com"))
        #expect(!res.isNewUser)
        #expect(res.account.localID == a.localID)
        #expect(res.account.validSince == 0)
        #expect(res.account.phoneNumber == "+15555550101")
    }

    @Test("The first email-link sign-in over an unverified account removes its password and revokes earlier sessions")
    func unverifiedTakeover() throws {
        let f = try EmailLinkFixture()
        let a = try f.insertAccount(email: "gil@example.com", verified: false, password: "hash")
        let oldToken = try f.idToken(for: a)
        f.clock.advance(seconds: 10)
        let res = try f.flows.signIn(email: "gil@example.com", oobCode: try f.code(for: "gil@example.com"))
        #expect(res.account.localID == a.localID)
        #expect(res.account.passwordHash == nil)
        #expect(res.account.emailVerified)
        #expect(res.account.validSince == f.clock.now() / 1000)
        #expect(authError { _ = try f.flows.accounts.account(forIDToken: oldToken, project: f.project.id) }?.code == .tokenExpired)
        _ = try f.flows.accounts.account(forIDToken: res.tokens!.idToken, project: f.project.id)
    }

    @Test("With an idToken the email is linked to that user; the phone stays")
    func linkToPhoneUser() throws {
        let f = try EmailLinkFixture()
        let phoneUser = try f.insertAccount(email: nil, phone: "+15555550102")
        let res = try f.flows.signIn(email: "hal@example.com", oobCode: try f.code(for: "hal@example.com"), idToken: try f.idToken(for: phoneUser))
        #expect(!res.isNewUser)
        #expect(res.account.localID == phoneUser.localID)
        #expect(res.account.phoneNumber == "+15555550102")
        #expect(res.account.email == "hal@example.com" && res.account.emailVerified)
        #expect(Set(res.account.providers.map(\.providerID)) == ["phone", "password"])
    }

    @Test("Linking an address another account owns is EMAIL_EXISTS and leaves the link usable")
    func linkEmailExists() throws {
        let f = try EmailLinkFixture()
        _ = try f.insertAccount(email: "ivy@example.com")
        let phoneUser = try f.insertAccount(email: nil, phone: "+15555550103")
        let code = try f.code(for: "ivy@example.com")
        let e = authError { _ = try f.flows.signIn(email: "ivy@example.com", oobCode: code, idToken: try f.idToken(for: phoneUser)) }
        #expect(e?.code == .emailExists)
        guard case .usable = try f.flows.status(of: code) else { Issue.record("the link was used"); return }
    }

    @Test("A bad idToken is refused before the link is touched")
    func badIDToken() throws {
        let f = try EmailLinkFixture()
        let code = try f.code()
        #expect(authError { _ = try f.flows.signIn(email: "ada@example.com", oobCode: code, idToken: "garbage") }?.code == .invalidIDToken)
        guard case .usable = try f.flows.status(of: code) else { Issue.record("the link was used"); return }
    }

    @Test("A disabled account is USER_DISABLED and the link stays unused")
    func disabledAccount() throws {
        let f = try EmailLinkFixture()
        _ = try f.insertAccount(email: "jo@example.com", disabled: true)
        let code = try f.code(for: "jo@example.com")
        #expect(authError { _ = try f.flows.signIn(email: "jo@example.com", oobCode: code) }?.code == .userDisabled)
        guard case .usable = try f.flows.status(of: code) else { Issue.record("the link was used"); return }
    }

    @Test("The hosted page may complete without tokens; only the asking browser's pending cookie matches")
    func hostedCompletion() throws {
        let f = try EmailLinkFixture()
        var r = f.request(email: "kim@example.com")
        r.browserBinding = Digest.sha256("pending-token")
        let rec = try f.send(r).record
        #expect(EmailLinks.browserMatches(rec, pendingToken: "pending-token"))
        #expect(!EmailLinks.browserMatches(rec, pendingToken: "other"))
        #expect(!EmailLinks.browserMatches(rec, pendingToken: nil))
        let plain = try f.send(f.request(email: "kim@example.com")).record
        #expect(!EmailLinks.browserMatches(plain, pendingToken: "pending-token"))
        let res = try f.flows.signIn(email: "kim@example.com", oobCode: try f.code(for: "kim@example.com"), issueTokens: false)
        #expect(res.tokens == nil)
    }
}
