import AuthCrypto

/// Passkeys as a relying party (WebAuthn Level 3; docs/passkeys.md), on Firebase's preview wire
/// (`passkeyEnrollment:start|finalize`, `passkeySignIn:start|finalize`) and the hosted pages.
/// Challenges are random, single use, stored hashed, short-lived, bound to the project and, for
/// an enrolment, to the user. User verification is always required, so a passkey sign-in is
/// multi-factor on its own (the authenticator checked a PIN or a biometric). Every check a
/// client can drive is counted against its budgets, as the phone codes' are.
public struct Passkeys {
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

    /// The provider a passkey sign-in's tokens name (`firebase.sign_in_provider`).
    public static let provider = "passkey"
    static let challengeBytes = 32
    /// The COSE algorithms offered, in order of preference: ES256, EdDSA, RS256.
    public static let algorithms: [Int64] = [-7, -8, -257]
    /// A passkey's name: at most this many bytes.
    public static let maxNameBytes = 128

    var limits: Limits { Limits(store: store, clock: clock) }
    var policy: PasskeyPolicy { project.passkeys }

    public func requireEnabled() throws {
        guard policy.enabled else { throw AuthError(.passkeyNotEnabled) }
    }

    // MARK: Options

    /// `credentialCreationOptions` (§5.4): what `navigator.credentials.create` is given.
    public struct CreationOptions: Sendable {
        public let rpID: String
        public let rpName: String
        /// The user handle: the local id's bytes.
        public let userID: [UInt8]
        public let userName: String
        public let userDisplayName: String
        public let challenge: [UInt8]
        public let timeoutMillis: Int64
        /// The user's passkeys (base64url ids), so an authenticator that has one makes no second.
        public let excludeCredentials: [String]
        /// `none`, or `direct` when the project trusts attestation roots.
        public let attestation: String
    }

    /// `credentialRequestOptions` (§5.5): what `navigator.credentials.get` is given (no
    /// credentials listed: discoverable credentials, the authenticator picks the account).
    public struct RequestOptions: Sendable {
        public let rpID: String
        public let challenge: [UInt8]
        public let timeoutMillis: Int64
    }

    /// A registration as the client sent it: each binary field in base64url or standard base64.
    public struct RegistrationResponse: Sendable {
        public var id, rawID, type, clientDataJSON, attestationObject: String?
        public init(id: String?, rawID: String?, type: String?, clientDataJSON: String?, attestationObject: String?) {
            self.id = id; self.rawID = rawID; self.type = type; self.clientDataJSON = clientDataJSON; self.attestationObject = attestationObject
        }
    }

    /// An assertion as the client sent it.
    public struct AssertionResponse: Sendable {
        public var id, rawID, type, clientDataJSON, authenticatorData, signature, userHandle: String?
        public init(id: String?, rawID: String?, type: String?, clientDataJSON: String?, authenticatorData: String?, signature: String?,
                    userHandle: String?) {
            self.id = id; self.rawID = rawID; self.type = type; self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData; self.signature = signature; self.userHandle = userHandle
        }
    }

    // MARK: Enrolment

    public func startEnrolment(idToken: String?, remoteAddress: String) throws -> CreationOptions {
        try requireEnabled()
        let (account, verified) = try Accounts(store: store, tokens: tokens).account(forIDToken: idToken, project: project.id)
        return try startEnrolment(account: account, proof: SignInProof(verified), remoteAddress: remoteAddress)
    }

    /// A new enrolment challenge for `account`, whose sign-in (`proof`) must be recent and have
    /// passed its second factor (adding a passkey adds a way in).
    public func startEnrolment(account: Account, proof: SignInProof, remoteAddress: String) throws -> CreationOptions {
        try requireEnabled()
        if account.disabled { throw AuthError(.userDisabled) }
        try SensitiveChange.check(account, proof: proof, now: clock.now(), recentSeconds: project.session.recentSignInSeconds)
        let existing = try store.passkeys(project: project.id, localID: account.localID)
        if existing.count >= policy.maxPerUser { throw AuthError(.passkeyLimitExceeded) }
        let challenge = try newChallenge(localID: account.localID, remoteAddress: remoteAddress)
        let name = account.email ?? account.phoneNumber ?? account.localID
        return CreationOptions(rpID: project.passkeyRelyingPartyID, rpName: policy.rpName ?? project.passkeyRelyingPartyID,
                               userID: Array(account.localID.utf8), userName: name, userDisplayName: account.displayName ?? name,
                               challenge: challenge, timeoutMillis: policy.challengeSeconds * 1000,
                               excludeCredentials: existing.map(\.credentialID),
                               attestation: policy.attestationRoots == nil ? "none" : "direct")
    }

