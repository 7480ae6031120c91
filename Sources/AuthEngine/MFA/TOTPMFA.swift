import AuthCrypto

/// TOTP as a second factor on Firebase's wire (`totpEnrollmentInfo`, `totpSessionInfo`,
/// `totpVerificationInfo`, `totpInfo`): enrolment hands the client a fresh secret and a
/// `sessionInfo` sealing it (bound to the user, ten minutes), the first right code enrols it;
/// sign-in takes a pending credential, the factor's id and a code (there is no sign-in start).
/// Secrets come from the `RandomSource`, are sealed at rest under the deployment's key
/// (`TOTPPolicy.sealingKey`, outside the database) and are never logged nor shown after
/// enrolment. A code is accepted once per factor and time step. Wrong codes spend the phone
/// codes' budgets: attempts per pending credential (or enrolment session), failures and checks
/// per client. Withdrawal is `PhoneMFA.withdraw`, the same for every factor.
public struct TOTPMFA {
    /// The device signing in, for the refresh tokens this flow issues (`SignInTokens.device`).
    public var device: SignInDevice?
    public let store: any GatehouseStore
    public let clock: any Clock
    public let random: any RandomSource
    public let tokens: TokenService
    public let project: ProjectSettings

    public init(store: any GatehouseStore, clock: any Clock, random: any RandomSource, tokens: TokenService, project: ProjectSettings) {
        self.store = store; self.clock = clock; self.random = random; self.tokens = tokens; self.project = project
    }

    public static let sessionPrefix = "ghtotp1."
    /// How long an enrolment may take from `start` to `finalize`.
    public static let enrolmentLifetime: Millis = 600_000

    var phoneMFA: PhoneMFA { PhoneMFA(store: store, clock: clock, random: random, tokens: tokens, project: project) }
    var phone: PhoneSignIn { PhoneSignIn(store: store, clock: clock, random: random, tokens: tokens, project: project) }
    var limits: Limits { Limits(store: store, clock: clock) }

    /// TOTP needs MFA on, TOTP on and a sealing key.
    public func requireEnabled() throws -> [UInt8] {
        guard project.mfa.allowsPhone, project.totp.enabled, let key = project.totp.sealingKey, key.count == SealedBox.keyLength else {
            throw AuthError(.operationNotAllowed, "TOTP based MFA not enabled.")
        }
        return key
    }

    // MARK: Enrolment

    /// What `mfaEnrollment:start` answers (`totpSessionInfo`).
    public struct EnrolmentStart: Sendable {
        /// Base32, what an authenticator app is given.
        public let sharedSecretKey: String
        public let sessionInfo: String
        public let finalizeBy: Millis
        /// The `otpauth://` URI for a QR code (the hosted account page shows it; the SDK builds its own).
        public let uri: String
    }

    public func startEnrolment(idToken: String?) throws -> EnrolmentStart {
        let key = try requireEnabled()
        let (account, verified) = try phoneMFA.accounts.account(forIDToken: idToken, project: project.id)
        return try startEnrolment(account: account, proof: SignInProof(verified), key: key)
    }

    /// The hosted account page's start (a session's proof).
    public func startEnrolment(account: Account, proof: SignInProof) throws -> EnrolmentStart {
        try startEnrolment(account: account, proof: proof, key: try requireEnabled())
    }

    func startEnrolment(account: Account, proof: SignInProof, key: [UInt8]) throws -> EnrolmentStart {
        try phoneMFA.checkEligible(account, firstFactor: proof.firstFactor)
        try phoneMFA.checkRecent(account, proof)
        if account.mfaEnrollments.count >= MFAEnrollment.maxPerAccount { throw AuthError(.secondFactorLimitExceeded) }
        let secret = random.bytes(TOTP.secretLength)
        let finalizeBy = clock.now() + TOTPMFA.enrolmentLifetime
        var payload = TOTPMFA.bigEndian(finalizeBy)
        payload += secret
        let box = try SealedBox.seal(payload, key: key, aad: TOTPMFA.enrolmentAAD(project: project.id, localID: account.localID))
        let issuer = project.smsOriginDomain
        return EnrolmentStart(sharedSecretKey: Base32.encode(secret), sessionInfo: TOTPMFA.sessionPrefix + Base64URL.encode(box),
                              finalizeBy: finalizeBy, uri: TOTP.uri(secret: secret, account: account.email ?? account.localID, issuer: issuer))
    }

