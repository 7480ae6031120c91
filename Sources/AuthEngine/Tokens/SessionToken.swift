import AuthCrypto
import JSONValue

/// The claims of a valid session cookie that a session check uses.
struct SessionClaims: Sendable, Equatable {
    let uid: String
    let issuedAt: Int64
    let expiresAt: Int64
    let authTime: Int64
    let signInProvider: String
    let sid: String
    /// `firebase.sign_in_second_factor` and `second_factor_identifier`, when the sign-in passed one.
    var secondFactor: SecondFactor? = nil
}

extension Sessions {
    /// Verifies a session cookie exactly as `TokenService.verify(kind: .sessionCookie)` does and
    /// returns its claims with its `sid` (non-empty, at most 128 bytes); nil when it is not valid.
    ///
    /// The hot path of `/__/auth/verify`: the signature is checked in place over the cookie's
    /// bytes, and the header and claims are scanned for the members the check reads instead of
    /// being parsed into JSON values. Anything the scan leaves to the full parser (escapes in a
    /// member read here, numbers not written as plain integers, unusual nesting) goes through
    /// `TokenService.verify`, so both paths accept and refuse the same cookies.
    func sessionClaims(_ cookie: String, project: String) -> SessionClaims? {
        switch fastSessionClaims(cookie, project: project) {
        case let .decided(claims): return claims
        case .undecided:
            guard let v = try? tokens.verify(cookie, kind: .sessionCookie, project: project, store: store),
                  let sid = v.claims["sid"]?.stringValue, !sid.isEmpty, sid.utf8.count <= 128 else { return nil }
            return SessionClaims(uid: v.uid, issuedAt: v.issuedAt, expiresAt: v.expiresAt, authTime: v.authTime,
                                 signInProvider: v.signInProvider, sid: sid, secondFactor: v.secondFactor)
        }
    }

    enum FastCheck { case decided(SessionClaims?), undecided }

    /// `TokenService.Kind.sessionCookie.issuer(project:)` without the project.
    static let sessionIssuerPrefix = "https://session.firebase.google.com/"

    func fastSessionClaims(_ cookie: String, project: String) -> FastCheck {
        var undecided = false
        let verified = JWS.verifiedRS256(cookie) { header -> RSAPublicKey? in
            header.withUnsafeBufferPointer { h -> RSAPublicKey? in
                var alg: Range<Int>?, kid: Range<Int>?
                let scanned = JSONMembers.scan(h, limits: TokenService.headerLimits) { name, value in
                    if JSONMembers.equals(h, name, "alg") { alg = value } else if JSONMembers.equals(h, name, "kid") { kid = value }
                }
                guard scanned == true else { undecided = true; return nil }
                guard let alg, let kid, JSONMembers.isString(h, alg), JSONMembers.isString(h, kid) else { return nil }
                guard let a = JSONMembers.plainString(h, alg), let k = JSONMembers.plainString(h, kid) else { undecided = true; return nil }
                guard a == "RS256" else { return nil }
                return (try? tokens.keyRing.key(kid: k, store: store))??.publicKey
            }
        }
        if undecided { return .undecided }
        guard let verified else { return .decided(nil) }
        return verified.payload.withUnsafeBufferPointer { claims(in: $0, project: project) }
    }

