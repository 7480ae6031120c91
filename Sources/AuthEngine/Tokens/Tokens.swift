import AuthCrypto
public import JSONValue

/// The claims Gatehouse verified in an ID token or session cookie (firebase-wire.md §3.1, §3.4).
public struct VerifiedToken: Sendable {
    public let uid: String
    public let issuedAt: Int64
    public let expiresAt: Int64
    public let authTime: Int64
    public let signInProvider: String
    public let email: String?
    public let phoneNumber: String?
    public let kid: String
    public let claims: JSON
    /// `firebase.sign_in_second_factor` and `second_factor_identifier`, when the sign-in passed one.
    public var secondFactor: SecondFactor? {
        guard let f = claims["firebase"], let factor = f["sign_in_second_factor"]?.stringValue,
              let id = f["second_factor_identifier"]?.stringValue else { return nil }
        return SecondFactor(factor: factor, identifier: id)
    }
}

/// Mints and verifies RS256 ID tokens and session cookies for one project.
public struct TokenService: Sendable {
    public static let idTokenLifetime: Int64 = 3600
    public static let reservedClaims: Set<String> = ["iss", "aud", "sub", "iat", "exp", "nbf", "jti", "nonce", "azp", "acr",
                                                     "amr", "cnf", "auth_time", "firebase", "at_hash", "c_hash", "user_id"]

    public enum Kind: Sendable {
        case idToken
        case sessionCookie

        func issuer(project: String) -> String {
            switch self {
            case .idToken: return "https://securetoken.google.com/\(project)"
            case .sessionCookie: return "https://session.firebase.google.com/\(project)"
            }
        }
    }

    public let keyRing: KeyRing
    public let clock: any Clock
    /// Where token checks are counted, and the flows that sign with this service count and log.
    public let telemetry: Telemetry
    public let log: Log

    public init(keyRing: KeyRing, clock: any Clock, telemetry: Telemetry = .off, log: Log = Log()) {
        self.keyRing = keyRing
        self.clock = clock
        self.telemetry = telemetry
        self.log = log
    }

    /// The claim set of a token for `account` signed in with `provider`.
    public func claims(for account: Account, provider: String, kind: Kind, issuedAt: Int64, lifetime: Int64,
                       authTime: Int64? = nil, secondFactor: SecondFactor? = nil, developerClaims: String? = nil) -> JSON {
        var identities: [(String, JSON)] = []
        if let email = account.email { identities.append(("email", .array([.string(email)]))) }
        for p in account.providers where p.providerID != "password" {
            identities.append((p.providerID, .array([.string(p.rawID)])))
        }
        var pairs: [(String, JSON)] = [
            ("iss", .string(kind.issuer(project: account.projectID))),
            ("aud", .string(account.projectID)),
            ("auth_time", .number(Double(authTime ?? (account.lastLoginAt.map { $0 / 1000 } ?? issuedAt)))),
            ("user_id", .string(account.localID)),
            ("sub", .string(account.localID)),
            ("iat", .number(Double(issuedAt))),
            ("exp", .number(Double(issuedAt + lifetime))),
        ]
        if let email = account.email {
            pairs.append(("email", .string(email)))
            pairs.append(("email_verified", .bool(account.emailVerified)))
        }
        if let phone = account.phoneNumber { pairs.append(("phone_number", .string(phone))) }
        if let name = account.displayName { pairs.append(("name", .string(name))) }
        if let pic = account.photoURL { pairs.append(("picture", .string(pic))) }
        if provider == "anonymous" { pairs.append(("provider_id", .string("anonymous"))) }
        // The account's custom claims, then a custom-token sign-in's developer claims.
        for text in [account.customAttributes, developerClaims] {
            guard let text, let custom = try? JSONParser().parse(text), case let .object(extra) = custom else { continue }
            for (k, v) in extra where !TokenService.reservedClaims.contains(k) && !pairs.contains(where: { $0.0 == k }) {
                pairs.append((k, v))
            }
        }
        var firebase: [(String, JSON)] = [("identities", .object(identities)), ("sign_in_provider", .string(provider))]
        if let secondFactor {
            firebase.append(("sign_in_second_factor", .string(secondFactor.factor)))
            firebase.append(("second_factor_identifier", .string(secondFactor.identifier)))
        }
        pairs.append(("firebase", .object(firebase)))
        return .object(pairs)
    }

