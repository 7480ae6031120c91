/// The answer of `accounts:createAuthUri` (firebase-wire.md §2.5).
public struct AuthURIResult: Sendable, Equatable {
    public let registered: Bool
    public let allProviders: [String]
    public let signinMethods: [String]
    public let sessionID: String
}

extension EmailLinks {
    /// `accounts:createAuthUri` (firebase-wire.md §2.5): which sign-in methods an address has.
    /// `emailLink` for an account that signed in by link, `password` only when a password exists;
    /// `phone` is never listed. At most 120 calls per IP per hour.
    public func createAuthUri(identifier: String?, continueUri: String?, sessionID: String?, remoteAddress: String) throws -> AuthURIResult {
        let session = nonEmpty(sessionID) ?? String(random.userID().prefix(27))
        guard let identifier = nonEmpty(identifier) else { throw AuthError(.missingIdentifier) }
        guard let continueUri = nonEmpty(continueUri) else { throw AuthError(.missingContinueURI) }
        guard EmailAddress.validated(identifier) != nil else { throw AuthError(.invalidIdentifier) }
        guard EmailLinkURLs.parts(continueUri) != nil else { throw AuthError(.invalidContinueURI) }
        try limits.hit(EmailLinks.authURIRule, client: project.client(remoteAddress), scope: project.id)

        guard let account = try store.account(project: project.id, email: EmailAddress.canonical(identifier)) else {
            return AuthURIResult(registered: false, allProviders: [], signinMethods: [], sessionID: session)
        }
        var all: [String] = [], methods: [String] = []
        if account.passwordHash != nil || account.emailLinkSignin || account.providers.contains(where: { $0.providerID == "password" }) {
            all.append("password")
        }
        if account.passwordHash != nil { methods.append("password") }
        if account.emailLinkSignin { methods.append("emailLink") }
        for p in account.providers where p.providerID != "password" && p.providerID != "phone" && !all.contains(p.providerID) {
            all.append(p.providerID)
            methods.append(p.providerID)
        }
        return AuthURIResult(registered: true, allProviders: all, signinMethods: methods, sessionID: session)
    }
}
