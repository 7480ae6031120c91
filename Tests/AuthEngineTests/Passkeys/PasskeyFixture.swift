import AuthCrypto
import AuthStore
import Testing
@testable import AuthEngine
import TestSupport

/// Passkeys over a real in-memory store: a production-mode project whose relying party is
/// `example.com` (its SMS origin domain), served on `https://example.com` and
/// `https://app.example.com` (authorized domains), with the phone second factor on; a clock the
/// tests move and seeded randomness.
final class PasskeyFixture {
    static let rpID = "example.com"
    static let origin = "https://example.com"
    static let ip = "203.0.113.9"
    /// A client in another network (its own budgets).
    static let otherIP = "198.51.100.20"

    let store: SQLStore
    let clock = FixedClock()
    let random: SeededRandom
    let tokens: TokenService
    var project: ProjectSettings

    init(seed: UInt64 = 23, configure: (inout ProjectSettings) -> Void = { _ in }) throws {
        store = try makeStore()
        // The email-link tests' key: generating an RSA key per test would dominate the run time.
        try store.insertSigningKey(EmailLinkFixture.signingKey)
        random = SeededRandom(seed: seed)
        tokens = TokenService(keyRing: KeyRing(clock: clock), clock: clock)
        project = ProjectSettings(id: "passkey-project", apiKeys: ["key-1"], devMode: false,
                                  authorizedDomains: ["example.com", "app.example.com"], smsOriginDomain: PasskeyFixture.rpID)
        project.passkeys.enabled = true
        project.mfa = .enabled
        configure(&project)
    }

    var passkeys: Passkeys { Passkeys(store: store, clock: clock, random: random, tokens: tokens, project: project) }
    var refresh: RefreshTokens { RefreshTokens(store: store, tokens: tokens, random: random) }

    /// A verified email user, and an ID token of a password sign-in that happened now.
    func user(_ email: String = "ada@example.com", factor: MFAEnrollment? = nil) throws -> (Account, String) {
        var a = Account(projectID: project.id, localID: random.userID(), createdAt: clock.now())
        a.email = email
        a.emailVerified = true
        a.upsertProvider(ProviderInfo(providerID: "password", rawID: email, email: email))
        if let factor { a.mfaEnrollments = [factor] }
        try store.insertAccount(a)
        return (a, try tokens.mintIDToken(for: a, provider: "password", store: store))
    }

    func account(_ localID: String) throws -> Account { try #require(try store.account(project: project.id, localID: localID)) }

    /// A password sign-in that happened now (and passed `factor`, if given).
    func proof(factor: MFAEnrollment? = nil) -> SignInProof {
        SignInProof(firstFactor: "password", authTime: clock.now() / 1000, secondFactor: factor.map { SecondFactor(identifier: $0.enrollmentID) })
    }

    /// Starts an enrolment for `account` and registers `authenticator` with its challenge.
    @discardableResult
    func enrol(_ account: Account, _ authenticator: SoftAuthenticator, factor: MFAEnrollment? = nil, name: String? = "Laptop",
               ip: String = PasskeyFixture.ip, issueTokens: Bool = true,
               _ edit: (inout SoftAuthenticator.Ceremony) -> Void = { _ in }) throws -> Passkeys.Enrolled {
        let options = try passkeys.startEnrolment(account: account, proof: proof(factor: factor), remoteAddress: ip)
        authenticator.userHandle = options.userID
        let response = authenticator.register(challenge: options.challenge, rpID: options.rpID, origin: PasskeyFixture.origin, edit)
        return try passkeys.finishEnrolment(account: account, proof: proof(factor: factor), response: response, name: name,
                                            remoteAddress: ip, issueTokens: issueTokens)
    }

    /// A sign-in challenge answered by `authenticator`.
    func signIn(_ authenticator: SoftAuthenticator, ip: String = PasskeyFixture.ip,
                _ edit: (inout SoftAuthenticator.Ceremony) -> Void = { _ in }) throws -> Passkeys.SignedIn {
        let options = try passkeys.startSignIn(remoteAddress: ip)
        let response = try authenticator.assert(challenge: options.challenge, rpID: options.rpID, origin: PasskeyFixture.origin, edit)
        return try passkeys.finishSignIn(response: response, remoteAddress: ip)
    }

    /// The tokens of a sign-in that ended in them.
    func tokens(of signedIn: Passkeys.SignedIn) throws -> IssuedTokens {
        guard case let .done(_, _, tokens) = signedIn else {
            Issue.record("the sign-in asked for a second factor")
            throw AuthError(.internalError, "no tokens")
        }
        return try #require(tokens)
    }

    func refreshes(_ refreshToken: String) -> String? {
        wireError { try self.refresh.refresh(grantType: "refresh_token", refreshToken: refreshToken, project: self.project.id, graceSeconds: 10) }
    }

    func audit(_ localID: String? = nil) throws -> [AuditEvent] {
        try store.auditEvents(project: project.id, localID: localID, since: nil, limit: 100).map(\.event)
    }

    static let phoneFactor = MFAEnrollment(enrollmentID: "factor-1", phoneNumber: "+33612345678", displayName: "Work", enrolledAt: 1)
}