    public func finishEnrolment(idToken: String?, sessionInfo: String?, code: String?, displayName: String?,
                                remoteAddress: String) throws -> (account: Account, enrollment: MFAEnrollment, tokens: IssuedTokens) {
        _ = try requireEnabled()
        let (account, verified) = try phoneMFA.accounts.account(forIDToken: idToken, project: project.id)
        let done = try finishEnrolment(account: account, proof: SignInProof(verified), sessionInfo: sessionInfo, code: code,
                                       displayName: displayName, remoteAddress: remoteAddress, issueTokens: true)
        guard let issued = done.tokens else { throw AuthError(.internalError, "enrolment issued no tokens") }
        return (done.account, done.enrollment, issued)
    }

    /// `mfaEnrollment:finalize` with `totpVerificationInfo`: the first right code for the sealed
    /// secret enrols it (once per `sessionInfo`). The first factor a user enrols ends their other
    /// sessions, as for a phone.
    public func finishEnrolment(account: Account, proof: SignInProof, sessionInfo: String?, code: String?, displayName: String?,
                                remoteAddress: String, issueTokens: Bool) throws -> PhoneMFA.Enrolled {
        let key = try requireEnabled()
        try phoneMFA.checkEligible(account, firstFactor: proof.firstFactor)
        try phoneMFA.checkRecent(account, proof)
        let name = try PhoneMFA.displayName(displayName)
        guard let sessionInfo, !sessionInfo.isEmpty else { throw AuthError(.missingSessionInfo) }
        guard let code, !code.isEmpty else { throw AuthError(.missingCode) }
        guard sessionInfo.hasPrefix(TOTPMFA.sessionPrefix), sessionInfo.utf8.count <= 512,
              let box = Base64URL.decode(sessionInfo.dropFirst(TOTPMFA.sessionPrefix.utf8.count)),
              let payload = SealedBox.open(box, key: key, aad: TOTPMFA.enrolmentAAD(project: project.id, localID: account.localID)),
              payload.count == 8 + TOTP.secretLength else { throw AuthError(.invalidSessionInfo) }
        let finalizeBy = TOTPMFA.int64(payload[..<8])
        let secret = Array(payload[8...])
        let sessionKey = Hex.encode(Digest.sha256(sessionInfo))
        let issuer = SignInTokens(tokens: tokens, store: store, random: random, device: device)

        let outcome: CodeOutcome<(Account, MFAEnrollment, SignInTokens.Pending?)> = try checked(remoteAddress: remoteAddress) { client, now in
            if now >= finalizeBy { return .refused(AuthError(.sessionExpired)) }
            guard try limits.allows(TOTPMFA.attemptRule(project), key: "enrol|" + sessionKey) else { return .refused(AuthError(.sessionExpired)) }
            guard var fresh = try store.account(project: project.id, localID: account.localID) else { throw AuthError(.userNotFound) }
            if fresh.disabled { throw AuthError(.userDisabled) }
            try phoneMFA.checkRecent(fresh, proof, now: now)
            if fresh.mfaEnrollments.count >= MFAEnrollment.maxPerAccount { throw AuthError(.secondFactorLimitExceeded) }
            guard let step = TOTP.acceptedStep(code, secret: secret, now: now, adjacent: project.totp.adjacentIntervals, after: .min) else {
                _ = try limits.record(TOTPMFA.attemptRule(project), key: "enrol|" + sessionKey)
                try ActivityCounters.wrongCode(store, project: project.id, .totp, at: now)
                return .wrongCode(budgetExceeded: !(try limits.record(PhoneSignIn.failureRule(project.phone), client: client, scope: project.id)))
            }
            // One enrolment per sessionInfo: a second finalize with it finds its use counted.
            guard try limits.record(TOTPMFA.usedRule, key: "enrol|" + sessionKey) else { return .refused(AuthError(.sessionExpired)) }
            let id = phoneMFA.newEnrollmentID(in: fresh)
            let sealed = try SealedBox.seal(secret, key: key, aad: TOTPMFA.factorAAD(project: project.id, localID: fresh.localID, enrollmentID: id))
            let enrollment = MFAEnrollment(enrollmentID: id, totp: TOTPFactor(sealedSecret: Base64URL.encode(sealed), lastStep: step),
                                           displayName: name, enrolledAt: now)
            let pending = try phoneMFA.add(enrollment, to: &fresh, firstFactor: proof.firstFactor, remoteAddress: remoteAddress, now: now,
                                           issueTokens: issueTokens)
            return .done((fresh, enrollment, pending))
        }
        let (enrolled, enrollment, pending) = try outcome.value()
        return PhoneMFA.Enrolled(account: enrolled, enrollment: enrollment, tokens: try pending.map { try issuer.finish($0) })
    }

