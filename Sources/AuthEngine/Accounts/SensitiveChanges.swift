/// What a caller proves about its sign-in when it asks for a change: when it signed in and which
/// second factor, if any, it passed. Taken from a verified ID token (the wire) or from a session
/// (the hosted pages), so one rule serves both.
public struct SignInProof: Sendable, Equatable {
    /// The first factor's `sign_in_provider`.
    public var firstFactor: String
    /// Seconds: `auth_time`, kept unchanged by refreshes.
    public var authTime: Int64
    public var secondFactor: SecondFactor?

    public init(firstFactor: String, authTime: Int64, secondFactor: SecondFactor? = nil) {
        self.firstFactor = firstFactor; self.authTime = authTime; self.secondFactor = secondFactor
    }

    public init(_ token: VerifiedToken) {
        self.init(firstFactor: token.signInProvider, authTime: token.authTime, secondFactor: token.secondFactor)
    }

    public init(_ session: SessionIdentity) {
        self.init(firstFactor: session.provider, authTime: session.authTime, secondFactor: session.secondFactor)
    }
}

/// Changes to how one signs in — adding or removing a second factor, linking or changing an email
/// or phone, unlinking a provider, deleting the account — need a recent sign-in and, for a user
/// with a second factor, a sign-in that passed one the account still has (docs/security.md "Old
/// credentials"). Otherwise a refresh token or session cookie copied before the owner's last
/// change would let its holder enrol their own factor, strip the owner's, or take the account.
public enum SensitiveChange {
    /// The default window of a recent sign-in (Firebase's is five minutes too).
    public static let defaultRecentSeconds: Int64 = 300
    public static let tooOldDetail = "Sign in again to make this change."
    /// `Passkeys.provider`.
    static let passkeyProvider = "passkey"
    public static let secondFactorDetail = "Sign in again with your second factor to make this change."

    /// Throws `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` (clients: `auth/requires-recent-login`, which
    /// re-authenticates and, for a user with a factor, passes it) unless `proof` may change `account`.
    /// An anonymous account is exempt: its refresh token is the only credential it has and can
    /// ever re-authenticate with, so upgrading it must work at any age.
    public static func check(_ account: Account, proof: SignInProof, now: Millis, recentSeconds: Int64) throws {
        if proof.firstFactor == "anonymous", account.anonymous { return }
        if now / 1000 - proof.authTime > recentSeconds {
            throw AuthError(.credentialTooOld, tooOldDetail)
        }
        // A passkey sign-in is verified by the authenticator (a PIN or a biometric): multi-factor
        // on its own, so it stands for the second factor, as it does at `?require=mfa`.
        if !account.mfaEnrollments.isEmpty, proof.firstFactor != SensitiveChange.passkeyProvider {
            guard let factor = proof.secondFactor, account.mfaEnrollments.contains(where: { $0.enrollmentID == factor.identifier }) else {
                throw AuthError(.credentialTooOld, secondFactorDetail)
            }
        }
    }

    /// Whether a credential that names `factor` may still stand for it: the factor must still be
    /// enrolled (a removed factor revokes, but a credential is checked at each use as well).
    public static func factorStillEnrolled(_ factor: SecondFactor?, in account: Account) -> Bool {
        guard let factor else { return true }
        return account.mfaEnrollments.contains { $0.enrollmentID == factor.identifier }
    }
}

/// Ends every credential of a user that exists now — refresh families, sessions, pending second
/// factors — and every ID token issued before this second (`validSince`). Run inside the
/// transaction that makes the change, on an account read in it: with the account's row held, a
/// concurrent refresh either finished before (and its successor is revoked here) or waits and
/// finds its token revoked.
public enum Revocation {
    @discardableResult
    public static func revokeAll(_ account: inout Account, store: any SessionStore & MFAStore, now: Millis) throws -> (tokens: Int, sessions: Int) {
        account.validSince = max(account.validSince, now / 1000)
        let tokens = try store.revokeRefreshTokens(project: account.projectID, localID: account.localID, createdBefore: .max, at: now)
        let sessions = try store.revokeSessions(project: account.projectID, localID: account.localID, createdBefore: .max, at: now)
        try store.revokeMFAPending(project: account.projectID, localID: account.localID, at: now)
        return (tokens, sessions)
    }
}