    public struct Enrolled: Sendable {
        public let account: Account
        public let passkey: PasskeyRecord
        public let tokens: IssuedTokens?
    }

    public func finishEnrolment(idToken: String?, response: RegistrationResponse?, name: String?, remoteAddress: String) throws -> Enrolled {
        try requireEnabled()
        let (account, verified) = try Accounts(store: store, tokens: tokens).account(forIDToken: idToken, project: project.id)
        return try finishEnrolment(account: account, proof: SignInProof(verified), response: response, name: name,
                                   remoteAddress: remoteAddress, issueTokens: true)
    }

    /// Checks a registration (§7.1) and stores its credential for `account`. With tokens, the
    /// caller's sign-in continues in new ones (an anonymous account is one no more).
    public func finishEnrolment(account: Account, proof: SignInProof, response: RegistrationResponse?, name rawName: String?,
                                remoteAddress: String, issueTokens: Bool) throws -> Enrolled {
        try requireEnabled()
        guard let response, let clientText = response.clientDataJSON, let attestationText = response.attestationObject else {
            throw AuthError(.missingAuthenticatorResponse)
        }
        let name = try Passkeys.name(rawName)
        let credentialID = try Passkeys.credentialID(id: response.id, rawID: response.rawID)
        guard response.type == nil || response.type == "public-key" else { throw WebAuthn.refuse("type is not public-key") }
        guard let clientBytes = Base64URL.decode(clientText), let attestationBytes = Base64URL.decode(attestationText) else {
            throw WebAuthn.refuse("a field that is not base64")
        }
        let client = try WebAuthn.ClientData(clientBytes)
        guard client.type == "webauthn.create" else { throw WebAuthn.refuse("clientDataJSON type is not webauthn.create") }
        try checkOrigin(client)
        let attestation = try WebAuthn.AttestationObject(attestationBytes)
        let data = attestation.authenticatorData
        try checkCommon(data)
        if let roots = policy.attestationRoots { try attestation.verifyTrusted(roots: roots, clientDataHash: Digest.sha256(clientBytes)) }
        guard let credential = data.credential else { throw WebAuthn.refuse("no attested credential") }
        guard Base64URL.encode(credential.id) == credentialID else { throw WebAuthn.refuse("the attested credential id is not the response's") }
        let (_, algorithm) = try WebAuthn.COSEKey.signatureKey(credential.key)
        let issuer = SignInTokens(tokens: tokens, store: store, random: random, device: device)

        let outcome: Outcome<(Account, PasskeyRecord, SignInTokens.Pending?)> = try checked(remoteAddress: remoteAddress) { _, now in
            try consume(client.challenge, enrolling: account.localID, now: now)
            guard var fresh = try store.account(project: project.id, localID: account.localID) else { throw AuthError(.userNotFound) }
            if fresh.disabled { throw AuthError(.userDisabled) }
            try SensitiveChange.check(fresh, proof: proof, now: now, recentSeconds: project.session.recentSignInSeconds)
            if let taken = try store.passkey(project: project.id, credentialID: credentialID) {
                throw taken.localID == fresh.localID ? AuthError(.passkeyExists) : AuthError(.credentialAlreadyInUse)
            }
            if try store.passkeys(project: project.id, localID: fresh.localID).count >= policy.maxPerUser {
                throw AuthError(.passkeyLimitExceeded)
            }
            let record = PasskeyRecord(projectID: project.id, credentialID: credentialID, localID: fresh.localID, publicKey: credential.publicKey,
                                       algorithm: algorithm, signCount: Int64(data.signCount), name: name, aaguid: credential.aaguid,
                                       backupEligible: data.has(WebAuthn.AuthenticatorData.backupEligible),
                                       backedUp: data.has(WebAuthn.AuthenticatorData.backedUp), createdAt: now)
            guard try store.insertPasskey(record) else { throw AuthError(.credentialAlreadyInUse) }
            fresh.anonymous = false
            if issueTokens { fresh.lastRefreshAt = now }
            try store.updateAccount(fresh)
            try store.audit(AuditEvent(projectID: project.id, event: .passkeyEnrol, localID: fresh.localID, remoteAddress: remoteAddress,
                                       detail: credentialID), at: now)
            let pending = issueTokens
                ? try issuer.record(for: fresh, provider: proof.firstFactor, authTime: proof.authTime, secondFactor: proof.secondFactor)
                : nil
            return .done((fresh, record, pending))
        }
        let (enrolled, record, pending) = try outcome.value()
        return Enrolled(account: enrolled, passkey: record, tokens: try pending.map { try issuer.finish($0) })
    }