    // MARK: Sign-in

    /// `mfaSignIn:finalize` with `mfaEnrollmentId` and `totpVerificationInfo`: a right code of
    /// that TOTP factor, for a step after the last one accepted, completes the pending sign-in.
    public func finishSignIn(pendingCredential: String?, enrollmentID: String?, code: String?, remoteAddress: String,
                             issueTokens: Bool = true) throws -> PhoneMFA.SignedIn {
        let key = try requireEnabled()
        guard let pendingCredential, !pendingCredential.isEmpty else { throw AuthError(.missingCredential, "Please set MFA Pending Credential.") }
        guard let enrollmentID, !enrollmentID.isEmpty else {
            throw AuthError(.missingMFAEnrollmentID, "No second factor identifier is provided.")
        }
        guard let code, !code.isEmpty else { throw AuthError(.missingCode) }
        let record = try phoneMFA.pending(pendingCredential)
        let attemptsKey = "sign-in|" + Hex.encode(record.credentialHash)
        let issuer = SignInTokens(tokens: tokens, store: store, random: random, device: device)

        let outcome: CodeOutcome<(Account, MFAEnrollment, SignInTokens.Pending?)> = try checked(remoteAddress: remoteAddress) { client, now in
            guard try limits.allows(TOTPMFA.attemptRule(project), key: attemptsKey) else {
                // Its attempts are spent: the pending sign-in is over (a new first factor starts another).
                _ = try store.consumeMFAPending(hash: record.credentialHash, now: now)
                return .refused(AuthError(.invalidMFAPendingCredential))
            }
            guard var account = try store.account(project: project.id, localID: record.localID) else { throw AuthError(.userNotFound) }
            if account.disabled { throw AuthError(.userDisabled) }
            guard let index = account.mfaEnrollments.firstIndex(where: { $0.enrollmentID == enrollmentID }),
                  let factor = account.mfaEnrollments[index].totp else { throw AuthError(.mfaEnrollmentNotFound) }
            guard let sealed = Base64URL.decode(factor.sealedSecret),
                  let secret = SealedBox.open(sealed, key: key, aad: TOTPMFA.factorAAD(project: project.id, localID: account.localID,
                                                                                       enrollmentID: enrollmentID)) else {
                throw AuthError(.internalError, "a TOTP secret does not open under the configured key")
            }
            guard let step = TOTP.acceptedStep(code, secret: secret, now: now, adjacent: project.totp.adjacentIntervals,
                                               after: factor.lastStep) else {
                _ = try limits.record(TOTPMFA.attemptRule(project), key: attemptsKey)
                try ActivityCounters.wrongCode(store, project: project.id, .totp, at: now)
                return .wrongCode(budgetExceeded: !(try limits.record(PhoneSignIn.failureRule(project.phone), client: client, scope: project.id)))
            }
            guard try store.consumeMFAPending(hash: record.credentialHash, now: now) else { return .refused(AuthError(.invalidMFAPendingCredential)) }
            account.mfaEnrollments[index].totp?.lastStep = step
            account.lastLoginAt = now
            if issueTokens { account.lastRefreshAt = now }
            try store.updateAccount(account)
            try store.audit(AuditEvent(projectID: project.id, event: .mfaSignIn, localID: account.localID, remoteAddress: remoteAddress,
                                       detail: enrollmentID), at: now)
            let enrollment = account.mfaEnrollments[index]
            let pending = issueTokens
                ? try issuer.record(for: account, provider: record.firstFactor, authTime: now / 1000,
                                    secondFactor: SecondFactor(factor: "totp", identifier: enrollmentID))
                : nil
            return .done((account, enrollment, pending))
        }
        let (account, enrollment, pending) = try outcome.value()
        return PhoneMFA.SignedIn(account: account, enrollment: enrollment, firstFactor: record.firstFactor,
                                 tokens: try pending.map { try issuer.finish($0) })
    }

