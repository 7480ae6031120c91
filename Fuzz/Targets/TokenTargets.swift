@testable import AuthCrypto
@testable import AuthEngine
import AuthStore
import JSONValue
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Session cookies and ID tokens: the verify hot path (`Sessions.fastSessionClaims`, a scan of
/// the signed bytes) and the full verification (`TokenService.verify`) must decide alike.
enum TokenTargets {
    /// One store with one signing key for the whole run.
    final class World: @unchecked Sendable {
        let clock = FixedClock()
        let random = SeededRandom()
        let store: SQLStore
        let tokens: TokenService
        let sessions: Sessions
        let key: KeyRing.Key
        let privateKey: RSAPrivateKey
        /// The fuzz project with the store's key as a custom-token signer (production rules).
        let customProject: ProjectSettings
        static let serviceAccount = "sa@demo-fuzz.iam.gserviceaccount.com"

        init() {
            do {
                store = try SQLStore(path: ":memory:")
                tokens = TokenService(keyRing: KeyRing(clock: clock), clock: clock)
                _ = try tokens.keyRing.rotate(store: store, random: random)
                key = try tokens.keyRing.signer(store: store)
                privateKey = try key.privateKey
                sessions = Sessions(store: store, tokens: tokens, random: random)
                var p = fuzzProject
                p.devMode = false
                p.customTokenSigners = [CustomTokenSigner(serviceAccount: World.serviceAccount, keys: [(nil, key.publicKey)])]
                customProject = p
            } catch {
                StandardError.write("fuzz set-up failed: \(error)\n")
                exit(70)
            }
        }

        /// Checks a token both ways and compares the answers.
        func check(_ token: String) {
            let project = fuzzProject.id
            _ = try? tokens.verify(token, kind: .idToken, project: project, store: store)
            let full: SessionClaims? = {
                guard let v = try? tokens.verify(token, kind: .sessionCookie, project: project, store: store),
                      let sid = v.claims["sid"]?.stringValue, !sid.isEmpty, sid.utf8.count <= 128 else { return nil }
                return SessionClaims(uid: v.uid, issuedAt: v.issuedAt, expiresAt: v.expiresAt, authTime: v.authTime,
                                     signInProvider: v.signInProvider, sid: sid)
            }()
            if case let .decided(fast) = sessions.fastSessionClaims(token, project: project) {
                expect(fast == full, "session cookie decided differently: fast \(String(describing: fast)), full \(String(describing: full))")
            }
            expect(sessions.sessionClaims(token, project: project) == full, "sessionClaims differs from the full verification")
            // As a custom token: refused, or a uid of 1…128 bytes with claims that pass the rules.
            if let v = try? CustomTokens.verify(token, project: customProject, now: clock.nowSeconds) {
                expect(!v.uid.isEmpty && v.uid.utf8.count <= 128, "custom token uid out of bounds")
                if let c = v.developerClaims { expect((try? CustomClaims.validate(c)) == c, "custom token claims not valid: \(c)") }
            }
        }

        /// A compact RS256 JWS over `header` and `payload`, signed with the store's key.
        func sign(header: [UInt8], payload: [UInt8]) -> String? {
            try? JWS.signRS256(header: header, payload: payload, key: privateKey)
        }
    }

    nonisolated(unsafe) static var world: World?

    /// A token as sent (cookie value or bearer token): parsed, decoded, checked both ways.
    static let jwt = FuzzTarget(name: "jwt", setUp: { world = World() }) { data in
        guard let w = world else { return }
        let text = data.string
        _ = JWS.parse(text)
        w.check(text)
    }

    /// Signed tokens with fuzzed content, so the claim checks after the signature are reached:
    /// the first byte chooses what the rest is (the claims, or the header), the other part fixed.
    static let signedClaims = FuzzTarget(name: "signed-claims", setUp: { world = World() }) { data in
        guard let w = world, let mode = data.first else { return }
        let rest = Array(data.dropFirst())
        let kid = w.key.record.kid
        let header = Array("{\"alg\":\"RS256\",\"kid\":\"\(kid)\",\"typ\":\"JWT\"}".utf8)
        let now = w.clock.nowSeconds
        let claims = Array(("{\"iss\":\"https://session.firebase.google.com/demo-fuzz\",\"aud\":\"demo-fuzz\",\"auth_time\":\(now - 10),"
            + "\"sub\":\"user-1\",\"iat\":\(now - 10),\"exp\":\(now + 3600),\"sid\":\"s1\",\"firebase\":{\"sign_in_provider\":\"phone\"}}").utf8)
        let token: String?
        switch mode % 4 {
        case 0: token = w.sign(header: header, payload: rest)
        case 3:
            // A custom token of the project's service account with fuzzed claims after `uid`.
            let claims = "{\"iss\":\"\(World.serviceAccount)\",\"sub\":\"\(World.serviceAccount)\",\"aud\":\"\(CustomTokens.audience)\","
                + "\"iat\":\(now - 10),\"exp\":\(now + 600),\"uid\":\"u1\","
            token = w.sign(header: header, payload: Array(claims.utf8) + rest)
        case 1: token = w.sign(header: rest.isEmpty ? header : rest, payload: claims)
        default:
            // The header's kid replaced by the fuzzed text, as a JSON string's contents.
            token = w.sign(header: Array("{\"alg\":\"RS256\",\"kid\":\"".utf8) + rest + Array("\"}".utf8), payload: claims)
        }
        if let token { w.check(token) }
    }
}
