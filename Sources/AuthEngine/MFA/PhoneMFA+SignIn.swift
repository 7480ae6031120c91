import AuthCrypto

/// A first factor passed by a user with a second factor: no tokens yet, a pending credential and
/// the hints of the factors (obfuscated numbers) instead.
public struct MFAChallenge: Sendable, Equatable {
    /// `mfaPendingCredential`: random, stored hashed, single use, `PhoneMFA.pendingLifetime` long.
    public let pendingCredential: String
    public let enrollments: [MFAEnrollment]
    /// When the credential stops being accepted (a hosted page's cookie lives as long).
    public let expiresAt: Millis
}

extension PhoneMFA {
    public static let pendingPrefix = "ghmfa1."
    /// Ten minutes to pass the second factor.
    public static let pendingLifetime: Millis = 600_000

    public static func hash(pendingCredential: String) -> [UInt8] { Digest.sha256(pendingCredential) }

    /// Whether a first factor of `account` must be followed by a second one.
    public static func requiresSecondFactor(_ account: Account, project: ProjectSettings) -> Bool {
        project.mfa.allowsPhone && !account.mfaEnrollments.isEmpty
    }

    /// Inside the first factor's transaction: the pending credential for `account`, bound to the
    /// project, the user and the first factor. The first factor's own record (a link, a code) is
    /// already consumed; `lastLoginAt` waits for the second factor.
    public static func challenge(_ account: Account, firstFactor: String, store: any MFAStore, clock: any Clock,
                                 random: any RandomSource) throws -> MFAChallenge {
        let now = clock.now()
        let credential = PhoneMFA.pendingPrefix + random.token(bytes: 32)
        let expiresAt = now + PhoneMFA.pendingLifetime
        try store.purgeMFAPending(before: now - PhoneMFA.pendingLifetime)
        try store.insertMFAPending(MFAPendingRecord(
            credentialHash: hash(pendingCredential: credential), projectID: account.projectID, localID: account.localID,
            firstFactor: firstFactor, authTime: now / 1000, createdAt: now, expiresAt: expiresAt))
        return MFAChallenge(pendingCredential: credential, enrollments: account.mfaEnrollments, expiresAt: expiresAt)
    }

    /// The pending sign-in a credential names, while it can still be finished.
    func pending(_ credential: String) throws -> MFAPendingRecord {
        guard credential.hasPrefix(PhoneMFA.pendingPrefix), credential.utf8.count <= 128,
              let record = try store.mfaPending(hash: PhoneMFA.hash(pendingCredential: credential)),
              record.projectID == project.id, record.consumedAt == nil, clock.now() < record.expiresAt else {
            throw AuthError(.invalidMFAPendingCredential)
        }
        return record
    }

    /// `mfaSignIn:start`: a code to the enrolled number of `enrollmentID` (never to a number the
    /// client names: iOS sends the hint's obfuscated one).
    public func startSignIn(pendingCredential: String?, enrollmentID: String?, _ request: CodeRequest) throws -> PhoneSignIn.SendResult {
        try requireEnabled()
        guard let pendingCredential, !pendingCredential.isEmpty else {
            throw AuthError(.missingMFAPendingCredential, "Request does not have MFA pending credential.")
        }
        guard let enrollmentID, !enrollmentID.isEmpty else {
            throw AuthError(.missingMFAEnrollmentID, "No second factor identifier is provided.")
        }
        let record = try pending(pendingCredential)
        guard let account = try store.account(project: project.id, localID: record.localID) else { throw AuthError(.userNotFound) }
        if account.disabled { throw AuthError(.userDisabled) }
        guard let enrollment = account.mfaEnrollments.first(where: { $0.enrollmentID == enrollmentID }) else {
            throw AuthError(.mfaEnrollmentNotFound)
        }
        // A TOTP factor has no code to send: its sign-in is `mfaSignIn:finalize` alone.
        guard let number = enrollment.phoneNumber else { throw AuthError(.invalidArgument, "TOTP factors need no mfaSignIn:start.") }
        return try phone.sendCode(PhoneSignIn.SendRequest(
            phoneNumber: number, appToken: request.appToken, iosCredential: request.iosCredential,
            apiKey: request.apiKey, appID: request.appID,
            remoteAddress: request.remoteAddress, purpose: PhoneCodePurpose.secondFactor(pending: record.credentialHash),
            composeSMS: request.composeSMS))
    }

    /// What `finishSignIn` signed in.
    public struct SignedIn: Sendable {
        public let account: Account
        public let enrollment: MFAEnrollment
        public let firstFactor: String
        /// Nil when the caller asked for none (the hosted page sets a session cookie instead).
        public let tokens: IssuedTokens?
    }