    // MARK: Budgets and sealing

    enum CodeOutcome<T> {
        case done(T), refused(AuthError), wrongCode(budgetExceeded: Bool)
        func value() throws -> T {
            switch self {
            case let .done(v): return v
            case let .refused(e): throw e
            case let .wrongCode(exceeded): throw exceeded ? AuthError(.tooManyAttempts) : AuthError(.invalidCode)
            }
        }
    }

    /// A code check in one write transaction, on the phone codes' per-client budgets: the check
    /// is counted first and committed with whatever follows (a refusal or a wrong code returns
    /// rather than throws, so its counts stay); a client past its failures gets no check.
    func checked<T>(remoteAddress: String, _ body: (ClientAddress, Millis) throws -> CodeOutcome<T>) throws -> CodeOutcome<T> {
        let client = project.client(remoteAddress)
        let perAddress = phone.verifyRule
        let failures = PhoneSignIn.failureRule(project.phone)
        do {
            return try store.transaction { () -> CodeOutcome<T> in
                guard try limits.record(perAddress, client: client, scope: project.id) else { return .refused(AuthError(.tooManyAttempts)) }
                if try !limits.allows(failures, client: client, scope: project.id) { return .refused(AuthError(.tooManyAttempts)) }
                return try body(client, clock.now())
            }
        } catch {
            // Rolled back (refused by a rule that throws, or the store failed): the check still counts.
            _ = try? limits.record(perAddress, client: client, scope: project.id)
            throw error
        }
    }

    /// Wrong codes per pending credential (or enrolment session): the phone codes' attempts per code.
    static func attemptRule(_ project: ProjectSettings) -> Limits.Rule {
        Limits.Rule("totp-attempts", max: project.phone.maxAttemptsPerSession, per: 3600)
    }

    /// An enrolment session's one use (counted on success).
    static let usedRule = Limits.Rule("totp-enrol-used", max: 1, per: 3600)

    static func enrolmentAAD(project: String, localID: String) -> [UInt8] { Array("gatehouse-totp-enrol|\(project)|\(localID)".utf8) }
    static func factorAAD(project: String, localID: String, enrollmentID: String) -> [UInt8] {
        Array("gatehouse-totp-factor|\(project)|\(localID)|\(enrollmentID)".utf8)
    }

    static func bigEndian(_ v: Int64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: v) >> UInt64(56 - 8 * $0)) } }
    static func int64(_ bytes: ArraySlice<UInt8>) -> Int64 { Int64(bitPattern: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
}
