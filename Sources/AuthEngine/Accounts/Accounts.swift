/// Account rules shared by every flow: resolving the user behind an ID token (firebase-wire.md
/// §2.6 errors), and recording a completed sign-in.
public struct Accounts {
    public let store: any AccountStore & SigningKeyStore
    public let tokens: TokenService

    public init(store: any AccountStore & SigningKeyStore, tokens: TokenService) {
        self.store = store
        self.tokens = tokens
    }

    /// The account an ID token names. Missing → `MISSING_ID_TOKEN`; bad signature, expired,
    /// wrong project → `INVALID_ID_TOKEN`; deleted user → `USER_NOT_FOUND`;
    /// `iat < validSince` → `TOKEN_EXPIRED`; disabled → `USER_DISABLED`.
    public func account(forIDToken token: String?, project: String) throws -> (Account, VerifiedToken) {
        guard let token, !token.isEmpty else { throw AuthError(.missingIDToken) }
        let verified = try tokens.verify(token, kind: .idToken, project: project, store: store)
        guard let account = try store.account(project: project, localID: verified.uid) else { throw AuthError(.userNotFound) }
        if verified.issuedAt < account.validSince { throw AuthError(.tokenExpired) }
        if !SensitiveChange.factorStillEnrolled(verified.secondFactor, in: account) { throw AuthError(.tokenExpired) }
        if account.disabled { throw AuthError(.userDisabled) }
        return (account, verified)
    }

    /// A new account id that is not taken.
    public func newLocalID(project: String, random: any RandomSource) throws -> String {
        while true {
            let id = random.userID()
            if try store.account(project: project, localID: id) == nil { return id }
        }
    }
}
