import AuthCrypto

/// Phone sign-in, step 2: `accounts:signInWithPhoneNumber` (firebase-wire.md §2.2, §5.1).
///
/// Wrong codes: `maxAttemptsPerSession` per sessionInfo, then `SESSION_EXPIRED`; a per-client
/// failure budget per day that survives new codes, then `TOO_MANY_ATTEMPTS_TRY_LATER`. No budget
/// is the number's: the owner holding their own sessionInfo and the right code is never refused
/// because of someone else's guesses (docs/security.md). Verifying the code, consuming it and
/// the account change happen in one transaction; a wrong code is counted in the same committed
/// transaction before the error is thrown.
extension PhoneSignIn {
    /// `operation` of the request (iOS: sign in, reauthenticate, link, update phone number).
    public enum Operation: String, Sendable {
        case unspecified = "VERIFY_OP_UNSPECIFIED"
        case signUpOrIn = "SIGN_UP_OR_IN"
        case reauth = "REAUTH"
        case update = "UPDATE"
        case link = "LINK"

        /// The wire value: a name, or its index in the enum (firebase-wire.md §1.3 rule 3).
        public init?(wire: String?) {
            guard let wire, !wire.isEmpty else { self = .unspecified; return }
            let all: [Operation] = [.unspecified, .signUpOrIn, .reauth, .update, .link]
            if let i = Int(wire) {
                guard all.indices.contains(i) else { return nil }
                self = all[i]
            } else {
                guard let op = Operation(rawValue: wire) else { return nil }
                self = op
            }
        }
    }

    /// The fields of a `signInWithPhoneNumber` request (or the hosted page's code form).
    public struct SignInRequest {
        public var sessionInfo: String?
        public var code: String?
        public var temporaryProof: String?
        public var phoneNumber: String?
        public var idToken: String?
        public var operation: Operation
        public var remoteAddress: String
        /// False for the hosted page, which sets a session cookie instead of returning tokens.
        public var issueTokens: Bool

        public init(sessionInfo: String? = nil, code: String? = nil, temporaryProof: String? = nil, phoneNumber: String? = nil,
                    idToken: String? = nil, operation: Operation = .signUpOrIn, remoteAddress: String, issueTokens: Bool = true) {
            self.sessionInfo = sessionInfo; self.code = code; self.temporaryProof = temporaryProof; self.phoneNumber = phoneNumber
            self.idToken = idToken; self.operation = operation; self.remoteAddress = remoteAddress; self.issueTokens = issueTokens
        }
    }

    /// What `signInWithPhoneNumber` answers: tokens, or a `temporaryProof` (firebase-wire.md §2.2).
    public enum SignInResult: Sendable, Equatable {
        /// Signed in (or linked / re-authenticated): the account after the change.
        case signedIn(account: Account, tokens: IssuedTokens?, isNewUser: Bool)
        /// The number was verified but belongs to another account: a proof to retry with.
        case numberInUse(temporaryProof: String, expiresIn: Int64, phoneNumber: String)
    }

    public static let proofLifetimeSeconds: Int64 = 3600

    public func signIn(_ request: SignInRequest) throws -> SignInResult {
        guard (request.temporaryProof ?? "").isEmpty else {
            // The proof path counts the attempt in a transaction of its own.
            try Limits(store: store, clock: clock).hit(verifyRule, client: project.client(request.remoteAddress), scope: project.id)
            return try finish(signIn(proof: request.temporaryProof ?? "", request))
        }
        let completion = try verifyCode(sessionInfo: request.sessionInfo, code: request.code, purpose: .signIn,
                                        remoteAddress: request.remoteAddress) { record in
            try complete(record.phoneNumber, request, viaProof: false)
        }
        return try finish(completion)
    }

    /// What the transaction of `verifyCode` decided, acted on after its commit.
    enum CodeCheck<T> { case done(T), refused(AuthError), wrongCode(budgetExceeded: Bool) }

    /// Code checks per client address per 5 minutes.
    var verifyRule: Limits.Rule { Limits.Rule("phone-verify-ip-5min", max: policy.verifyAttemptsPerIPPer5Min, per: 300) }

