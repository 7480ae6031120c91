import AuthStore
@testable import AuthEngine
import TestSupport

/// A phone sign-in flow over a real in-memory store with a fixed clock and seeded randomness.
final class PhoneFixture {
    static let testNumber = "+15555550100"
    static let testCode = "123456"

    let store: SQLStore
    let clock = FixedClock()
    let random: SeededRandom
    let tokens: TokenService
    var project: ProjectSettings

    /// A production-mode project (app verification and send limits on) unless `dev`.
    init(dev: Bool = false, seed: UInt64 = 42, configure: (inout ProjectSettings) -> Void = { _ in }) throws {
        store = try makeStore()
        random = SeededRandom(seed: seed)
        let ring = KeyRing(clock: clock)
        tokens = TokenService(keyRing: ring, clock: clock)
        try ring.ensureKey(store: store, random: random)
        project = ProjectSettings(id: dev ? "demo-gatehouse" : "prod-project", apiKeys: ["key-1"], devMode: dev,
                                  iosApps: [IOSApp(bundleID: "com.example.app", teamID: "TEAM123456"),
                                            IOSApp(bundleID: "com.example.aside", teamID: "TEAM123456")],
                                  testPhoneNumbers: [PhoneFixture.testNumber: PhoneFixture.testCode], smsOriginDomain: "auth.example.com")
        configure(&project)
    }

    var flow: PhoneSignIn { PhoneSignIn(store: store, clock: clock, random: random, tokens: tokens, project: project) }

    /// An app token as the verification page would mint it.
    func appToken(apiKey: String = "key-1", app: String = "com.example.app") throws -> String {
        try AppTokens(store: store, clock: clock, random: random).mint(project: project.id, apiKey: apiKey, app: app)
    }

    /// Sends a code; real numbers outside dev mode get a freshly minted app token unless `token` is given.
    @discardableResult
    func send(_ number: String?, app: String = "com.example.app", ip: String = "203.0.113.7", token: String?? = nil,
              region: String? = nil) throws -> PhoneSignIn.SendResult {
        let needsToken = !project.devMode && number != nil && project.testPhoneNumbers[number!] == nil
        let t: String? = try token ?? (needsToken ? appToken(app: PhoneSignIn.tokenApp(app, project: project)) : nil)
        return try flow.sendCode(.init(phoneNumber: number, defaultRegion: region, appToken: t, apiKey: "key-1", appID: app,
                                       remoteAddress: ip, composeSMS: { "Your code is \($0)." }))
    }

    func signIn(_ sessionInfo: String?, _ code: String?, op: PhoneSignIn.Operation = .signUpOrIn, idToken: String? = nil,
                ip: String = "203.0.113.7") throws -> PhoneSignIn.SignInResult {
        try flow.signIn(.init(sessionInfo: sessionInfo, code: code, idToken: idToken, operation: op, remoteAddress: ip))
    }

    func signIn(proof: String?, number: String?, op: PhoneSignIn.Operation = .signUpOrIn, idToken: String? = nil) throws -> PhoneSignIn.SignInResult {
        try flow.signIn(.init(temporaryProof: proof, phoneNumber: number, idToken: idToken, operation: op, remoteAddress: "203.0.113.7"))
    }

    func smsMessages() throws -> [OutboxMessage] { try store.messages(project: project.id, channel: .sms, limit: 1000) }

    /// The code in the newest SMS (from its `#123456` origin-bound line).
    func lastCode() throws -> String {
        guard let body = try smsMessages().last?.body, let hash = body.lastIndex(of: "#") else { return "" }
        return String(body[body.index(after: hash)...])
    }

    /// Signs in (creating the account) with a fresh code for `number`; returns account and tokens.
    func signedInUser(_ number: String) throws -> (Account, IssuedTokens) {
        let s = try send(number)
        let code = try project.testPhoneNumbers[number] ?? lastCode()
        guard case let .signedIn(account, tokens?, _) = try signIn(s.sessionInfo, code) else { throw AuthError(.internalError, "not signed in") }
        return (account, tokens)
    }

    /// An account with only an email, and an ID token for it.
    func emailUser(_ email: String = "ana@example.com") throws -> (Account, String) {
        var a = Account(projectID: project.id, localID: "email-user-\(email.count)", createdAt: clock.now())
        a.email = email
        a.emailVerified = true
        a.upsertProvider(ProviderInfo(providerID: "password", rawID: email, email: email))
        try store.insertAccount(a)
        return (a, try tokens.mintIDToken(for: a, provider: "password", store: store))
    }
}

/// The wire message of whatever a flow threw.
func wireError(_ body: () throws -> Any) -> String? {
    do { _ = try body(); return nil } catch let e as AuthError { return e.message } catch { return "\(error)" }
}
