import AuthCrypto

/// Phone as a second factor (firebase-wire.md §2.17, §5.4; gatehouse.md "Second factor"): enrolling
/// a phone, withdrawing it, and signing in with it after a first factor handed out a pending
/// credential. The codes are the phone sign-in's (`PhoneSignIn`): same code rules, reentrancy,
/// attempt budget, per-number and per-client limits, region policy, app verification, test
/// numbers and SMS text; each code is bound to its purpose (`PhoneCodePurpose`).
public struct PhoneMFA {
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

    var phone: PhoneSignIn { PhoneSignIn(store: store, clock: clock, random: random, tokens: tokens, project: project) }
    var accounts: Accounts { Accounts(store: store, tokens: tokens) }

    /// First factors a second factor cannot follow (firebase-wire.md §5.4).
    static let ineligibleFirstFactors: Set<String> = ["anonymous", "phone", "custom", "gc.apple.com"]

    /// Every MFA call needs the project's phone second factor on.
    public func requireEnabled() throws {
        guard project.mfa.allowsPhone else { throw AuthError(.operationNotAllowed, "SMS based MFA not enabled.") }
    }

    /// How a client asks for a code: the number (enrolment only), its app verification, the
    /// calling app and the SMS text, as for a first-factor send.
    public struct CodeRequest {
        public var phoneNumber: String?
        public var appToken: String?
        public var iosCredential: IOSCredential?
        public var apiKey: String?
        public var appID: String
        public var remoteAddress: String
        public var composeSMS: (_ code: String) -> String
        /// False when the request carried no `phoneEnrollmentInfo` at all (refused after the
        /// caller's token is checked, as Firebase orders it).
        public var infoPresent: Bool

        public init(phoneNumber: String? = nil, appToken: String? = nil, iosCredential: IOSCredential? = nil, apiKey: String? = nil,
                    appID: String = "", remoteAddress: String, infoPresent: Bool = true, composeSMS: @escaping (_ code: String) -> String) {
            self.phoneNumber = phoneNumber; self.appToken = appToken; self.iosCredential = iosCredential; self.apiKey = apiKey; self.appID = appID
            self.remoteAddress = remoteAddress; self.infoPresent = infoPresent; self.composeSMS = composeSMS
        }
    }

    // MARK: Enrolment

    /// `mfaEnrollment:start`: checks the caller may enrol this number, then sends it a code.
    public func startEnrolment(idToken: String?, _ request: CodeRequest) throws -> PhoneSignIn.SendResult {
        try requireEnabled()
        let (account, verified) = try accounts.account(forIDToken: idToken, project: project.id)
        return try startEnrolment(account: account, proof: SignInProof(verified), request)
    }

    /// Enrolment started for a signed-in `account` whose sign-in `proof` is a session's (the
    /// hosted account page) or an ID token's. The rules are the wire's.
    public func startEnrolment(account: Account, proof: SignInProof, _ request: CodeRequest) throws -> PhoneSignIn.SendResult {
        try requireEnabled()
        try checkEligible(account, firstFactor: proof.firstFactor)
        try checkRecent(account, proof)
        guard request.infoPresent else { throw AuthError(.invalidArgument, "((Missing phoneEnrollmentInfo.))") }
        let number = try PhoneSignIn.parse(request.phoneNumber, project: project)
        try checkNewFactor(number.e164, on: account)
        return try phone.sendCode(PhoneSignIn.SendRequest(
            phoneNumber: number.e164, appToken: request.appToken, iosCredential: request.iosCredential, apiKey: request.apiKey,
            appID: request.appID,
            remoteAddress: request.remoteAddress, purpose: PhoneCodePurpose.enrolment(localID: account.localID),
            composeSMS: request.composeSMS))
    }

    /// What an enrolment added; `tokens` nil when the caller asked for none (the hosted page
    /// starts a session instead).
    public struct Enrolled: Sendable {
        public let account: Account
        public let enrollment: MFAEnrollment
        public let tokens: IssuedTokens?
    }

    /// `mfaEnrollment:finalize`: the code sent for this user's enrolment adds the phone as a
    /// factor; the answer is new tokens that carry it as the sign-in's second factor.
    /// `infoPresent` false: the request carried no `phoneVerificationInfo` (refused after the token).
    public func finishEnrolment(idToken: String?, sessionInfo: String?, code: String?, displayName: String?,
                                remoteAddress: String, infoPresent: Bool = true) throws -> (account: Account, enrollment: MFAEnrollment, tokens: IssuedTokens) {
        try requireEnabled()
        let (account, verified) = try accounts.account(forIDToken: idToken, project: project.id)
        let done = try finishEnrolment(account: account, proof: SignInProof(verified), sessionInfo: sessionInfo, code: code,
                                       displayName: displayName, remoteAddress: remoteAddress, issueTokens: true, infoPresent: infoPresent)
        guard let tokens = done.tokens else { throw AuthError(.internalError, "enrolment issued no tokens") }
        return (done.account, done.enrollment, tokens)
    }