    /// The code check every phone flow shares (first-factor sign-in, a second factor's enrolment
    /// and sign-in), in one write transaction: the address's attempt, the code's state and
    /// purpose, the client's failure budget, the code itself, its consumption, then `complete`
    /// with the verified record. A refusal returns from the transaction (so what it counted
    /// commits) and is thrown after the commit; a code sent for another purpose is unknown here.
    func verifyCode<T>(sessionInfo: String?, code: String?, purpose: PhoneCodePurpose, remoteAddress: String,
                       complete: (PhoneVerificationRecord) throws -> T) throws -> T {
        let limits = Limits(store: store, clock: clock)
        let perAddress = verifyRule
        let client = project.client(remoteAddress)
        guard let sessionInfo, !sessionInfo.isEmpty, let code, !code.isEmpty else {
            try limits.hit(perAddress, client: client, scope: project.id)
            if (sessionInfo ?? "").isEmpty { throw AuthError(.missingSessionInfo) }
            throw AuthError(.missingCode)
        }
        let keys = try PhoneKeys.load(store: store, random: random, at: clock.now())
        let failures = PhoneSignIn.failureRule(policy)

        let outcome: CodeCheck<T>
        do {
            outcome = try store.transaction {
                // The address's attempt is counted first, and committed with whatever follows:
                // a refusal returns (commits) instead of throwing (rolling back).
                guard try limits.record(perAddress, client: client, scope: project.id) else { return .refused(AuthError(.tooManyAttempts)) }
                let record: PhoneVerificationRecord
                do { record = try lookUp(sessionInfo) } catch let e as AuthError { return .refused(e) }
                guard record.purpose == purpose else { return .refused(AuthError(.invalidSessionInfo)) }
                let now = clock.now()
                if record.consumedAt != nil || record.supersededAt != nil || now >= record.expiresAt
                    || record.attempts >= policy.maxAttemptsPerSession { return .refused(AuthError(.sessionExpired)) }
                if try !limits.allows(failures, client: client, scope: project.id) { return .refused(AuthError(.tooManyAttempts)) }
                let valid = code.utf8.count == 6 && code.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
                let given = keys.codeHash(valid ? code : "", nonce: record.nonce)
                guard valid, Digest.constantTimeEqual(given, record.codeHash) else {
                    _ = try store.recordWrongPhoneCode(sessionHash: record.sessionHash, maxAttempts: policy.maxAttemptsPerSession)
                    let within = try limits.record(failures, client: client, scope: project.id)
                    try ActivityCounters.wrongCode(store, project: project.id, purpose == .signIn ? .phone : .mfaPhone, at: now)
                    return .wrongCode(budgetExceeded: !within)
                }
                guard try store.consumePhoneVerification(sessionHash: record.sessionHash, now: now, maxAttempts: policy.maxAttemptsPerSession) else {
                    return .refused(AuthError(.sessionExpired))
                }
                return .done(try complete(record))
            }
        } catch {
            // Rolled back (the change was refused or the store failed): the attempt still counts.
            _ = try? limits.record(perAddress, client: client, scope: project.id)
            throw error
        }
        switch outcome {
        case let .done(value): return value
        case let .refused(error): throw error
        case let .wrongCode(exceeded): throw exceeded ? AuthError(.tooManyAttempts) : AuthError(.invalidCode)
        }
    }

    /// The `temporaryProof` + `phoneNumber` path: no code, the proof stands for the verification.
    func signIn(proof: String, _ request: SignInRequest) throws -> Completion {
        guard let raw = request.phoneNumber, !raw.isEmpty else { throw AuthError(.missingPhoneNumber) }
        let number = try PhoneSignIn.parse(raw, project: project)
        return try store.transaction {
            let hash = PhoneSignIn.hash(proof: proof)
            guard proof.hasPrefix(PhoneSignIn.proofPrefix), proof.utf8.count <= 512, let rec = try store.phoneProof(hash: hash),
                  rec.projectID == project.id, Digest.constantTimeEqual(rec.phoneNumber, number.e164), clock.now() < rec.expiresAt else {
                throw AuthError(.invalidTemporaryProof)
            }
            let result = try complete(number.e164, request, viaProof: true)
            if case .signedIn = result { _ = try store.deletePhoneProof(hash: hash) }
            return result
        }
    }

