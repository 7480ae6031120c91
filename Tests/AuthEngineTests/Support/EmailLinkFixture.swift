import AuthCrypto
import AuthStore
@testable import AuthEngine
import TestSupport

/// A project, store, clock and the email-link flows wired for one test.
final class EmailLinkFixture {
    /// One RSA key for every test (generating one per test would dominate the run time).
    static let signingKey: SigningKeyRecord = {
        let store = try! makeStore()
        return try! KeyRing(clock: FixedClock()).rotate(store: store, random: SeededRandom(seed: 7))
    }()

    static let origin = "https://auth.example.com"

    let store: SQLStore
    let clock = FixedClock()
    let random = SeededRandom()
    let tokens: TokenService
    var project: ProjectSettings
    /// Every message the compose closure was asked for.
    var composed: [OobMessageInput] = []

    init(devMode: Bool = false, configure: (inout ProjectSettings) -> Void = { _ in }) throws {
        store = try makeStore()
        try store.insertSigningKey(EmailLinkFixture.signingKey)
        tokens = TokenService(keyRing: KeyRing(clock: clock), clock: clock)
        project = ProjectSettings(
            id: "demo-email", apiKeys: ["key-1"], devMode: devMode, authorizedDomains: ["app.example.com", "*.example.org"],
            iosApps: [IOSApp(bundleID: "com.example.ios", teamID: "TEAMID1234", appID: "1:42:ios:abc")],
            androidApps: [AndroidApp(packageName: "com.example.android", sha256Fingerprints: ["AA:BB"], extraSchemes: ["exampleapp"])])
        configure(&project)
    }

    func appToken(app: String = "web") throws -> String {
        try AppTokens(store: store, clock: clock, random: random).mint(project: project.id, apiKey: "key-1", app: app)
    }

    var flows: EmailLinks { EmailLinks(store: store, clock: clock, random: random, tokens: tokens, project: project) }

    func request(_ type: OobRequestType? = .emailSignIn, email: String? = "Ada@Example.com", ip: String = "192.0.2.1",
                 settings: (inout ActionCodeSettings) -> Void = { _ in }) -> OobSendRequest {
        var r = OobSendRequest(requestType: type, email: email, apiKey: "key-1", origin: EmailLinkFixture.origin, lang: "fr", remoteAddress: ip)
        settings(&r.settings)
        // Sign-in links outside dev mode need app verification: a token as the challenge mints it.
        if type == .emailSignIn, !project.devMode { r.appToken = try? appToken() }
        return r
    }

    @discardableResult
    func send(_ req: OobSendRequest) throws -> OobSendResult {
        try flows.send(req) { input in
            self.composed.append(input)
            return OobMessage(subject: "Sign in \(input.issuedAt)", text: "Open \(input.link)", html: "<a href=\"\(input.link)\">x</a>")
        }
    }

    /// Sends a plain sign-in link to `email` and returns its code.
    func code(for email: String = "ada@example.com") throws -> String {
        try send(request(email: email) { $0.continueURL = "https://app.example.com/done" }).oobCode
    }

    func insertAccount(email: String?, verified: Bool = true, password: String? = nil, phone: String? = nil,
                       disabled: Bool = false) throws -> Account {
        var a = Account(projectID: project.id, localID: random.userID(), createdAt: clock.now())
        a.email = email
        a.emailVerified = verified
        a.passwordHash = password
        a.phoneNumber = phone
        a.disabled = disabled
        if let email { a.upsertProvider(ProviderInfo(providerID: "password", rawID: email, email: email)) }
        if let phone { a.upsertProvider(ProviderInfo(providerID: "phone", rawID: phone, phoneNumber: phone)) }
        try store.insertAccount(a)
        return a
    }

    func idToken(for account: Account) throws -> String {
        try tokens.mintIDToken(for: account, provider: "phone", store: store)
    }

    func outbox() throws -> [OutboxMessage] { try store.messages(project: project.id, channel: .email, limit: 100) }
}

/// The wire code of a thrown `AuthError` (nil when nothing or something else was thrown).
func authError(_ body: () throws -> Void) -> AuthError? {
    do { try body(); return nil } catch let e as AuthError { return e } catch { return nil }
}

/// Percent-decodes once (what `URLComponents.query` does).
func percentDecoded(_ s: String) -> String {
    var out: [UInt8] = []
    var bytes = Array(s.utf8)[...]
    while let c = bytes.popFirst() {
        if c == UInt8(ascii: "%"), bytes.count >= 2, let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) {
            out.append(v); bytes = bytes.dropFirst(2)
        } else { out.append(c) }
    }
    return String(decoding: out, as: UTF8.self)
}