    /// Signs `claims` with the current key: header `{"alg":"RS256","kid":…,"typ":"JWT"}`.
    public func sign(_ claims: JSON, store: any SigningKeyStore) throws -> String {
        try sign(claims, key: keyRing.signer(store: store))
    }

    /// Signs `claims` with `key` (a signer the caller fetched earlier, e.g. inside its transaction).
    public func sign(_ claims: JSON, key: KeyRing.Key) throws -> String {
        let header = JSON.object([("alg", .string("RS256")), ("kid", .string(key.record.kid)), ("typ", .string("JWT"))])
        return try JWS.signRS256(header: header.bytes, payload: claims.bytes, key: key.privateKey)
    }

    /// A 1-hour ID token.
    public func mintIDToken(for account: Account, provider: String, store: any SigningKeyStore, authTime: Int64? = nil,
                            secondFactor: SecondFactor? = nil, developerClaims: String? = nil) throws -> String {
        try mintIDToken(for: account, provider: provider, key: keyRing.signer(store: store), authTime: authTime, secondFactor: secondFactor,
                        developerClaims: developerClaims)
    }

    /// A 1-hour ID token signed with `key`.
    public func mintIDToken(for account: Account, provider: String, key: KeyRing.Key, authTime: Int64? = nil,
                            secondFactor: SecondFactor? = nil, developerClaims: String? = nil) throws -> String {
        let now = clock.nowSeconds
        return try sign(claims(for: account, provider: provider, kind: .idToken, issuedAt: now, lifetime: TokenService.idTokenLifetime,
                               authTime: authTime, secondFactor: secondFactor, developerClaims: developerClaims), key: key)
    }

    /// Seconds since 1970 a token's times may take (to the year 5138): what callers multiply by
    /// 1000 or format as dates stays far from overflow.
    static let plausibleTimes: ClosedRange<Int64> = 0...100_000_000_000

    /// What a token's header and claims may be, for the parser and for the session cookie's
    /// member scan alike (`SessionToken.swift`).
    static let headerLimits = JSONLimits(maxBytes: 4096, maxDepth: 4)
    static let claimsLimits = JSONLimits(maxBytes: 16 * 1024, maxDepth: 16)

    /// Verifies signature (published key by `kid`, RS256 only), issuer, audience, `exp`, `iat`.
    /// Any failure → `INVALID_ID_TOKEN` (revocation is the caller's check: it needs the account).
    public func verify(_ token: String, kind: Kind, project: String, store: any SigningKeyStore, leeway: Int64 = 0) throws -> VerifiedToken {
        do {
            let v = try checkedClaims(token, kind: kind, project: project, store: store, leeway: leeway)
            telemetry.tokenVerification(kind: kind == .idToken ? "id_token" : "session_cookie", ok: true)
            return v
        } catch let e as AuthError {
            telemetry.tokenVerification(kind: kind == .idToken ? "id_token" : "session_cookie", ok: false)
            throw e
        }
    }

    func checkedClaims(_ token: String, kind: Kind, project: String, store: any SigningKeyStore, leeway: Int64) throws -> VerifiedToken {
        let invalid = AuthError(.invalidIDToken)
        guard let parts = JWS.parse(token),
              let header = try? JSONParser(TokenService.headerLimits).parse(parts.header),
              header["alg"]?.stringValue == "RS256", let kid = header["kid"]?.stringValue,
              let key = try keyRing.key(kid: kid, store: store),
              key.publicKey.verifyRS256(signature: parts.signature, data: parts.signingInput),
              let claims = try? JSONParser(TokenService.claimsLimits).parse(parts.payload) else { throw invalid }
        let now = clock.nowSeconds
        guard claims["iss"]?.stringValue == kind.issuer(project: project), claims["aud"]?.stringValue == project,
              let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.utf8.count <= 128,
              let iat = claims["iat"]?.int64Value, let exp = claims["exp"]?.int64Value,
              TokenService.plausibleTimes.contains(iat), TokenService.plausibleTimes.contains(exp),
              claims["auth_time"]?.int64Value.map(TokenService.plausibleTimes.contains) ?? true,
              exp + leeway > now, iat <= now + 60 + leeway else { throw invalid }
        let firebase = claims["firebase"]
        return VerifiedToken(uid: sub, issuedAt: iat, expiresAt: exp, authTime: claims["auth_time"]?.int64Value ?? iat,
                             signInProvider: firebase?["sign_in_provider"]?.stringValue ?? "custom",
                             email: claims["email"]?.stringValue, phoneNumber: claims["phone_number"]?.stringValue,
                             kid: kid, claims: claims)
    }
}
