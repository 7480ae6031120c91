import AuthStore
import Testing
@testable import AuthEngine
import TestSupport

/// The phone second factor over a real in-memory store: a production-mode project with MFA on
/// (app verification and send limits apply as for first-factor phone), a clock the tests move
/// and seeded randomness. Codes are read from the SMS in the outbox, or are a test number's.
final class MFAFixture {
    /// Real numbers: their codes are only in the SMS.
    static let phone = "+33612345678"
    static let otherPhone = "+33698765432"
    /// A test number: fixed code, no SMS.
    static let testNumber = "+15555550123"
    static let testCode = "654321"
    static let ip = "203.0.113.7"

    let store: SQLStore
    let clock = FixedClock()
    let random: SeededRandom
    let tokens: TokenService
    var project: ProjectSettings

    init(mfa: MFAState = .enabled, seed: UInt64 = 11, configure: (inout ProjectSettings) -> Void = { _ in }) throws {
        store = try makeStore()
        // The email-link tests' key: generating an RSA key per test would dominate the run time.
        try store.insertSigningKey(EmailLinkFixture.signingKey)
        random = SeededRandom(seed: seed)
        tokens = TokenService(keyRing: KeyRing(clock: clock), clock: clock)
        project = ProjectSettings(id: "mfa-project", apiKeys: ["key-1"], devMode: false, authorizedDomains: ["app.example.com"],
                                  testPhoneNumbers: [MFAFixture.testNumber: MFAFixture.testCode], smsOriginDomain: "auth.example.com")
        project.mfa = mfa
        configure(&project)
    }

    var mfa: PhoneMFA { PhoneMFA(store: store, clock: clock, random: random, tokens: tokens, project: project) }
    var phone: PhoneSignIn { PhoneSignIn(store: store, clock: clock, random: random, tokens: tokens, project: project) }
    var links: EmailLinks { EmailLinks(store: store, clock: clock, random: random, tokens: tokens, project: project) }
    var refresh: RefreshTokens { RefreshTokens(store: store, tokens: tokens, random: random) }
    var sessions: Sessions { Sessions(store: store, tokens: tokens, random: random) }

    // MARK: Accounts and first factors

    /// An email-link account (the usual MFA candidate) and an ID token of `provider`.
    func user(_ email: String? = "ada@example.com", verified: Bool = true, phone: String? = nil,
              provider: String = "password") throws -> (Account, String) {
        var a = Account(projectID: project.id, localID: random.userID(), createdAt: clock.now())
        a.email = email
        a.emailVerified = verified
        a.phoneNumber = phone
        if let email { a.upsertProvider(ProviderInfo(providerID: "password", rawID: email, email: email)) }
        if let phone { a.upsertProvider(ProviderInfo(providerID: "phone", rawID: phone, phoneNumber: phone)) }
        try store.insertAccount(a)
        return (a, try tokens.mintIDToken(for: a, provider: provider, store: store))
    }