    /// Enrolment finished for a signed-in `account` (see `startEnrolment(account:…)`). The first
    /// factor a user enrols ends every other session and refresh family of theirs (as "sign out
    /// other devices" does): whoever copied a credential before is out, and the caller's new
    /// tokens (or the hosted page's new session) carry the factor.
    public func finishEnrolment(account: Account, proof: SignInProof, sessionInfo: String?, code: String?, displayName: String?,
                                remoteAddress: String, issueTokens: Bool, infoPresent: Bool = true) throws -> Enrolled {
        try requireEnabled()
        try checkEligible(account, firstFactor: proof.firstFactor)
        try checkRecent(account, proof)
        let firstFactor = proof.firstFactor
        guard infoPresent else { throw AuthError(.invalidArgument, "((Missing phoneVerificationInfo.))") }
        let name = try PhoneMFA.displayName(displayName)
        let (enrolled, enrollment, pending) = try phone.verifyCode(
            sessionInfo: sessionInfo, code: code, purpose: PhoneCodePurpose.enrolment(localID: account.localID),
            remoteAddress: remoteAddress) { record -> (Account, MFAEnrollment, SignInTokens.Pending?) in
            guard var fresh = try store.account(project: project.id, localID: account.localID) else { throw AuthError(.userNotFound) }
            if fresh.disabled { throw AuthError(.userDisabled) }
            let now = clock.now()
            // Checked again on the account as it is now: a factor added or removed meanwhile changes the rule.
            try checkRecent(fresh, proof, now: now)
            try checkNewFactor(record.phoneNumber, on: fresh)
            let enrollment = MFAEnrollment(enrollmentID: newEnrollmentID(in: fresh), phoneNumber: record.phoneNumber,
                                           displayName: name, enrolledAt: now)
            let pending = try add(enrollment, to: &fresh, firstFactor: firstFactor, remoteAddress: remoteAddress, now: now,
                                  issueTokens: issueTokens)
            return (fresh, enrollment, pending)
        }
        let issued = try pending.map { try SignInTokens(tokens: tokens, store: store, random: random, device: device).finish($0) }
        return Enrolled(account: enrolled, enrollment: enrollment, tokens: issued)
    }

    /// Adds a checked factor to `fresh` (read and locked in the caller's transaction) and writes it;
    /// the first factor a user enrols ends every other credential of theirs. Returns the
    /// recorded sign-in whose tokens carry the factor, when asked for tokens. Every factor's
    /// enrolment ends here (phone and TOTP).
    func add(_ enrollment: MFAEnrollment, to fresh: inout Account, firstFactor: String, remoteAddress: String, now: Millis,
             issueTokens: Bool) throws -> SignInTokens.Pending? {
        if fresh.mfaEnrollments.isEmpty {
            let ended = try Revocation.revokeAll(&fresh, store: store, now: now)
            try store.audit(AuditEvent(projectID: project.id, event: .revoke, localID: fresh.localID, remoteAddress: remoteAddress,
                                       detail: "first second factor: refreshTokens=\(ended.tokens) sessions=\(ended.sessions)"), at: now)
        }
        fresh.mfaEnrollments.append(enrollment)
        if issueTokens { fresh.lastRefreshAt = now }
        try store.updateAccount(fresh)
        try store.audit(AuditEvent(projectID: project.id, event: .mfaEnrol, localID: fresh.localID, remoteAddress: remoteAddress,
                                   detail: enrollment.enrollmentID), at: now)
        guard issueTokens else { return nil }
        return try SignInTokens(tokens: tokens, store: store, random: random, device: device).record(
            for: fresh, provider: firstFactor, authTime: now / 1000,
            secondFactor: SecondFactor(factor: enrollment.factorID, identifier: enrollment.enrollmentID))
    }