    // MARK: Sign-in

    public func startSignIn(remoteAddress: String) throws -> RequestOptions {
        try requireEnabled()
        let challenge = try newChallenge(localID: nil, remoteAddress: remoteAddress)
        return RequestOptions(rpID: project.passkeyRelyingPartyID, challenge: challenge, timeoutMillis: policy.challengeSeconds * 1000)
    }

    /// What a passkey sign-in ends in.
    public enum SignedIn: Sendable {
        /// Signed in; tokens when asked for.
        case done(account: Account, passkey: PasskeyRecord, tokens: IssuedTokens?)
        /// A user with a second factor, when the project asks for it after a passkey.
        case secondFactor(account: Account, challenge: MFAChallenge)
    }

    /// Checks an assertion (§7.2) against the stored passkey and signs its user in.
    public func finishSignIn(response: AssertionResponse?, remoteAddress: String, issueTokens: Bool = true) throws -> SignedIn {
        try requireEnabled()
        guard let response, let clientText = response.clientDataJSON, let dataText = response.authenticatorData,
              let signatureText = response.signature else { throw AuthError(.missingAuthenticatorResponse) }
        let credentialID = try Passkeys.credentialID(id: response.id, rawID: response.rawID)
        guard response.type == nil || response.type == "public-key" else { throw WebAuthn.refuse("type is not public-key") }
        guard let clientBytes = Base64URL.decode(clientText), let dataBytes = Base64URL.decode(dataText),
              let signature = Base64URL.decode(signatureText) else { throw WebAuthn.refuse("a field that is not base64") }
        var userHandle: [UInt8]? = nil
        if let text = response.userHandle, !text.isEmpty {
            guard let h = Base64URL.decode(text) else { throw WebAuthn.refuse("userHandle is not base64") }
            userHandle = h
        }
        let clientData = try WebAuthn.ClientData(clientBytes)
        guard clientData.type == "webauthn.get" else { throw WebAuthn.refuse("clientDataJSON type is not webauthn.get") }
        try checkOrigin(clientData)
        let data = try WebAuthn.AuthenticatorData(dataBytes)
        try checkCommon(data)
        let signed = dataBytes + Digest.sha256(clientBytes)
        let issuer = SignInTokens(tokens: tokens, store: store, random: random, device: device)

        enum Ended { case tokens(Account, PasskeyRecord, SignInTokens.Pending?), secondFactor(Account, MFAChallenge) }
        let outcome: Outcome<Ended> = try checked(remoteAddress: remoteAddress) { client, now in
            try consume(clientData.challenge, enrolling: nil, now: now)
            guard var passkey = try store.passkey(project: project.id, credentialID: credentialID) else {
                return .failed(AuthError(.passkeyCredentialNotFound), client)
            }
            if let userHandle, userHandle != Array(passkey.localID.utf8) {
                return .failed(WebAuthn.refuse("userHandle is not the passkey's user"), client)
            }
            let key = try WebAuthn.COSEKey.signatureKey(stored: passkey.publicKey)
            guard key.verify(signature: signature, message: signed) else {
                return .failed(WebAuthn.refuse("the signature does not verify"), client)
            }
            let count = Int64(data.signCount)
            if (count != 0 || passkey.signCount != 0), count <= passkey.signCount {
                // A counter that did not grow: the credential may have been cloned (§6.1.1).
                tokens.log.warning("passkey sign counter regression in \(project.id): stored \(passkey.signCount), presented \(count)")
                try store.audit(AuditEvent(projectID: project.id, event: .passkeyCounterRegression, localID: passkey.localID,
                                           remoteAddress: remoteAddress, detail: passkey.credentialID, outcome: "refused"), at: now)
                return .failed(WebAuthn.refuse("the signature counter did not increase"), client)
            }
            guard var account = try store.account(project: project.id, localID: passkey.localID) else {
                return .failed(AuthError(.passkeyCredentialNotFound), client)
            }
            if account.disabled { throw AuthError(.userDisabled) }
            let backedUp = data.has(WebAuthn.AuthenticatorData.backedUp)
            guard try store.recordPasskeyUse(project: project.id, credentialID: credentialID, expectedCount: passkey.signCount,
                                             signCount: count, backedUp: backedUp, at: now) else {
                // Another use of the same credential got there first: this one is the stale one.
                return .failed(WebAuthn.refuse("the signature counter did not increase"), client)
            }
            passkey.signCount = count
            passkey.backedUp = backedUp
            passkey.lastUsedAt = now
            if !policy.skipSecondFactor, PhoneMFA.requiresSecondFactor(account, project: project) {
                return .done(.secondFactor(account, try PhoneMFA.challenge(account, firstFactor: Passkeys.provider, store: store,
                                                                           clock: clock, random: random)))
            }
            account.lastLoginAt = now
            if issueTokens { account.lastRefreshAt = now }
            try store.updateAccount(account)
            try store.audit(AuditEvent(projectID: project.id, event: .passkeySignIn, localID: account.localID, remoteAddress: remoteAddress,
                                       detail: credentialID), at: now)
            let pending = issueTokens ? try issuer.record(for: account, provider: Passkeys.provider, authTime: now / 1000) : nil
            return .done(.tokens(account, passkey, pending))
        }
        switch try outcome.value() {
        case let .tokens(account, passkey, pending):
            return .done(account: account, passkey: passkey, tokens: try pending.map { try issuer.finish($0) })
        case let .secondFactor(account, challenge):
            return .secondFactor(account: account, challenge: challenge)
        }
    }

