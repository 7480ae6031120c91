import AuthEngine
import HTTP
import JSONValue

/// Identity Toolkit `UserInfo` (firebase-wire.md §2.6): the shape `accounts:lookup` and
/// `accounts:batchGet` return. Timestamps as the clients expect: ms strings, RFC 3339, s string.
enum UserInfoJSON {
    static func encode(_ a: Account, privileged: Bool, passkeys: [PasskeyRecord] = []) -> JSON {
        var pairs: [(String, (any JSONConvertible)?)] = [
            ("localId", a.localID),
            ("email", a.email),
            ("emailVerified", a.email == nil ? nil : a.emailVerified),
            ("displayName", a.displayName),
            ("photoUrl", a.photoURL),
            ("phoneNumber", a.phoneNumber),
            ("disabled", a.disabled),
            ("createdAt", String(a.createdAt)),
            ("lastLoginAt", a.lastLoginAt.map(String.init)),
            ("lastRefreshAt", a.lastRefreshAt.map { RFC3339.format($0) }),
            ("validSince", String(a.validSince)),
            ("emailLinkSignin", a.emailLinkSignin ? true : nil),
            ("providerUserInfo", JSON.array(a.providers.map(provider))),
            ("mfaInfo", a.mfaEnrollments.isEmpty ? nil : MFAAPI.info(a.mfaEnrollments)),
            ("customAttributes", a.customAttributes),
            ("passkeyInfo", PasskeysAPI.info(passkeys)),
        ]
        // Only an account that really has a password reports one (iOS treats any value as a password credential).
        if a.passwordHash != nil { pairs.append(("passwordHash", privileged ? a.passwordHash : "UkVEQUNURUQ=")) }
        return .obj(pairs)
    }

    static func provider(_ p: ProviderInfo) -> JSON {
        .obj(("providerId", p.providerID), ("rawId", p.rawID), ("federatedId", p.providerID == "password" ? p.rawID : nil),
             ("email", p.email), ("phoneNumber", p.phoneNumber), ("displayName", p.displayName), ("photoUrl", p.photoURL))
    }
}

/// The response fields of a successful sign-in (`idToken`, `refreshToken`, `expiresIn` string).
extension IssuedTokens {
    var wirePairs: [(String, (any JSONConvertible)?)] {
        [("idToken", idToken), ("refreshToken", refreshToken), ("expiresIn", String(expiresIn))]
    }
}

extension Context {
    var accounts: Accounts { Accounts(store: store, tokens: app.tokens) }
    var signInTokens: SignInTokens { SignInTokens(tokens: app.tokens, store: store, random: app.random, device: SignInRecording.device(self)) }
}
