import AuthCrypto

/// The short code beside an email link (docs/configuration-email.md "The code beside the link"):
/// six digits from the CSPRNG in the same email as the link, for a person who reads their mail
/// on another device than the one they sign in on.
///
/// A code is the link's twin, not a second credential: it is stored with its link (keyed hashes
/// only, `EmailCodeKeys`), and using either uses both. It works only where it was asked for:
/// the request named a secret (the hosted page's pending cookie, or an app's own
/// `emailCodeBinding`), and the code is taken only with that secret shown again. So a stranger
/// who asks for a code to someone's address cannot use what the owner receives, and the owner's
/// mail is no use to whoever reads it over their shoulder without the asking browser. Ten
/// minutes (never past the link), five tries, then dead; wrong codes and refusals count on the
/// client's daily failure budget, never on the address, so nobody locks the owner out.
extension EmailLinks {
    public static let codeDigits = 6
    public static let codeLifetimeSeconds: Int64 = 600
    /// Tries per code (each counted before the digits are compared).
    public static let codeAttempts = 5
    /// A binding secret's length: long enough not to be guessed alongside the code, short
    /// enough to stay a field.
    public static let bindingLength = 16...256
    /// Wrong codes and refused tries per client network (and 8 × per block) per day.
    public static let codeFailureRule = Limits.Rule("emailcode-failures-client-day", max: 20, per: 86400)

    public static let bindingInvalidDetail = "emailCodeBinding must be 16 to 256 printable ASCII characters."
    public static let bindingUnusedDetail = "emailCodeBinding is only for EMAIL_SIGNIN links that are emailed."
    public static let codeBindingDetail = "The code was asked for on another browser or app: open the link, or ask for a new code here."
    public static let codeTriesDetail = "Too many wrong codes for this request: ask for a new one."
    public static let codeExpiredDetail = "No code of this address can be used: it expired, or it or its link was used."

    /// The binding secret of a request, checked; nil when none was given.
    public static func checkBinding(_ raw: String?) throws -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard bindingLength.contains(raw.utf8.count), raw.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw AuthError(.invalidArgument, bindingInvalidDetail)
        }
        return raw
    }

    /// The stored form of a new code for `link`: ten minutes, never past the link.
    func issueCode(_ digits: String, binding: String, for link: EmailLinkRecord, at now: Millis) throws -> EmailShortCode {
        let keys = try EmailCodeKeys.load(store: store, random: random, at: now)
        return EmailShortCode(hash: keys.codeHash(digits, link: link.codeHash), binding: keys.bindingHash(binding),
                              expiresAt: min(now + EmailLinks.codeLifetimeSeconds * 1000, link.expiresAt))
    }

    /// What the transaction of a code check decided, acted on after its commit.
    enum CodeOutcome { case done(Completed), refused(AuthError) }

    /// Signs in with the short code of a sign-in link to `email`, exactly as the link would
    /// (`completeSignIn`: the same account, second factor, audit row; the link is used with it).
    /// `binding` is the secret the request was bound to. Refusals, in this order: the client's
    /// failure budget spent (`TOO_MANY_ATTEMPTS_TRY_LATER`); no code of the address open where
    /// it is asked, but one open elsewhere (`CREDENTIAL_MISMATCH`: another browser or app;
    /// the digits are not even compared); this request's codes out of tries
    /// (`TOO_MANY_ATTEMPTS_TRY_LATER : Too many wrong codes…`); none open at all
    /// (`SESSION_EXPIRED`); wrong digits (`INVALID_CODE`). Each refusal is one failure of the
    /// client, counted in the check's transaction, which commits before the error is thrown.
    public func signIn(email rawEmail: String?, code: String?, binding: String?, idToken: String? = nil, issueTokens: Bool = true,
                       remoteAddress: String) throws -> EmailLinkSignInResult {
        guard project.emailLink.enabled else { throw AuthError(.operationNotAllowed) }
        guard let rawEmail = nonEmpty(rawEmail) else { throw AuthError(.missingEmail) }
        guard let code = nonEmpty(code) else { throw AuthError(.missingCode) }
        guard let address = EmailAddress.validated(rawEmail) else { throw AuthError(.invalidEmail) }
        let linking = try nonEmpty(idToken).map { try accounts.account(forIDToken: $0, project: project.id) }
        let email = EmailAddress.canonical(address)
        let client = project.client(remoteAddress)
        let limits = self.limits
        let failures = EmailLinks.codeFailureRule
        let now = clock.now()
        let keys = try EmailCodeKeys.load(store: store, random: random, at: now)
        // Longer than any binding can be: hashed as it comes, it would only fail to match.
        let shown = nonEmpty(binding).flatMap { $0.utf8.count <= 1024 ? keys.bindingHash($0) : nil }

        let outcome: CodeOutcome = try store.transaction {
            if try !limits.allows(failures, client: client, scope: project.id) { return .refused(AuthError(.tooManyAttempts)) }
            func failure(_ error: AuthError) throws -> CodeOutcome {
                let within = try limits.record(failures, client: client, scope: project.id)
                return .refused(within ? error : AuthError(.tooManyAttempts))
            }
            let links = try store.emailLinksWithCodes(project: project.id, email: email, since: now - EmailLinks.codeLifetimeSeconds * 1000,
                                                      limit: 10)
            // A code is open while it and its link are unused and unexpired; spent, once its tries are.
            func open(_ r: EmailLinkRecord) -> Bool {
                guard let c = r.shortCode else { return false }
                return r.requestType == .emailSignIn && r.consumedAt == nil && r.expiresAt > now && c.expiresAt > now
            }
            func spent(_ r: EmailLinkRecord) -> Bool { (r.shortCode?.attempts ?? 0) >= EmailLinks.codeAttempts }
            let mine = links.filter { r in
                guard let shown, let c = r.shortCode else { return false }
                return Digest.constantTimeEqual(shown, c.binding)
            }
            let candidates = mine.filter { open($0) && !spent($0) }
            if candidates.isEmpty {
                if mine.contains(where: { open($0) && spent($0) }) { return try failure(AuthError(.tooManyAttempts, EmailLinks.codeTriesDetail)) }
                if links.contains(where: open) { return try failure(AuthError(.credentialMismatch, EmailLinks.codeBindingDetail)) }
                return try failure(AuthError(.sessionExpired, EmailLinks.codeExpiredDetail))
            }
            // Every open code of this request takes the try before any is compared: concurrent
            // guesses each need a try of their own, so a code meets at most `codeAttempts`.
            let tried = try candidates.filter { try store.takeEmailCodeAttempt(hash: $0.codeHash, maxAttempts: EmailLinks.codeAttempts) }
            if tried.isEmpty { return try failure(AuthError(.tooManyAttempts, EmailLinks.codeTriesDetail)) }
            let wellFormed = code.utf8.count == EmailLinks.codeDigits && code.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
            let match = tried.first { r in
                guard let c = r.shortCode else { return false }
                return Digest.constantTimeEqual(keys.codeHash(wellFormed ? code : "", link: r.codeHash), c.hash)
            }
            guard wellFormed, let match else { return try failure(AuthError(.invalidCode)) }
            guard try store.consumeEmailCode(hash: match.codeHash, at: now) else {
                return try failure(AuthError(.sessionExpired, EmailLinks.codeExpiredDetail))
            }
            return .done(try completeSignIn(email: email, linking: linking, issueTokens: issueTokens, remoteAddress: remoteAddress,
                                            at: now, via: "code"))
        }
        switch outcome {
        case let .done(completed): return try signed(completed)
        case let .refused(error): throw error
        }
    }
}
