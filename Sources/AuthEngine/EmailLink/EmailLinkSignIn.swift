import AuthCrypto

/// The outcome of `accounts:signInWithEmailLink` (firebase-wire.md §2.4) or of the hosted page's confirmation.
public struct EmailLinkSignInResult: Sendable {
    public let account: Account
    public let isNewUser: Bool
    /// ID and refresh token (nil when the caller asked for none, e.g. the hosted page sets a
    /// cookie, or when a second factor must follow).
    public let tokens: IssuedTokens?
    /// Set when the account has a second factor: the sign-in finishes with it (`PhoneMFA`).
    public var challenge: MFAChallenge? = nil
}

extension EmailLinks {
    public static let mismatchDetail = "The email provided does not match the sign-in email address."

    /// `accounts:signInWithEmailLink` (firebase-wire.md §2.4, §5.2): the address must be the one
    /// the link was sent to; the code is consumed once; the account is the `idToken` user (linking),
    /// else the owner of the address, else a new account. A first email-link sign-in over an
    /// unverified address removes its password and revokes earlier sessions.
    public func signIn(email rawEmail: String?, oobCode: String?, idToken: String? = nil, issueTokens: Bool = true,
                       remoteAddress: String? = nil) throws -> EmailLinkSignInResult {
        guard project.emailLink.enabled else { throw AuthError(.operationNotAllowed) }
        guard let rawEmail = nonEmpty(rawEmail) else { throw AuthError(.missingEmail) }
        guard let code = nonEmpty(oobCode) else { throw AuthError(.missingOobCode) }
        let linking = try nonEmpty(idToken).map { try accounts.account(forIDToken: $0, project: project.id) }
        let record = try usableRecord(code, type: .emailSignIn)
        let email = EmailAddress.canonical(rawEmail)
        let mismatchKey = Hex.encode(record.codeHash)
        guard try limits.allows(EmailLinks.mismatchRule, key: mismatchKey) else { throw AuthError(.tooManyAttempts) }
        guard Digest.constantTimeEqual(email, record.email) else {
            try limits.hit(EmailLinks.mismatchRule, key: mismatchKey)
            throw AuthError(.invalidEmail, EmailLinks.mismatchDetail)
        }

        let now = clock.now()
        let completed = try store.transaction {
            guard try store.consumeEmailLink(hash: record.codeHash, at: now) else { throw AuthError(.invalidOobCode) }
            return try completeSignIn(email: email, linking: linking, issueTokens: issueTokens, remoteAddress: remoteAddress, at: now)
        }
        return try signed(completed)
    }

    /// A sign-in `completeSignIn` recorded, its ID token still to sign.
    struct Completed {
        let result: EmailLinkSignInResult
        let pending: SignInTokens.Pending?
    }

    /// Signs the ID token of a completed sign-in, after its transaction committed: the RSA
    /// signature does not hold the store's write lock (as for every other sign-in).
    func signed(_ c: Completed) throws -> EmailLinkSignInResult {
        guard let pending = c.pending else { return c.result }
        let issued = try SignInTokens(tokens: tokens, store: store, random: random, device: device).finish(pending)
        return EmailLinkSignInResult(account: c.result.account, isNewUser: c.result.isNewUser, tokens: issued)
    }

    /// What a used link or short code does, inside the transaction that used it: the account is
    /// the `idToken` user (linking), else the owner of the address, else a new account; a user
    /// with a second factor gets a pending credential instead of tokens. `via` goes into the
    /// audit row's detail (`code` for a short code; nil for the link).
    func completeSignIn(email: String, linking: (Account, VerifiedToken)?, issueTokens: Bool, remoteAddress: String?, at now: Millis,
                        via: String? = nil) throws -> Completed {
        let owner = try store.account(project: project.id, email: email)
        var account: Account
        var isNew = false
        if let (linked, token) = linking {
            if let owner, owner.localID != linked.localID { throw AuthError(.emailExists) }
            guard let fresh = try store.account(project: project.id, localID: linked.localID) else { throw AuthError(.userNotFound) }
            // Linking sets or replaces the account's email: a sensitive change.
            try SensitiveChange.check(fresh, proof: SignInProof(token), now: now, recentSeconds: project.session.recentSignInSeconds)
            account = fresh
        } else if let owner {
            account = owner
        } else {
            account = Account(projectID: project.id, localID: try accounts.newLocalID(project: project.id, random: random), createdAt: now)
            isNew = true
        }
        if account.disabled { throw AuthError(.userDisabled) }
        if !isNew, account.email == email, !account.emailVerified {
            // The address was never proven: whoever set a password on it may not own it.
            account.passwordHash = nil
            account.validSince = now / 1000
        }
        account.email = email
        account.emailVerified = true
        account.emailLinkSignin = true
        account.upsertProvider(ProviderInfo(providerID: "password", rawID: email, email: email))
        // A user with a second factor is not signed in yet: the link is used, the address
        // proven, and a pending credential stands for the first factor until the second.
        if linking == nil, !isNew, PhoneMFA.requiresSecondFactor(account, project: project) {
            try store.updateAccount(account)
            try store.audit(AuditEvent(projectID: project.id, event: .emailLinkFirstFactor, localID: account.localID,
                                       remoteAddress: remoteAddress, detail: via), at: now)
            let challenge = try PhoneMFA.challenge(account, firstFactor: "password", store: store, clock: clock, random: random)
            return Completed(result: EmailLinkSignInResult(account: account, isNewUser: false, tokens: nil, challenge: challenge), pending: nil)
        }
        account.lastLoginAt = now
        if issueTokens { account.lastRefreshAt = now }
        if isNew { try store.insertAccount(account) } else { try store.updateAccount(account) }
        let pending = issueTokens ? try SignInTokens(tokens: tokens, store: store, random: random, device: device).record(for: account, provider: "password") : nil
        try store.audit(AuditEvent(projectID: project.id, event: isNew ? .emailLinkSignUp : .emailLinkSignIn,
                                   localID: account.localID, remoteAddress: remoteAddress, detail: via), at: now)
        return Completed(result: EmailLinkSignInResult(account: account, isNewUser: isNew, tokens: nil), pending: pending)
    }
}