    /// The checks of `TokenService.verify` on the scanned claims (issuer, audience, subject,
    /// `iat`/`exp` against the clock), plus the `sid` a session cookie must carry.
    private func claims(in p: UnsafeBufferPointer<UInt8>, project: String) -> FastCheck {
        var iss: Range<Int>?, aud: Range<Int>?, sub: Range<Int>?, iat: Range<Int>?, exp: Range<Int>?
        var authTime: Range<Int>?, firebase: Range<Int>?, sid: Range<Int>?
        // The last of repeated members counts, as in `JSON`'s subscript.
        let scanned = JSONMembers.scan(p, limits: TokenService.claimsLimits) { name, value in
            switch name.count {
            case 3:
                if JSONMembers.equals(p, name, "iss") { iss = value } else if JSONMembers.equals(p, name, "aud") { aud = value }
                else if JSONMembers.equals(p, name, "sub") { sub = value } else if JSONMembers.equals(p, name, "iat") { iat = value }
                else if JSONMembers.equals(p, name, "exp") { exp = value } else if JSONMembers.equals(p, name, "sid") { sid = value }
            case 8: if JSONMembers.equals(p, name, "firebase") { firebase = value }
            case 9: if JSONMembers.equals(p, name, "auth_time") { authTime = value }
            default: break
            }
        }
        guard scanned == true else { return .undecided }
        // A member read here that is a string with escapes, or a number not written as a plain
        // integer, is left to the full parser.
        func string(_ r: Range<Int>?) -> String?? {
            guard let r, JSONMembers.isString(p, r) else { return .some(nil) }
            return JSONMembers.plainString(p, r).map { .some($0) }
        }
        guard let subV = string(sub), let sidV = string(sid) else { return .undecided }
        // iss and aud are compared as bytes (no strings made); with escapes they go to the parser.
        guard let iss, JSONMembers.isString(p, iss), let aud, JSONMembers.isString(p, aud) else { return .decided(nil) }
        guard let issuerOK = JSONMembers.plainStringEquals(p, iss, Sessions.sessionIssuerPrefix, project),
              let audienceOK = JSONMembers.plainStringEquals(p, aud, "", project) else { return .undecided }
        guard let iat, let exp else { return .decided(nil) }
        guard let issuedAt = JSONMembers.plainInteger(p, iat), let expiresAt = JSONMembers.plainInteger(p, exp) else { return .undecided }
        var auth = issuedAt
        if let authTime {
            guard let t = JSONMembers.plainInteger(p, authTime) else { return .undecided }
            auth = t
        }
        var provider = "custom"
        var secondFactor: SecondFactor?
        if let firebase, p[firebase.lowerBound] == UInt8(ascii: "{") {
            let inner = UnsafeBufferPointer(rebasing: p[firebase])
            var sip: Range<Int>?, factor: Range<Int>?, factorID: Range<Int>?
            guard JSONMembers.scan(inner, limits: TokenService.claimsLimits, { name, value in
                switch name.count {
                case 16: if JSONMembers.equals(inner, name, "sign_in_provider") { sip = value }
                case 21: if JSONMembers.equals(inner, name, "sign_in_second_factor") { factor = value }
                case 24: if JSONMembers.equals(inner, name, "second_factor_identifier") { factorID = value }
                default: break
                }
            }) == true else { return .undecided }
            if let sip, JSONMembers.isString(inner, sip) {
                guard let s = JSONMembers.plainString(inner, sip) else { return .undecided }
                provider = s
            }
            // Both or neither, as `VerifiedToken.secondFactor` reads them.
            if let factor, let factorID, JSONMembers.isString(inner, factor), JSONMembers.isString(inner, factorID) {
                guard let f = JSONMembers.plainString(inner, factor), let i = JSONMembers.plainString(inner, factorID) else { return .undecided }
                secondFactor = SecondFactor(factor: f, identifier: i)
            }
        }
        let now = tokens.clock.nowSeconds
        let times = TokenService.plausibleTimes
        guard issuerOK, audienceOK, let subV, !subV.isEmpty, subV.utf8.count <= 128, expiresAt > now, issuedAt <= now + 60,
              times.contains(issuedAt), times.contains(expiresAt), times.contains(auth),
              let sidV, !sidV.isEmpty, sidV.utf8.count <= 128 else { return .decided(nil) }
        return .decided(SessionClaims(uid: subV, issuedAt: issuedAt, expiresAt: expiresAt, authTime: auth,
                                      signInProvider: provider, sid: sidV, secondFactor: secondFactor))
    }
}