    /// `mfaSignIn:finalize`: the code sent for this pending sign-in completes it, once. The
    /// factor is the enrolled one whose number the code went to.
    /// `infoPresent` false: the request carried no `phoneVerificationInfo` (another provider).
    public func finishSignIn(pendingCredential: String?, sessionInfo: String?, code: String?, remoteAddress: String,
                             issueTokens: Bool = true, infoPresent: Bool = true) throws -> SignedIn {
        try requireEnabled()
        guard let pendingCredential, !pendingCredential.isEmpty else {
            throw AuthError(.missingCredential, "Please set MFA Pending Credential.")
        }
        guard infoPresent else { throw AuthError(.invalidArgument, "MFA provider not supported!") }
        let record = try pending(pendingCredential)
        let outcome = try phone.verifyCode(sessionInfo: sessionInfo, code: code,
                                           purpose: PhoneCodePurpose.secondFactor(pending: record.credentialHash),
                                           remoteAddress: remoteAddress) { verified -> (Account, MFAEnrollment, SignInTokens.Pending?) in
            let now = clock.now()
            guard try store.consumeMFAPending(hash: record.credentialHash, now: now) else { throw AuthError(.invalidMFAPendingCredential) }
            guard var account = try store.account(project: project.id, localID: record.localID) else { throw AuthError(.userNotFound) }
            if account.disabled { throw AuthError(.userDisabled) }
            guard let enrollment = account.mfaEnrollments.first(where: { $0.phoneNumber == verified.phoneNumber }) else {
                throw AuthError(.mfaEnrollmentNotFound)
            }
            account.lastLoginAt = now
            if issueTokens { account.lastRefreshAt = now }
            try store.updateAccount(account)
            try store.audit(AuditEvent(projectID: project.id, event: .mfaSignIn, localID: account.localID, remoteAddress: remoteAddress,
                                       detail: enrollment.enrollmentID), at: now)
            let pending = issueTokens
                ? try SignInTokens(tokens: tokens, store: store, random: random, device: device).record(
                    for: account, provider: record.firstFactor, authTime: now / 1000,
                    secondFactor: SecondFactor(identifier: enrollment.enrollmentID))
                : nil
            return (account, enrollment, pending)
        }
        let issued = try outcome.2.map { try SignInTokens(tokens: tokens, store: store, random: random, device: device).finish($0) }
        return SignedIn(account: outcome.0, enrollment: outcome.1, firstFactor: record.firstFactor, tokens: issued)
    }
}

extension PhoneMFA {
    /// The factors a pending sign-in may finish with (the hosted second-factor page lists them as
    /// hints); refuses a credential that is unknown, used or expired as `mfaSignIn:start` does.
    public func pendingEnrollments(_ credential: String?) throws -> [MFAEnrollment] {
        try requireEnabled()
        guard let credential, !credential.isEmpty else { throw AuthError(.missingCredential, "Please set MFA Pending Credential.") }
        let record = try pending(credential)
        guard let account = try store.account(project: project.id, localID: record.localID) else { throw AuthError(.userNotFound) }
        if account.disabled { throw AuthError(.userDisabled) }
        return account.mfaEnrollments
    }

    /// Step-ups one client may start (each a pending row, with no first factor to pay for it):
    /// 30 per 10 minutes, its block 8 × as many (`Limits.record(_:client:scope:)`).
    public static let stepUpRule = Limits.Rule("mfa-step-up-client-10min", max: 30, per: 600)

    /// A second factor asked of a user who is already signed in with `firstFactor` (nginx
    /// step-up, `/__/auth/verify?require=mfa`): a pending credential like a first factor's.
    /// `held` is the pending credential the browser already carries (the hosted page's cookie):
    /// while it is valid and this user's, from this first factor, it is answered again, so a
    /// reload or another protected location makes no new row. A new one is counted against the
    /// client's `stepUpRule`; past it, `TOO_MANY_ATTEMPTS_TRY_LATER` and no row.
    public func stepUp(_ account: Account, firstFactor: String, remoteAddress: String, held: String? = nil) throws -> MFAChallenge {
        try requireEnabled()
        if account.disabled { throw AuthError(.userDisabled) }
        guard !account.mfaEnrollments.isEmpty else { throw AuthError(.mfaEnrollmentNotFound) }
        if let held, let record = try heldPending(held), record.localID == account.localID, record.firstFactor == firstFactor {
            return MFAChallenge(pendingCredential: held, enrollments: account.mfaEnrollments, expiresAt: record.expiresAt)
        }
        return try store.transaction {
            try Limits(store: store, clock: clock).hit(PhoneMFA.stepUpRule, client: project.client(remoteAddress), scope: project.id)
            return try PhoneMFA.challenge(account, firstFactor: firstFactor, store: store, clock: clock, random: random)
        }
    }

    /// The record of a credential a client holds, while it can still be finished; nil otherwise.
    func heldPending(_ credential: String) throws -> MFAPendingRecord? {
        do { return try pending(credential) } catch let e as AuthError where e.code == .invalidMFAPendingCredential { return nil }
    }
}