    func account(_ localID: String) throws -> Account { try #require(try store.account(project: project.id, localID: localID)) }

    /// An email-link first factor: the link is sent (with the app token the web page would
    /// have) and used.
    func emailLinkSignIn(_ email: String = "ada@example.com", ip: String = MFAFixture.ip) throws -> EmailLinkSignInResult {
        var req = OobSendRequest(requestType: .emailSignIn, email: email, apiKey: "key-1", origin: "https://auth.example.com",
                                 lang: "en", remoteAddress: ip)
        req.settings.continueURL = "https://app.example.com/done"
        req.appToken = try appToken()
        let sent = try links.send(req) { _ in OobMessage(subject: "Sign in", text: "link", html: nil) }
        return try links.signIn(email: email, oobCode: sent.oobCode, remoteAddress: ip)
    }

    /// The challenge an enrolled user's email-link sign-in answers.
    func challenge(_ email: String = "ada@example.com", ip: String = MFAFixture.ip) throws -> MFAChallenge {
        try #require(try emailLinkSignIn(email, ip: ip).challenge)
    }

    // MARK: Codes

    func appToken() throws -> String {
        try AppTokens(store: store, clock: clock, random: random).mint(project: project.id, apiKey: "key-1", app: "web")
    }

    /// How a web client asks for a code: real numbers need an app token outside dev mode.
    func request(_ number: String? = nil, ip: String = MFAFixture.ip, withToken: Bool = true) throws -> PhoneMFA.CodeRequest {
        PhoneMFA.CodeRequest(phoneNumber: number, appToken: withToken ? try appToken() : nil, apiKey: "key-1", appID: "",
                             remoteAddress: ip, composeSMS: { "Your code is \($0)." })
    }

    func sms() throws -> [OutboxMessage] { try store.messages(project: project.id, channel: .sms, limit: 1000) }

    /// The code of the newest SMS to `number` (from its `#123456` origin-bound line), or the
    /// test number's fixed code.
    func code(to number: String) throws -> String {
        if let fixed = project.testPhoneNumbers[number] { return fixed }
        let body = try #require(try sms().last(where: { $0.recipient == number })?.body)
        let hash = try #require(body.lastIndex(of: "#"))
        return String(body[body.index(after: hash)...])
    }

    /// A 6-digit code that is not `code`.
    static func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

    // MARK: Enrolment and second-factor sign-in

    @discardableResult
    func startEnrolment(_ idToken: String?, _ number: String?, ip: String = MFAFixture.ip) throws -> PhoneSignIn.SendResult {
        try mfa.startEnrolment(idToken: idToken, request(number, ip: ip))
    }

    func finishEnrolment(_ idToken: String?, _ sessionInfo: String?, _ code: String?, name: String? = nil,
                         ip: String = MFAFixture.ip) throws -> (account: Account, enrollment: MFAEnrollment, tokens: IssuedTokens) {
        try mfa.finishEnrolment(idToken: idToken, sessionInfo: sessionInfo, code: code, displayName: name, remoteAddress: ip)
    }

    /// Enrols `number` for the holder of `idToken` with the code the SMS carried.
    @discardableResult
    func enrol(_ idToken: String, _ number: String = MFAFixture.phone, name: String? = nil) throws -> (account: Account, enrollment: MFAEnrollment, tokens: IssuedTokens) {
        let sent = try startEnrolment(idToken, number)
        return try finishEnrolment(idToken, sent.sessionInfo, try code(to: sent.phoneNumber), name: name)
    }

    /// A verified email-link user with `number` enrolled.
    func enrolledUser(_ email: String = "ada@example.com", _ number: String = MFAFixture.phone) throws -> (account: Account, enrollment: MFAEnrollment) {
        let (_, idToken) = try user(email)
        let r = try enrol(idToken, number)
        return (r.account, r.enrollment)
    }

    @discardableResult
    func startSignIn(_ pending: String?, _ enrollmentID: String?, number: String? = nil, ip: String = MFAFixture.ip) throws -> PhoneSignIn.SendResult {
        try mfa.startSignIn(pendingCredential: pending, enrollmentID: enrollmentID, request(number, ip: ip))
    }

    func finishSignIn(_ pending: String?, _ sessionInfo: String?, _ code: String?, ip: String = MFAFixture.ip) throws -> PhoneMFA.SignedIn {
        try mfa.finishSignIn(pendingCredential: pending, sessionInfo: sessionInfo, code: code, remoteAddress: ip)
    }

    /// Both factors: the challenge, a code to the enrolled number, its finish.
    func signInWithSecondFactor(_ email: String = "ada@example.com") throws -> PhoneMFA.SignedIn {
        let c = try challenge(email)
        let enrollment = try #require(c.enrollments.first)
        let sent = try startSignIn(c.pendingCredential, enrollment.enrollmentID)
        return try finishSignIn(c.pendingCredential, sent.sessionInfo, try code(to: sent.phoneNumber))
    }

    func verify(_ idToken: String) throws -> VerifiedToken {
        try tokens.verify(idToken, kind: .idToken, project: project.id, store: store)
    }
}
