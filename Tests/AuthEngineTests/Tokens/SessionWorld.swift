import AuthCrypto
import AuthStore
import JSONValue
@testable import AuthEngine
import TestSupport

/// One project's worth of real store, fixed clock, seeded randomness and signing keys, plus the
/// session feature's flows wired to them.
final class SessionWorld {
    static let project = "demo-gatehouse"
    let store: SQLStore
    let clock: FixedClock
    let random: SeededRandom
    let keyRing: KeyRing
    let tokens: TokenService
    let cache: SessionCache

    init(seed: UInt64 = 7) throws {
        store = try makeStore()
        clock = FixedClock()
        random = SeededRandom(seed: seed)
        keyRing = KeyRing(clock: clock)
        tokens = TokenService(keyRing: keyRing, clock: clock)
        cache = SessionCache()
        try keyRing.ensureKey(store: store, random: random)
    }

    var refresh: RefreshTokens { RefreshTokens(store: store, tokens: tokens, random: random) }
    var sessions: Sessions { Sessions(store: store, tokens: tokens, random: random) }
    var admin: AccountAdmin { AccountAdmin(store: store, clock: clock, random: random, cache: cache) }
    var profile: AccountProfile { AccountProfile(store: store, tokens: tokens, random: random, cache: cache) }
    var accounts: Accounts { Accounts(store: store, tokens: tokens) }

    /// Inserts a phone user.
    @discardableResult
    func user(_ id: String = "user-1", phone: String? = "+33612345678", email: String? = nil) throws -> Account {
        var a = Account(projectID: SessionWorld.project, localID: id, createdAt: clock.now())
        a.phoneNumber = phone
        a.email = email
        a.lastLoginAt = clock.now()
        if let phone { a.upsertProvider(ProviderInfo(providerID: "phone", rawID: phone, phoneNumber: phone)) }
        try store.insertAccount(a)
        return a
    }

    func account(_ id: String = "user-1") throws -> Account { try store.account(project: SessionWorld.project, localID: id)! }

    /// A completed sign-in: ID token + refresh token.
    func signIn(_ id: String = "user-1", provider: String = "phone", device: SignInDevice? = nil) throws -> IssuedTokens {
        try SignInTokens(tokens: tokens, store: store, random: random, device: device).issue(for: try account(id), provider: provider)
    }

    func refreshOnce(_ token: String) throws -> RefreshTokens.Result {
        try refresh.refresh(grantType: "refresh_token", refreshToken: token, project: SessionWorld.project, graceSeconds: 10)
    }

    /// The decoded payload of a JWT (no verification).
    static func claims(_ jwt: String) -> JSON {
        let parts = jwt.split(separator: ".")
        return (try? JSONParser().parse(Base64URL.decode(String(parts[1])) ?? [])) ?? .null
    }
}