    /// `mfaEnrollment:withdraw`: removes a factor and revokes the sessions and tokens issued
    /// before (as Firebase does); the caller gets new tokens, with no second factor.
    public func withdraw(idToken: String?, enrollmentID: String?, remoteAddress: String) throws -> (account: Account, tokens: IssuedTokens) {
        try requireEnabled()
        let (account, verified) = try accounts.account(forIDToken: idToken, project: project.id)
        let done = try withdraw(account: account, proof: SignInProof(verified), enrollmentID: enrollmentID,
                                remoteAddress: remoteAddress, issueTokens: true)
        guard let tokens = done.tokens else { throw AuthError(.internalError, "withdrawal issued no tokens") }
        return (done.account, tokens)
    }

    /// Withdrawal for a signed-in `account` (the hosted account page, which then starts a new
    /// session of its own: every earlier one is revoked here).
    public func withdraw(account: Account, proof: SignInProof, enrollmentID: String?, remoteAddress: String,
                         issueTokens: Bool) throws -> (account: Account, tokens: IssuedTokens?) {
        try requireEnabled()
        guard let enrollmentID, !enrollmentID.isEmpty else { throw AuthError(.missingMFAEnrollmentID) }
        let (updated, pending) = try store.transaction { () -> (Account, SignInTokens.Pending?) in
            guard var fresh = try store.account(project: project.id, localID: account.localID) else { throw AuthError(.userNotFound) }
            guard fresh.mfaEnrollments.contains(where: { $0.enrollmentID == enrollmentID }) else { throw AuthError(.mfaEnrollmentNotFound) }
            let now = clock.now()
            try checkRecent(fresh, proof, now: now)
            fresh.mfaEnrollments.removeAll { $0.enrollmentID == enrollmentID }
            // Every credential issued before is revoked; the new ones are issued after.
            try Revocation.revokeAll(&fresh, store: store, now: now)
            if issueTokens { fresh.lastRefreshAt = now }
            try store.updateAccount(fresh)
            try store.audit(AuditEvent(projectID: project.id, event: .mfaWithdraw, localID: fresh.localID, remoteAddress: remoteAddress,
                                       detail: enrollmentID), at: now)
            // The caller keeps the second factor it passed unless that is the one removed.
            let kept = proof.secondFactor.flatMap { $0.identifier == enrollmentID ? nil : $0 }
            let pending = issueTokens
                ? try SignInTokens(tokens: tokens, store: store, random: random, device: device).record(
                    for: fresh, provider: proof.firstFactor, authTime: proof.authTime, secondFactor: kept)
                : nil
            return (fresh, pending)
        }
        return (updated, try pending.map { try SignInTokens(tokens: tokens, store: store, random: random, device: device).finish($0) })
    }

    /// Why `account`, signed in with `firstFactor`, may not enrol a second factor (nil: it may).
    public func enrolmentRefusal(_ account: Account, firstFactor: String) -> AuthError? {
        do { try checkEligible(account, firstFactor: firstFactor); return nil } catch let e as AuthError { return e } catch {
            return AuthError(.internalError)
        }
    }

    /// A factor's change needs a recent sign-in that passed a factor the account still has
    /// (`SensitiveChange`).
    func checkRecent(_ account: Account, _ proof: SignInProof, now: Millis? = nil) throws {
        try SensitiveChange.check(account, proof: proof, now: now ?? clock.now(), recentSeconds: project.session.recentSignInSeconds)
    }

    func checkEligible(_ account: Account, firstFactor: String) throws {
        if PhoneMFA.ineligibleFirstFactors.contains(firstFactor) {
            throw AuthError(.unsupportedFirstFactor, "MFA is not available for the given first factor.")
        }
        guard account.email != nil, account.emailVerified else {
            throw AuthError(.unverifiedEmail, "Need to verify email first before enrolling second factors.")
        }
    }

    func checkNewFactor(_ e164: String, on account: Account) throws {
        if account.mfaEnrollments.contains(where: { $0.phoneNumber == e164 }) {
            throw AuthError(.secondFactorExists, "Phone number already enrolled as second factor for this account.")
        }
        if account.mfaEnrollments.count >= MFAEnrollment.maxPerAccount { throw AuthError(.secondFactorLimitExceeded) }
    }

    /// A new enrollment id: 28 characters of the user-id alphabet, not used by the account.
    func newEnrollmentID(in account: Account) -> String {
        while true {
            let id = random.userID()
            if !account.mfaEnrollments.contains(where: { $0.enrollmentID == id }) { return id }
        }
    }

    /// A factor's name as the user gave it: at most 128 bytes, no control characters.
    static func displayName(_ raw: String?) throws -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard raw.utf8.count <= 128, !raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthError(.invalidArgument, "Invalid displayName.")
        }
        return raw
    }
}
