import AuthCrypto
import AuthEngine
import JSONValue
import TestSupport
import Testing

@Suite("Custom tokens")
struct CustomTokenTests {
    static let email = "sa@demo.iam.gserviceaccount.com"
    let key: RSAPrivateKey
    let clock = FixedClock()

    init() throws { key = try RSAPrivateKey.generate(bits: 2048) }

    func project(dev: Bool = false) throws -> ProjectSettings {
        var p = ProjectSettings(id: "demo", devMode: dev)
        p.customTokenSigners = [CustomTokenSigner(serviceAccount: Self.email,
                                                  keys: [("k1", try RSAPublicKey(pem: try key.publicKey.pem()))])]
        return p
    }

    func token(_ extra: [(String, JSON)] = [], drop: Set<String> = [], lifetime: Int64 = 3600, kid: String = "k1",
               signer: RSAPrivateKey? = nil) throws -> String {
        let now = clock.nowSeconds
        var claims: [(String, JSON)] = [("iss", .string(Self.email)), ("sub", .string(Self.email)), ("aud", .string(CustomTokens.audience)),
                                        ("iat", .number(Double(now))), ("exp", .number(Double(now + lifetime))), ("uid", .string("u1"))]
        claims = claims.filter { !drop.contains($0.0) } + extra
        let header = JSON.object([("alg", .string("RS256")), ("kid", .string(kid)), ("typ", .string("JWT"))])
        return try JWS.signRS256(header: header.bytes, payload: JSON.object(claims).bytes, key: signer ?? key)
    }

    func code(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch let e as AuthError { return e.code.rawValue } catch { return "\(error)" }
    }

    @Test("a service account's token gives its uid and developer claims")
    func valid() throws {
        let v = try CustomTokens.verify(try token([("claims", .object([("role", .string("admin"))]))]), project: try project(), now: clock.nowSeconds)
        #expect(v.uid == "u1" && v.developerClaims == #"{"role":"admin"}"#)
    }

    @Test("wrong key, unknown account, too long a life, expired, wrong audience, reserved claims, no uid: refused")
    func refused() throws {
        let p = try project(), now = clock.nowSeconds
        let other = try RSAPrivateKey.generate(bits: 2048)
        #expect(code { _ = try CustomTokens.verify(try token(signer: other), project: p, now: now) } == "INVALID_CUSTOM_TOKEN")
        #expect(code { _ = try CustomTokens.verify(try token([("iss", .string("x@y"))], drop: ["iss"]), project: p, now: now) } == "CREDENTIAL_MISMATCH")
        #expect(code { _ = try CustomTokens.verify(try token(lifetime: 3601), project: p, now: now) } == "INVALID_CUSTOM_TOKEN")
        #expect(code { _ = try CustomTokens.verify(try token(), project: p, now: now + 3600) } == "INVALID_CUSTOM_TOKEN")
        #expect(code { _ = try CustomTokens.verify(try token([("aud", .string("demo"))], drop: ["aud"]), project: p, now: now) } == "INVALID_CUSTOM_TOKEN")
        #expect(code { _ = try CustomTokens.verify(try token([("claims", .object([("firebase", .bool(true))]))]), project: p, now: now) } == "FORBIDDEN_CLAIM")
        #expect(code { _ = try CustomTokens.verify(try token([("claims", .array([]))]), project: p, now: now) } == "INVALID_CLAIMS")
        #expect(code { _ = try CustomTokens.verify(try token(drop: ["uid"]), project: p, now: now) } == "MISSING_IDENTIFIER")
        #expect(code { _ = try CustomTokens.verify(try token([("uid", .string(String(repeating: "u", count: 129)))], drop: ["uid"]), project: p, now: now) } == "INVALID_CUSTOM_TOKEN")
        #expect(code { _ = try CustomTokens.verify(try token(kid: "other"), project: p, now: now) } == "INVALID_CUSTOM_TOKEN")
        for uid in ["nulvictim\u{0}attacker", "line\nbreak", "tab\there", "del\u{7F}"] {
            #expect(code { _ = try CustomTokens.verify(try token([("uid", .string(uid))], drop: ["uid"]), project: p, now: now) }
                    == "INVALID_CUSTOM_TOKEN", "\(uid.debugDescription)")
        }
        for garbage in ["", ".", "a.b.c", "e30.e30.", String(repeating: "a", count: 9000)] {
            #expect(code { _ = try CustomTokens.verify(garbage, project: p, now: now) } == "INVALID_CUSTOM_TOKEN")
        }
    }

    @Test("unsigned tokens (the emulator's) only in dev mode")
    func unsigned() throws {
        let header = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let body = Base64URL.encode(JSON.object([("aud", .string(CustomTokens.audience)), ("uid", .string("emu"))]).bytes)
        let t = header + "." + body + "."
        #expect(try CustomTokens.verify(t, project: try project(dev: true), now: clock.nowSeconds).uid == "emu")
        #expect(code { _ = try CustomTokens.verify(t, project: try project(), now: clock.nowSeconds) } == "INVALID_CUSTOM_TOKEN")
    }
}
