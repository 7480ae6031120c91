/// What a signed-in user may do to their own account with an ID token (firebase-wire.md §2.7,
/// §2.8, §2.9): change display name and photo, remove attributes or providers, delete the
/// account, and create an anonymous account.
public struct AccountProfile {
    /// The device signing in, for the refresh tokens this flow issues (`SignInTokens.device`).
    public var device: SignInDevice?
    /// Anonymous sign-ups per client address per hour (each one creates an account).
    public static let signUpsPerIPPerHour = Limits.Rule("signup-ip", max: 100, per: 3600)

    public let store: any AccountStore & SessionStore & SigningKeyStore & AuditStore & LimitStore & MFAStore
    public let tokens: TokenService
    public let random: any RandomSource
    public let cache: SessionCache?
    /// The project's window for a recent sign-in (`SessionPolicy.recentSignInSeconds`).
    public let recentSignInSeconds: Int64

    public init(store: any AccountStore & SessionStore & SigningKeyStore & AuditStore & LimitStore & MFAStore, tokens: TokenService,
                random: any RandomSource, cache: SessionCache? = nil, recentSignInSeconds: Int64 = SensitiveChange.defaultRecentSeconds) {
        self.store = store; self.tokens = tokens; self.random = random; self.cache = cache; self.recentSignInSeconds = recentSignInSeconds
    }

    /// User-facing update. `customAttributes` → `INSUFFICIENT_PERMISSION`; `disableUser`,
    /// `password`, `email`, `phoneNumber` → `OPERATION_NOT_ALLOWED` (admin-only or done by a
    /// verified sign-in flow); privileged bookkeeping fields are ignored as Firebase does.
    public func update(idToken: String?, project: String, _ c: AccountChanges) throws -> Account {
        if c.customAttributes != nil { throw AuthError(.insufficientPermission) }
        if c.disabled != nil { throw AuthError(.operationNotAllowed) }
        if c.password != nil { throw AccountRules.noPasswords }
        if c.email != nil { throw AuthError(.operationNotAllowed, "Change the email address with a verification link.") }
        if c.phoneNumber != nil { throw AuthError(.operationNotAllowed, "Change the phone number by signing in with it.") }
        let now = tokens.clock.now()
        let updated: Account = try store.transaction {
            var (a, token) = try Accounts(store: store, tokens: tokens).account(forIDToken: idToken, project: project)
            // Unlinking a provider or removing the email or phone changes how one signs in.
            if !c.deleteProviders.isEmpty || c.deleteAttributes.contains(where: { $0 != "DISPLAY_NAME" && $0 != "PHOTO_URL" }) {
                try SensitiveChange.check(a, proof: SignInProof(token), now: now, recentSeconds: recentSignInSeconds)
            }
            if let n = c.displayName { a.displayName = try AccountRules.text(n, "displayName") }
            if let u = c.photoURL { a.photoURL = try AccountRules.text(u, "photoUrl") }
            try AccountRules.apply(deleteAttributes: c.deleteAttributes, deleteProviders: c.deleteProviders, to: &a)
            try store.updateAccount(a)
            try store.audit(AuditEvent(projectID: project, event: .profileUpdate, localID: a.localID), at: now)
            return a
        }
        cache?.evict(project: project, localID: updated.localID)
        return updated
    }

    /// Deletes the account the ID token names, with its tokens and sessions.
    public func delete(idToken: String?, project: String) throws {
        let (a, token) = try Accounts(store: store, tokens: tokens).account(forIDToken: idToken, project: project)
        try SensitiveChange.check(a, proof: SignInProof(token), now: tokens.clock.now(), recentSeconds: recentSignInSeconds)
        try AccountAdmin(store: store, clock: tokens.clock, random: random, cache: cache, actor: nil).delete(project: project, localID: a.localID)
    }

    /// Anonymous `accounts:signUp`: a new account and tokens with `sign_in_provider: "anonymous"`
    /// (and top-level `provider_id: "anonymous"`). Over the per-address limit →
    /// `TOO_MANY_ATTEMPTS_TRY_LATER`.
    public func signUpAnonymous(project: String, remoteAddress: String,
                                client: ClientAddress? = nil) throws -> (Account, IssuedTokens) {
        let client = client ?? ClientAddress(remoteAddress)
        try Limits(store: store, clock: tokens.clock).hit(AccountProfile.signUpsPerIPPerHour, client: client, scope: project)
        let now = tokens.clock.now()
        let issuer = SignInTokens(tokens: tokens, store: store, random: random, device: device)
        let (account, pending) = try store.transaction {
            let admin = AccountAdmin(store: store, clock: tokens.clock, random: random, actor: nil)
            var a = Account(projectID: project, localID: try admin.newLocalID(project: project), createdAt: now)
            a.anonymous = true
            a.lastLoginAt = now
            a.lastRefreshAt = now
            try store.insertAccount(a)
            let pending = try issuer.record(for: a, provider: "anonymous", authTime: now / 1000)
            try store.audit(AuditEvent(projectID: project, event: .anonymousSignUp, localID: a.localID, remoteAddress: remoteAddress), at: now)
            return (a, pending)
        }
        // Signed after the commit, as every sign-in's ID token is.
        return (account, try issuer.finish(pending))
    }
}