    // MARK: Listing, naming, removal

    public func list(localID: String) throws -> [PasskeyRecord] { try store.passkeys(project: project.id, localID: localID) }

    /// Removes passkeys of `account` (a recent sign-in with its second factor, or a passkey's, as
    /// every change of how one signs in). A passkey stands for a second factor, so its removal is
    /// a factor's: every refresh family, session and pending second factor of the user ends, and
    /// every ID token issued before this second (`Revocation.revokeAll`); the caller goes on in new
    /// tokens or a new session. Unknown ids → `PASSKEY_ENROLLMENT_NOT_FOUND` and nothing removed.
    public func remove(account: Account, proof: SignInProof, credentialIDs: [String], remoteAddress: String) throws -> Account {
        guard !credentialIDs.isEmpty else { return account }
        return try store.transaction {
            let now = clock.now()
            guard var fresh = try store.account(project: project.id, localID: account.localID) else { throw AuthError(.userNotFound) }
            try SensitiveChange.check(fresh, proof: proof, now: now, recentSeconds: project.session.recentSignInSeconds)
            for id in credentialIDs {
                guard id.utf8.count <= 2048, try store.deletePasskey(project: project.id, localID: fresh.localID, credentialID: id) else {
                    throw AuthError(.passkeyEnrollmentNotFound)
                }
                try store.audit(AuditEvent(projectID: project.id, event: .passkeyRemove, localID: fresh.localID, remoteAddress: remoteAddress,
                                           detail: id), at: now)
            }
            let ended = try Revocation.revokeAll(&fresh, store: store, now: now)
            try store.updateAccount(fresh)
            try store.audit(AuditEvent(projectID: project.id, event: .revoke, localID: fresh.localID, remoteAddress: remoteAddress,
                                       detail: "passkey removed: refreshTokens=\(ended.tokens) sessions=\(ended.sessions)"), at: now)
            return fresh
        }
    }

    public func rename(account: Account, credentialID: String, name rawName: String?, remoteAddress: String) throws {
        let name = try Passkeys.name(rawName)
        try store.transaction {
            guard try store.renamePasskey(project: project.id, localID: account.localID, credentialID: credentialID, name: name) else {
                throw AuthError(.passkeyEnrollmentNotFound)
            }
            try store.audit(AuditEvent(projectID: project.id, event: .passkeyRename, localID: account.localID, remoteAddress: remoteAddress,
                                       detail: credentialID), at: clock.now())
        }
    }

    // MARK: Checks

    /// A challenge from the CSPRNG, stored hashed; each costs the client one of its budget.
    func newChallenge(localID: String?, remoteAddress: String) throws -> [UInt8] {
        let client = project.client(remoteAddress)
        let challenge = random.bytes(Passkeys.challengeBytes)
        let allowed: Bool = try store.transaction {
            let now = clock.now()
            guard try limits.record(Passkeys.challengeRule(policy), client: client, scope: project.id) else { return false }
            try store.purgePasskeyChallenges(before: now - 600_000)
            try store.insertPasskeyChallenge(PasskeyChallengeRecord(challengeHash: Digest.sha256(challenge), projectID: project.id,
                                                                    localID: localID, createdAt: now,
                                                                    expiresAt: now + policy.challengeSeconds * 1000))
            return true
        }
        guard allowed else { throw AuthError(.tooManyAttempts) }
        return challenge
    }

