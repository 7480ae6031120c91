import AuthCrypto
import Foundation
import JSONValue
import Testing
@testable import AuthEngine

/// The session-cookie scan of `/__/auth/verify` against the full `TokenService.verify`: for
/// every cookie it decides, it decides as the full path does; the rest it hands over.
@Suite("Session cookie scan")
struct SessionTokenTests {
    static let p = SessionWorld.project

    /// The full path's answer (claims with sid), as `sessionClaims` would give it.
    func full(_ w: SessionWorld, _ token: String) -> SessionClaims? {
        guard let v = try? w.tokens.verify(token, kind: .sessionCookie, project: Self.p, store: w.store),
              let sid = v.claims["sid"]?.stringValue, !sid.isEmpty, sid.utf8.count <= 128 else { return nil }
        return SessionClaims(uid: v.uid, issuedAt: v.issuedAt, expiresAt: v.expiresAt, authTime: v.authTime,
                             signInProvider: v.signInProvider, sid: sid)
    }

    /// A token with this header and claims text, signed by the world's current key.
    func token(_ w: SessionWorld, header: String? = nil, _ claims: String) throws -> String {
        let signer = try w.keyRing.signer(store: w.store)
        let h = header ?? #"{"alg":"RS256","kid":"\#(signer.record.kid)","typ":"JWT"}"#
        return try JWS.signRS256(header: Array(h.utf8), payload: Array(claims.utf8), key: signer.privateKey)
    }

    func claims(iss: String = "\"https://session.firebase.google.com/\(SessionWorld.project)\"", aud: String = "\"\(SessionWorld.project)\"",
                sub: String = "\"user-1\"", iat: String? = nil, exp: String? = nil, extra: String = "",
                firebase: String = #"{"identities":{},"sign_in_provider":"phone"}"#, sid: String = "\"s1\"", now: Int64) -> String {
        #"{"iss":\#(iss),"aud":\#(aud),"auth_time":\#(now - 5),"sub":\#(sub),"iat":\#(iat ?? String(now)),"exp":\#(exp ?? String(now + 600)),\#(extra)"firebase":\#(firebase),"sid":\#(sid)}"#
    }

    @Test("a hosted-session cookie is decided by the scan, with the full path's claims")
    func hostedDecided() throws {
        let w = try SessionWorld()
        let account = try w.user()
        let cookie = try w.sessions.startHostedSession(account: account, provider: "phone", lifetime: 3600, idleTimeout: 0)
        guard case let .decided(fast) = w.sessions.fastSessionClaims(cookie, project: Self.p) else { Issue.record("not decided"); return }
        #expect(fast != nil && fast == full(w, cookie))
        #expect(fast?.uid == "user-1" && fast?.signInProvider == "phone")
    }

    @Test("the sid hash is SHA-256 of \"gatehouse-sid|\" + sid (stored sessions are keyed by it)")
    func sidHash() {
        for sid in ["", "s1", "AbCdEfGhIjKlMnOpQrStUvWx", String(repeating: "z", count: 128), "é"] {
            #expect(Sessions.hash(sid: sid) == Digest.sha256(Array(("gatehouse-sid|" + sid).utf8)))
        }
        #expect(Hex.encode(Sessions.hash(sid: "")) == Hex.encode(Digest.sha256("gatehouse-sid|")))
    }

    @Test("the scan's issuer is the session-cookie issuer")
    func issuer() {
        #expect(Sessions.sessionIssuerPrefix + Self.p == TokenService.Kind.sessionCookie.issuer(project: Self.p))
    }

    @Test("every variant gets the full path's answer, decided by the scan or handed over")
    func variants() throws {
        let w = try SessionWorld()
        let now = w.clock.nowSeconds
        let kid = try w.keyRing.signer(store: w.store).record.kid
        let cases: [(String?, String)] = [
            (nil, claims(now: now)),
            (nil, claims(iss: #""https:\/\/session.firebase.google.com\/demo-gatehouse""#, now: now)),
            (nil, claims(iss: "\"https://securetoken.google.com/\(Self.p)\"", now: now)),
            (nil, claims(aud: "\"other\"", now: now)),
            (nil, claims(aud: "7", now: now)),
            (nil, claims(aud: #""demo-gatehous\u0065""#, now: now)),
            (nil, claims(aud: "\"demo-gatehous\u{E9}\"", now: now)),
            (nil, claims(iss: "\"https://session.firebase.google.com/\"", now: now)),
            (nil, claims(sub: #""us\u0065r-1""#, now: now)),
            (nil, claims(sub: "\"\"", now: now)),
            (nil, claims(sub: "\"\(String(repeating: "x", count: 129))\"", now: now)),
            (nil, claims(iat: "\(Double(now))", now: now)),
            (nil, claims(iat: "\"\(now)\"", now: now)),
            (nil, claims(iat: "\(now + 61)", now: now)),
            (nil, claims(exp: "\(now)", now: now)),
            (nil, claims(exp: "1e12", now: now)),
            (nil, claims(exp: "true", now: now)),
            (nil, claims(extra: #""sub":"user-2","#, now: now)),
            (nil, claims(extra: #""auth_time":"x","#, now: now)),
            (nil, claims(extra: #""nested":{"a":[1,{"b":"\u00e9"}]},"#, now: now)),
            (nil, claims(firebase: "\"phone\"", now: now)),
            (nil, claims(firebase: #"{"sign_in_provider":7}"#, now: now)),
            (nil, claims(firebase: #"{"sign_in_provider":"a\"b"}"#, now: now)),
            (nil, claims(sid: "7", now: now)),
            (nil, claims(sid: #""s\u0031""#, now: now)),
            (nil, #"{"iss":1}"#),
            (nil, "not json"),
            (#"{"alg":"HS256","kid":"\#(kid)"}"#, claims(now: now)),
            (#"{"alg":"RS\u0032\u00356","kid":"\#(kid)"}"#, claims(now: now)),
            (#"{"alg":"RS256","kid":"unknown"}"#, claims(now: now)),
            (#"{"alg":"RS256"}"#, claims(now: now)),
            (#"{"alg":"RS256","kid":"\#(kid)","alg":"none"}"#, claims(now: now)),
            (#"{"alg":"RS256","kid":"\#(kid)"} x"#, claims(now: now)),
        ]
        for (header, text) in cases {
            let t = try token(w, header: header, text)
            let expected = full(w, t)
            #expect(w.sessions.sessionClaims(t, project: Self.p) == expected, "\(header ?? "-") \(text)")
            if case let .decided(fast) = w.sessions.fastSessionClaims(t, project: Self.p) {
                #expect(fast == expected, "decided differently: \(header ?? "-") \(text)")
            }
        }
        // The plain cases are decided by the scan, not handed over.
        guard case .decided(.some) = w.sessions.fastSessionClaims(try token(w, claims(now: now)), project: Self.p) else {
            Issue.record("plain cookie not decided by the scan"); return
        }
    }
}