    /// What `complete` decided inside the transaction; the ID token is signed after the commit.
    enum Completion {
        case signedIn(account: Account, tokens: SignInTokens.Pending?, isNewUser: Bool)
        case numberInUse(temporaryProof: String, expiresIn: Int64, phoneNumber: String)
    }

    /// The answer to a committed sign-in: signs its ID token (outside the store's write lock).
    func finish(_ completion: Completion) throws -> SignInResult {
        switch completion {
        case let .signedIn(account, pending, isNew):
            let issued = try pending.map { try SignInTokens(tokens: tokens, store: store, random: random, device: device).finish($0) }
            return .signedIn(account: account, tokens: issued, isNewUser: isNew)
        case let .numberInUse(proof, expiresIn, number):
            return .numberInUse(temporaryProof: proof, expiresIn: expiresIn, phoneNumber: number)
        }
    }

    /// Applies the operation to the verified number (inside the caller's transaction).
    func complete(_ e164: String, _ request: SignInRequest, viaProof: Bool) throws -> Completion {
        let now = clock.now()
        let owner = try store.account(project: project.id, phoneNumber: e164)
        let linking = request.operation == .link || request.operation == .update
            || (request.operation != .reauth && !(request.idToken ?? "").isEmpty)
        var account: Account
        var isNew = false
        if request.operation == .reauth {
            guard let owner else { throw AuthError(.userNotFound) }
            account = owner
        } else if linking {
            let token: VerifiedToken
            (account, token) = try Accounts(store: store, tokens: tokens).account(forIDToken: request.idToken, project: project.id)
            // Linking or changing the phone changes how one signs in.
            try SensitiveChange.check(account, proof: SignInProof(token), now: now, recentSeconds: project.session.recentSignInSeconds)
            if let owner, owner.localID != account.localID {
                if viaProof { throw AuthError(.phoneNumberExists) }
                return try mintProof(e164, at: now)
            }
            account.phoneNumber = e164
        } else if let owner {
            account = owner
        } else {
            account = Account(projectID: project.id, localID: try Accounts(store: store, tokens: tokens).newLocalID(project: project.id, random: random),
                              createdAt: now)
            account.phoneNumber = e164
            isNew = true
        }
        // A sign-in or a re-authentication by phone would hand out tokens without the second
        // factor, and a linked phone would become such a first factor (firebase-wire.md §2.2).
        if PhoneMFA.requiresSecondFactor(account, project: project) {
            throw AuthError(.unsupportedFirstFactor, "A phone number cannot be set as a first factor on an SMS based MFA user.")
        }
        if account.disabled { throw AuthError(.userDisabled) }
        let providers = account.providers
        account.upsertProvider(ProviderInfo(providerID: "phone", rawID: e164, phoneNumber: e164))
        account.lastLoginAt = now
        if request.issueTokens { account.lastRefreshAt = now }
        if isNew {
            try store.insertAccount(account)
        } else if linking {
            try store.updateAccount(account)
        } else {
            // A returning user's phone provider is usually already there as it is: the JSON
            // column is then left alone.
            try store.recordPhoneSignIn(account, providersChanged: account.providers != providers)
        }
        let event: AuditEventName = isNew ? .phoneSignUp : linking ? .phoneLink : request.operation == .reauth ? .phoneReauth : .phoneSignIn
        try store.audit(AuditEvent(projectID: project.id, event: event, localID: account.localID, remoteAddress: request.remoteAddress), at: now)
        let pending = request.issueTokens
            ? try SignInTokens(tokens: tokens, store: store, random: random, device: device).record(for: account, provider: "phone", authTime: now / 1000)
            : nil
        return .signedIn(account: account, tokens: pending, isNewUser: isNew)
    }

    /// A `temporaryProof` for a verified number owned by another account, valid one hour.
    func mintProof(_ e164: String, at now: Millis) throws -> Completion {
        let proof = PhoneSignIn.proofPrefix + random.token(bytes: 48)
        try store.insertPhoneProof(PhoneProofRecord(proofHash: PhoneSignIn.hash(proof: proof), projectID: project.id, phoneNumber: e164,
                                                    createdAt: now, expiresAt: now + PhoneSignIn.proofLifetimeSeconds * 1000))
        return .numberInUse(temporaryProof: proof, expiresIn: PhoneSignIn.proofLifetimeSeconds, phoneNumber: e164)
    }
}