    /// Spends the challenge the client data names: it must be this project's, unexpired, unused,
    /// and for this enrolment's user (or, `enrolling` nil, a sign-in's).
    func consume(_ challenge: [UInt8], enrolling: String?, now: Millis) throws {
        let hash = Digest.sha256(challenge)
        guard let record = try store.passkeyChallenge(hash: hash), record.projectID == project.id, record.localID == enrolling,
              record.consumedAt == nil else { throw WebAuthn.refuse("the challenge is unknown or used") }
        guard now < record.expiresAt else { throw AuthError(.passkeyChallengeTimeout) }
        guard try store.consumePasskeyChallenge(hash: hash, now: now) else { throw WebAuthn.refuse("the challenge is unknown or used") }
    }

    func checkOrigin(_ client: WebAuthn.ClientData) throws {
        if client.crossOrigin { throw WebAuthn.refuse("a cross-origin ceremony") }
        guard PasskeyOrigins.allows(client.origin, project: project) else { throw WebAuthn.refuse("origin \(client.origin) is not allowed") }
    }

    /// The relying party's hash, user presence and user verification.
    func checkCommon(_ data: WebAuthn.AuthenticatorData) throws {
        guard Digest.constantTimeEqual(data.rpIDHash, Digest.sha256(project.passkeyRelyingPartyID)) else {
            throw WebAuthn.refuse("the relying party id hash is not \(project.passkeyRelyingPartyID)'s")
        }
        guard data.has(WebAuthn.AuthenticatorData.userPresent) else { throw WebAuthn.refuse("user presence flag not set") }
        guard data.has(WebAuthn.AuthenticatorData.userVerified) else { throw WebAuthn.refuse("user verification flag not set") }
    }

    /// The credential id named by both `id` (base64url) and `rawId` (either alphabet), as base64url.
    static func credentialID(id: String?, rawID: String?) throws -> String {
        guard let id, !id.isEmpty, id.utf8.count <= 2048, let bytes = Base64URL.decode(id), !bytes.isEmpty,
              bytes.count <= WebAuthn.maxCredentialIDBytes else { throw AuthError(.invalidCredentialID) }
        if let rawID, !rawID.isEmpty {
            guard rawID.utf8.count <= 2048, Base64URL.decode(rawID) == bytes else { throw AuthError(.invalidCredentialID) }
        }
        return Base64URL.encode(bytes)
    }

    static func name(_ raw: String?) throws -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard raw.utf8.count <= maxNameBytes, !raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw AuthError(.invalidArgument, "Invalid passkey name.")
        }
        return raw
    }

    // MARK: Budgets

    enum Outcome<T> {
        case done(T)
        /// Refused after a check the client drove: counts against its failures.
        case failed(AuthError, ClientAddress)
        func value() throws -> T {
            switch self {
            case let .done(v): return v
            case let .failed(e, _): throw e
            }
        }
    }

    /// One write transaction on the phone codes' per-client budgets: the check is counted first;
    /// a failed check is counted as the client's failure and committed with the challenge's use.
    func checked<T>(remoteAddress: String, _ body: (ClientAddress, Millis) throws -> Outcome<T>) throws -> Outcome<T> {
        let client = project.client(remoteAddress)
        let perAddress = PhoneSignIn(store: store, clock: clock, random: random, tokens: tokens, project: project).verifyRule
        let failures = PhoneSignIn.failureRule(project.phone)
        do {
            return try store.transaction { () -> Outcome<T> in
                guard try limits.record(perAddress, client: client, scope: project.id) else { throw AuthError(.tooManyAttempts) }
                if try !limits.allows(failures, client: client, scope: project.id) { throw AuthError(.tooManyAttempts) }
                let outcome = try body(client, clock.now())
                if case let .failed(error, _) = outcome {
                    guard try limits.record(failures, client: client, scope: project.id) else { return .failed(AuthError(.tooManyAttempts), client) }
                    return .failed(error, client)
                }
                return outcome
            }
        } catch {
            // Rolled back (a refusal that throws, or the store failed): the check still counts.
            _ = try? limits.record(perAddress, client: client, scope: project.id)
            throw error
        }
    }

    /// Challenges a client may ask for (sign-in and enrolment together).
    static func challengeRule(_ policy: PasskeyPolicy) -> Limits.Rule {
        Limits.Rule("passkey-challenges-ip-5min", max: policy.challengesPerIPPer5Min, per: 300)
    }
}
