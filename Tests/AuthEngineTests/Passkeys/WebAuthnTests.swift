import AuthCrypto
import Testing
import TestSupport
@testable import AuthEngine

/// What a relying party reads from an authenticator, each reader on its own: the authenticator
/// data (lengths, flags, attested credential data, extensions), the attestation object, COSE
/// keys, the client data, and which origins may answer a project's challenges.
@Suite("Passkeys: WebAuthn parsing and origins")
struct WebAuthnTests {
    typealias AuthData = WebAuthn.AuthenticatorData

    static func refused(_ what: String) -> String { "INVALID_AUTHENTICATOR_RESPONSE : " + what }

    static let rpHash = Digest.sha256("example.com")

    // Keys and signatures: `SignatureVectors` (TestSupport), made by another implementation.

    static func ec2(kty: Int64 = 2, alg: Int64 = -7, crv: CBOR = .int(1), x: CBOR? = nil, y: CBOR? = nil) -> CBOR {
        TestCBOR.map([(.int(1), .int(kty)), (.int(3), .int(alg)), (.int(-1), crv), (.int(-2), x ?? .bytes(SignatureVectors.p256X)), (.int(-3), y ?? .bytes(SignatureVectors.p256Y))])
    }
    static var es256Key: [UInt8] { TestCBOR.encode(ec2()) }

    /// Authenticator data for example.com: hash, flags, counter, then `tail`.
    static func authData(_ flags: UInt8, counter: UInt32 = 0, _ tail: [UInt8] = []) -> [UInt8] {
        rpHash + [flags] + TestCBOR.bigEndian(UInt64(counter), 4) + tail
    }

    /// Attested credential data: a zero AAGUID, the id's length, the id, the key.
    static func attested(id: [UInt8] = [7, 7, 7, 7], length: Int? = nil, key: [UInt8]? = nil) -> [UInt8] {
        [UInt8](repeating: 0xAA, count: 16) + TestCBOR.bigEndian(UInt64(length ?? id.count), 2) + id + (key ?? es256Key)
    }

    static let up: UInt8 = 0x01, uv: UInt8 = 0x04, be: UInt8 = 0x08, bs: UInt8 = 0x10, at: UInt8 = 0x40, ed: UInt8 = 0x80

    // MARK: Authenticator data

    @Test("authenticator data: 37 bytes at least, 4096 at most; the hash, flags and big-endian counter are read")
    func authDataLengths() throws {
        for n in [0, 1, 32, 36] {
            #expect(wireError { try AuthData([UInt8](repeating: 0, count: n)) } == Self.refused("authenticator data of \(n) bytes"))
        }
        let data = try AuthData(Self.authData(Self.up | Self.uv, counter: 0x0102_0304))
        #expect(data.rpIDHash == Self.rpHash && data.flags == 0x05 && data.signCount == 16_909_060 && data.credential == nil)
        #expect(data.has(AuthData.userPresent) && data.has(AuthData.userVerified) && !data.has(AuthData.backupEligible))
        #expect(try AuthData(Self.authData(0, counter: .max)).signCount == .max)
        // The largest allowed: extensions filling it up to 4096 bytes.
        let room = WebAuthn.maxAuthenticatorDataBytes - 37
        let filler = TestCBOR.map([(.int(1), .bytes([UInt8](repeating: 1, count: room - 5)))])
        let full = Self.authData(Self.ed, TestCBOR.encode(filler))
        #expect(full.count == 4096)
        _ = try AuthData(full)
        #expect(wireError { try AuthData(full + [0]) } == Self.refused("authenticator data of 4097 bytes"))
    }

    @Test("flags: backed up without backup eligible is refused; reserved bits 0x02 and 0x20 are ignored")
    func authDataFlags() throws {
        #expect(wireError { try AuthData(Self.authData(Self.up | Self.bs)) } == Self.refused("backed up but not backup eligible"))
        #expect(try AuthData(Self.authData(Self.be | Self.bs)).has(AuthData.backedUp))
        #expect(try !AuthData(Self.authData(Self.be)).has(AuthData.backedUp))
        #expect(try AuthData(Self.authData(0x02 | 0x20 | Self.up)).flags == 0x23)
    }

    @Test("attested credential data: AAGUID, id and COSE key read; the key's own bytes kept as they came")
    func authDataAttested() throws {
        let data = try AuthData(Self.authData(Self.up | Self.uv | Self.at, Self.attested()))
        let credential = try #require(data.credential)
        #expect(credential.aaguid == [UInt8](repeating: 0xAA, count: 16) && credential.id == [7, 7, 7, 7])
        #expect(credential.publicKey == Self.es256Key && credential.key == Self.ec2())
    }

    @Test("credential id: 1 to 1023 bytes, within the data; attested data cut short is refused")
    func authDataCredentialIDBounds() throws {
        let flags = Self.up | Self.at
        #expect(try AuthData(Self.authData(flags, Self.attested(id: [1]))).credential?.id == [1])
        let longest = [UInt8](repeating: 9, count: WebAuthn.maxCredentialIDBytes)
        #expect(try AuthData(Self.authData(flags, Self.attested(id: longest))).credential?.id == longest)
        #expect(wireError { try AuthData(Self.authData(flags, Self.attested(id: []))) } == Self.refused("credential id of 0 bytes"))
        #expect(wireError { try AuthData(Self.authData(flags, Self.attested(id: longest + [9]))) } == Self.refused("credential id of 1024 bytes"))
        // A length past the bytes there are.
        #expect(wireError { try AuthData(Self.authData(flags, Self.attested(id: [1, 2, 3], length: 200))) } == Self.refused("credential id of 200 bytes"))
        #expect(wireError { try AuthData(Self.authData(flags, Self.attested(id: [1, 2, 3], length: 0xFFFF))) }
                == Self.refused("credential id of 65535 bytes"))
        // Fewer than AAGUID and length.
        let cut = Array(Self.attested().prefix(17))
        #expect(wireError { try AuthData(Self.authData(flags, cut)) } == Self.refused("attested credential data cut short"))
        #expect(wireError { try AuthData(Self.authData(flags)) } == Self.refused("attested credential data cut short"))
        // No key after the id, or a key that is not CBOR.
        #expect(wireError { try AuthData(Self.authData(flags, Self.attested(key: []))) } == Self.refused("credential public key: CBOR at byte 59: unexpected end"))
        #expect(wireError { try AuthData(Self.authData(flags, Self.attested(key: [0xF9, 0, 0]))) }
                == Self.refused("credential public key: CBOR at byte 60: a simple value or float other than false, true and null"))
    }

    @Test("bytes after the data are refused: after the counter, after the key, after the extensions")
    func authDataTrailing() {
        let after = Self.refused("bytes after the authenticator data")
        #expect(wireError { try AuthData(Self.authData(Self.up, [0])) } == after)
        #expect(wireError { try AuthData(Self.authData(Self.up | Self.at, Self.attested() + [0xA0])) } == after)
        // Extension data without the flag that announces it.
        #expect(wireError { try AuthData(Self.authData(Self.up, TestCBOR.encode(TestCBOR.map([(.text("credProtect"), .int(2))])))) } == after)
        #expect(wireError { try AuthData(Self.authData(Self.up | Self.ed, [0xA0, 0xA0])) } == after)
    }

    @Test("extension data: one map, after the credential if any; not a map or missing is refused")
    func authDataExtensions() throws {
        let extensions = TestCBOR.encode(TestCBOR.map([(.text("credProtect"), .int(2)), (.text("hmac-secret"), .bool(true))]))
        #expect(try AuthData(Self.authData(Self.up | Self.ed, extensions)).credential == nil)
        let both = try AuthData(Self.authData(Self.up | Self.at | Self.ed, Self.attested() + extensions))
        #expect(both.credential?.publicKey == Self.es256Key)
        #expect(wireError { try AuthData(Self.authData(Self.up | Self.ed)) } == Self.refused("extensions: CBOR at byte 37: unexpected end"))
        #expect(wireError { try AuthData(Self.authData(Self.up | Self.ed, [0x80])) } == Self.refused("extensions are not a map"))
        #expect(wireError { try AuthData(Self.authData(Self.up | Self.ed, [0x01])) } == Self.refused("extensions are not a map"))
        #expect(wireError { try AuthData(Self.authData(Self.up | Self.ed, [0xBF, 0xFF])) } == Self.refused("extensions: CBOR at byte 38: an indefinite length"))
        // The extensions' map is read with the same bounds as any CBOR.
        let deep = [UInt8](repeating: 0xA1, count: 1) + Array([[UInt8]](repeating: [0x01, 0xA1], count: 9).joined()) + [0x01, 0xA0]
        #expect(wireError { try AuthData(Self.authData(Self.up | Self.ed, deep)) }?.hasPrefix(Self.refused("extensions: CBOR at byte")) == true)
    }

    // MARK: Attestation object

    static func attestation(_ pairs: [(CBOR, CBOR)]) -> [UInt8] { TestCBOR.encode(TestCBOR.map(pairs)) }
    static var goodAuthData: [UInt8] { authData(up | uv | at, attested()) }

    @Test("attestation object: none with an empty statement; another format is read with its statement, not trusted")
    func attestationObject() throws {
        let none = try WebAuthn.AttestationObject(Self.attestation([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])),
                                                                    (.text("authData"), .bytes(Self.goodAuthData))]))
        #expect(none.format == "none" && none.authenticatorData.credential?.id == [7, 7, 7, 7])
        // Keys in any order; a packed self attestation's statement.
        let statement = TestCBOR.map([(.text("alg"), .int(-7)), (.text("sig"), .bytes([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]))])
        let packed = try WebAuthn.AttestationObject(Self.attestation([(.text("authData"), .bytes(Self.goodAuthData)), (.text("fmt"), .text("packed")),
                                                                      (.text("attStmt"), statement)]))
        #expect(packed.format == "packed")
    }

    @Test("attestation object: each missing or mistyped member is refused, and so are trailing bytes, a none with a statement, bad data")
    func attestationObjectRefused() {
        let authData: (CBOR, CBOR) = (.text("authData"), .bytes(Self.goodAuthData))
        let statement: (CBOR, CBOR) = (.text("attStmt"), .map([]))
        func refusal(_ bytes: [UInt8]) -> String? { wireError { try WebAuthn.AttestationObject(bytes) } }
        let noFormat = Self.refused("attestation object has no format")
        #expect(refusal(Self.attestation([statement, authData])) == noFormat)
        #expect(refusal(Self.attestation([(.text("fmt"), .int(1)), statement, authData])) == noFormat)
        #expect(refusal(Self.attestation([(.text("fmt"), .text("")), statement, authData])) == noFormat)
        #expect(refusal(Self.attestation([(.text("fmt"), .text(String(repeating: "f", count: 33))), statement, authData])) == noFormat)
        #expect(refusal(Self.attestation([(.text("fmt"), .text(String(repeating: "f", count: 32))), statement, authData])) == nil)
        #expect(refusal(Self.attestation([(.text("fmt"), .text("none")), authData])) == Self.refused("attestation object has no statement"))
        #expect(refusal(Self.attestation([(.text("fmt"), .text("none")), (.text("attStmt"), .array([])), authData]))
                == Self.refused("attestation object has no statement"))
        #expect(refusal(Self.attestation([(.text("fmt"), .text("none")), (.text("attStmt"), TestCBOR.map([(.text("alg"), .int(-7))])), authData]))
                == Self.refused("a none attestation with a statement"))
        #expect(refusal(Self.attestation([(.text("fmt"), .text("none")), statement])) == Self.refused("attestation object has no authenticator data"))
        #expect(refusal(Self.attestation([(.text("fmt"), .text("none")), statement, (.text("authData"), .text("x"))]))
                == Self.refused("attestation object has no authenticator data"))
        // The object is one CBOR item and nothing more.
        let good = Self.attestation([(.text("fmt"), .text("none")), statement, authData])
        #expect(refusal(good + [0]) == Self.refused("attestation object: CBOR at byte \(good.count): bytes after the item"))
        #expect(refusal([0xF9, 0, 0]) == Self.refused("attestation object: CBOR at byte 1: a simple value or float other than false, true and null"))
        #expect(refusal(hex("80")) == noFormat)
        #expect(refusal([]) == Self.refused("attestation object of 0 bytes"))
        #expect(refusal([UInt8](repeating: 0, count: WebAuthn.maxAttestationBytes + 1))
                == Self.refused("attestation object of \(WebAuthn.maxAttestationBytes + 1) bytes"))
        // The authenticator data inside is read by its own rules.
        #expect(refusal(Self.attestation([(.text("fmt"), .text("none")), statement, (.text("authData"), .bytes([1, 2, 3]))]))
                == Self.refused("authenticator data of 3 bytes"))
    }

    // MARK: COSE keys

    @Test("COSE: an ES256 key on P-256 verifies its signature; an EdDSA key on Ed25519 and an RS256 key are read with their algorithm")
    func coseKeys() throws {
        let (es, esAlg) = try WebAuthn.COSEKey.signatureKey(Self.ec2())
        #expect(esAlg == -7 && es.algorithm == .es256 && es.verify(signature: SignatureVectors.p256Signature, message: SignatureVectors.message))
        let okp = TestCBOR.map([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes(SignatureVectors.ed25519Key))])
        let (ed, edAlg) = try WebAuthn.COSEKey.signatureKey(okp)
        #expect(edAlg == -8 && ed.algorithm == .eddsa && ed.verify(signature: SignatureVectors.ed25519Signature, message: [0x72]))
        let rsa = TestCBOR.map([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(SignatureVectors.rsa2048N)), (.int(-2), .bytes([1, 0, 1]))])
        let (rs, rsAlg) = try WebAuthn.COSEKey.signatureKey(rsa)
        #expect(rsAlg == -257 && rs.algorithm == .rs256)
        // A stored key is read back from its bytes.
        #expect(try WebAuthn.COSEKey.signatureKey(stored: Self.es256Key).verify(signature: SignatureVectors.p256Signature, message: SignatureVectors.message))
        #expect(WebAuthn.COSEKey.supported == [-7, -8, -257] && Passkeys.algorithms == [-7, -8, -257])
    }

    @Test("COSE: a type and algorithm that do not go together, another curve, missing or invalid numbers, not a map are refused")
    func coseKeysRefused() {
        func refusal(_ key: CBOR) -> String? { wireError { try WebAuthn.COSEKey.signatureKey(key) } }
        let notCOSE = Self.refused("the credential public key is not a COSE key")
        #expect(refusal(.array([])) == notCOSE)
        #expect(refusal(.bytes(Self.es256Key)) == notCOSE)
        #expect(refusal(TestCBOR.map([(.int(3), .int(-7))])) == notCOSE)
        #expect(refusal(TestCBOR.map([(.int(1), .int(2))])) == notCOSE)
        #expect(refusal(TestCBOR.map([(.int(1), .text("EC2")), (.int(3), .int(-7))])) == notCOSE)
        #expect(refusal(Self.ec2(alg: -8)) == Self.refused("COSE key type 2 with algorithm -8 is not supported"))
        #expect(refusal(Self.ec2(alg: -35)) == Self.refused("COSE key type 2 with algorithm -35 is not supported"))
        #expect(refusal(Self.ec2(kty: 3)) == Self.refused("COSE key type 3 with algorithm -7 is not supported"))
        #expect(refusal(Self.ec2(kty: 1)) == Self.refused("COSE key type 1 with algorithm -7 is not supported"))
        #expect(refusal(Self.ec2(crv: .int(2))) == Self.refused("an ES256 key not on P-256"))
        #expect(refusal(Self.ec2(crv: .text("P-256"))) == Self.refused("an ES256 key not on P-256"))
        #expect(refusal(Self.ec2(y: .text("y"))) == Self.refused("an ES256 key not on P-256"))
        // Compressed points (y a boolean) are not taken.
        #expect(refusal(Self.ec2(y: .bool(true))) == Self.refused("an ES256 key not on P-256"))
        let invalid = Self.refused("the credential public key is not a valid key")
        var offCurve = SignatureVectors.p256Y
        offCurve[31] ^= 1
        #expect(refusal(Self.ec2(y: .bytes(offCurve))) == invalid)
        #expect(refusal(Self.ec2(x: .bytes(Array(SignatureVectors.p256X.dropFirst())))) == invalid)
        func okp(_ crv: Int64, _ x: [UInt8]) -> CBOR {
            TestCBOR.map([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(crv)), (.int(-2), .bytes(x))])
        }
        #expect(refusal(okp(4, SignatureVectors.ed25519Key)) == Self.refused("an EdDSA key not on Ed25519"))
        #expect(refusal(okp(6, Array(SignatureVectors.ed25519Key.prefix(31)))) == invalid)
        func rsa(_ n: CBOR?, _ e: CBOR?) -> CBOR {
            var pairs: [(CBOR, CBOR)] = [(.int(1), .int(3)), (.int(3), .int(-257))]
            if let n { pairs.append((.int(-1), n)) }
            if let e { pairs.append((.int(-2), e)) }
            return TestCBOR.map(pairs)
        }
        #expect(refusal(rsa(.bytes(SignatureVectors.rsa2048N), nil)) == Self.refused("an RSA key without n or e"))
        #expect(refusal(rsa(nil, .bytes([1, 0, 1]))) == Self.refused("an RSA key without n or e"))
        #expect(refusal(rsa(.bytes(Array(SignatureVectors.rsa2048N.prefix(128))), .bytes([1, 0, 1]))) == invalid)
        // A stored key that does not read is the server's fault, not the client's.
        #expect(wireError { try WebAuthn.COSEKey.signatureKey(stored: [0xFF]) }
                == "INTERNAL : a stored passkey's key does not read: CBOR at byte 1: a simple value or float other than false, true and null")
    }

    // MARK: Client data

    static func clientData(_ json: String) throws -> WebAuthn.ClientData { try WebAuthn.ClientData(Array(json.utf8)) }

    @Test("client data: type, challenge (base64url), origin and crossOrigin read; other members ignored")
    func clientData() throws {
        let c = try Self.clientData(#"{"type":"webauthn.get","challenge":"AQID","origin":"https://example.com","crossOrigin":false,"other":[1]}"#)
        #expect(c.type == "webauthn.get" && c.challenge == [1, 2, 3] && c.origin == "https://example.com" && !c.crossOrigin)
        #expect(try !Self.clientData(#"{"type":"t","challenge":"AQID","origin":"o"}"#).crossOrigin)
        #expect(try !Self.clientData(#"{"type":"t","challenge":"AQID","origin":"o","crossOrigin":null}"#).crossOrigin)
        #expect(try Self.clientData(#"{"type":"t","challenge":"AQID","origin":"o","crossOrigin":true}"#).crossOrigin)
        // Padded standard base64 is accepted as well.
        #expect(try Self.clientData(#"{"type":"t","challenge":"+/8=","origin":"o"}"#).challenge == [0xFB, 0xFF])
    }

    @Test("client data: not a JSON object, a missing or mistyped member, an empty or overlong challenge or origin are refused")
    func clientDataRefused() {
        func refusal(_ json: String) -> String? { wireError { try Self.clientData(json) } }
        let notObject = Self.refused("clientDataJSON is not a JSON object")
        for bad in ["", "[]", "\"x\"", "{", #"{"type":"t"} x"#, #"{"a":{"b":{"c":{"d":{}}}},"type":"t","challenge":"AQID","origin":"o"}"#] {
            #expect(refusal(bad) == notObject, "\(bad)")
        }
        #expect(refusal(#"{"type":"t","challenge":"AQID","origin":"o","pad":""# + String(repeating: "x", count: 4096) + #""}"#) == notObject)
        #expect(refusal(#"{"challenge":"AQID","origin":"o"}"#) == Self.refused("clientDataJSON has no type"))
        #expect(refusal(#"{"type":1,"challenge":"AQID","origin":"o"}"#) == Self.refused("clientDataJSON has no type"))
        let noChallenge = Self.refused("clientDataJSON has no challenge")
        for challenge in [#""""#, #""*""#, "1", #""A""#, "\"" + String(repeating: "A", count: 260) + "\""] {
            #expect(refusal(#"{"type":"t","origin":"o","challenge":"# + challenge + "}") == noChallenge, "\(challenge)")
        }
        #expect(refusal(#"{"type":"t","origin":"o"}"#) == noChallenge)
        let noOrigin = Self.refused("clientDataJSON has no origin")
        for origin in [#""""#, "null", "\"" + String(repeating: "o", count: 513) + "\""] {
            #expect(refusal(#"{"type":"t","challenge":"AQID","origin":"# + origin + "}") == noOrigin, "\(origin)")
        }
        #expect(refusal(#"{"type":"t","challenge":"AQID","origin":"o","crossOrigin":"false"}"#)
                == Self.refused("clientDataJSON crossOrigin is not a boolean"))
        #expect(refusal(#"{"type":"t","challenge":"AQID","origin":"o","crossOrigin":0}"#)
                == Self.refused("clientDataJSON crossOrigin is not a boolean"))
    }

    // MARK: Origins

    /// Google's example signing certificate fingerprint, and its apk-key-hash (base64url of the 32 bytes).
    static let fingerprint = "FA:C6:17:45:DC:09:03:78:6F:B9:ED:E6:2A:96:2B:39:9F:73:48:F0:BB:6F:89:9B:83:32:66:75:91:03:3B:9C"
    static let apkKeyHash = "-sYXRdwJA3hvue3mKpYrOZ9zSPC7b4mbgzJmdZEDO5w"

    static func project(devMode: Bool = false, rpID: String? = nil, origins: [String] = [], fingerprints: [String] = [fingerprint]) -> ProjectSettings {
        var p = ProjectSettings(id: "p", devMode: devMode, authorizedDomains: ["example.com", "app.example.com", "*.apps.example.com", "other.test"],
                                androidApps: [AndroidApp(packageName: "com.example.android", sha256Fingerprints: fingerprints)],
                                smsOriginDomain: "Example.com")
        p.passkeys.rpID = rpID
        p.passkeys.origins = origins
        return p
    }

    @Test("relying party id: the configured one, else localhost in dev mode, else the SMS origin domain (lower-cased)")
    func relyingPartyID() {
        #expect(Self.project().passkeyRelyingPartyID == "example.com")
        #expect(Self.project(devMode: true).passkeyRelyingPartyID == "localhost")
        #expect(Self.project(devMode: true, rpID: "Login.Example.com").passkeyRelyingPartyID == "login.example.com")
        #expect(Self.project(rpID: "").passkeyRelyingPartyID == "example.com")
    }

    @Test("https on the relying party's domain: the id itself and sub-domains the project authorizes; others only in dev mode")
    func httpsOrigins() {
        let p = Self.project(), dev = Self.project(devMode: true, rpID: "example.com")
        for allowed in ["https://example.com", "https://app.example.com", "https://EXAMPLE.com", "https://a.apps.example.com",
                        "https://example.com:8443", "https://app.example.com:443"] {
            #expect(PasskeyOrigins.allows(allowed, project: p), "\(allowed)")
            #expect(PasskeyOrigins.allows(allowed, project: dev), "\(allowed) in dev mode")
        }
        // On the domain but not authorized: dev mode only.
        for subdomain in ["https://login.example.com", "https://a.b.example.com"] {
            #expect(!PasskeyOrigins.allows(subdomain, project: p), "\(subdomain)")
            #expect(PasskeyOrigins.allows(subdomain, project: dev), "\(subdomain) in dev mode")
        }
        // Off the domain, even if authorized, even in dev mode.
        for off in ["https://other.test", "https://notexample.com", "https://example.com.evil.test", "https://evil.test",
                    "https://examplexcom", "https://com", "https://localhost"] {
            #expect(!PasskeyOrigins.allows(off, project: p), "\(off)")
            #expect(!PasskeyOrigins.allows(off, project: dev), "\(off) in dev mode")
        }
    }

    @Test("http only for localhost (and its sub-domains) when the relying party is localhost; never on another domain")
    func httpOrigins() {
        let dev = Self.project(devMode: true)
        for allowed in ["http://localhost", "http://localhost:8080", "http://app.localhost:3000", "https://localhost", "HTTP://LOCALHOST:5000"] {
            #expect(PasskeyOrigins.allows(allowed, project: dev), "\(allowed)")
        }
        for refused in ["https://localhost.evil.example", "http://localhost.evil.example", "http://localhostx", "http://127.0.0.1",
                        "http://[::1]", "ws://localhost", "http://evillocalhost", "http://localhost:99999", "https://.localhost",
                        "https://a..localhost"] {
            #expect(!PasskeyOrigins.allows(refused, project: dev), "\(refused)")
        }
        // http on a real domain, authorized or not, dev mode or not.
        for project in [Self.project(), Self.project(devMode: true, rpID: "example.com")] {
            #expect(!PasskeyOrigins.allows("http://example.com", project: project))
            #expect(!PasskeyOrigins.allows("http://app.example.com", project: project))
        }
        // A relying party of evil.example does not make its localhost sub-domain an http origin.
        let evil = Self.project(devMode: true, rpID: "evil.example")
        #expect(!PasskeyOrigins.allows("http://localhost.evil.example", project: evil))
        #expect(PasskeyOrigins.allows("https://localhost.evil.example", project: evil))
    }

    @Test("android:apk-key-hash: the base64url SHA-256 of a configured signing certificate, however the fingerprint is written")
    func androidOrigins() {
        let p = Self.project()
        #expect(PasskeyOrigins.allows("android:apk-key-hash:" + Self.apkKeyHash, project: p))
        #expect(!PasskeyOrigins.allows("android:apk-key-hash:" + Self.apkKeyHash + "=", project: p))
        #expect(!PasskeyOrigins.allows("android:apk-key-hash:" + String(Self.apkKeyHash.dropLast()) + "x", project: p))
        #expect(!PasskeyOrigins.allows("android:apk-key-hash:", project: p))
        #expect(!PasskeyOrigins.allows("android:apk-key-hash:" + Self.apkKeyHash, project: Self.project(fingerprints: [])))
        // Without colons, lower case: the same certificate.
        let plain = Self.fingerprint.filter { $0 != ":" }.lowercased()
        #expect(PasskeyOrigins.allows("android:apk-key-hash:" + Self.apkKeyHash, project: Self.project(fingerprints: ["AA:BB", plain])))
        // A fingerprint that is not 32 bytes of hex matches nothing.
        #expect(!PasskeyOrigins.allows("android:apk-key-hash:qw", project: Self.project(fingerprints: ["AA:BB"])))
        #expect(!PasskeyOrigins.allows("android:apk-key-hash:", project: Self.project(fingerprints: ["zz"])))
        #expect(PasskeyOrigins.apkKeyHash(Self.fingerprint) == Self.apkKeyHash && PasskeyOrigins.apkKeyHash("AA:BB") == nil)
    }

    @Test("explicit origins: accepted exactly (case aside), even off the domain or over http")
    func explicitOrigins() {
        let p = Self.project(origins: ["https://Partner.Example.NET", "http://intranet.test:8080"])
        #expect(PasskeyOrigins.allows("https://partner.example.net", project: p))
        #expect(PasskeyOrigins.allows("http://intranet.test:8080", project: p))
        #expect(!PasskeyOrigins.allows("https://partner.example.net:443", project: p))
        #expect(!PasskeyOrigins.allows("http://intranet.test", project: p))
        #expect(!PasskeyOrigins.allows("https://sub.partner.example.net", project: p))
        #expect(!PasskeyOrigins.allows("https://partner.example.net", project: Self.project()))
    }

    @Test("origin form: userinfo, paths, queries, fragments, ports out of form, empty hosts and other characters are refused")
    func originForm() {
        let dev = Self.project(devMode: true, rpID: "example.com")
        for bad in ["https://user@example.com", "https://user:pw@example.com", "https://example.com/", "https://example.com/path",
                    "https://example.com?x", "https://example.com#x", "https://example.com:", "https://example.com:123456",
                    "https://example.com:80a", "https://example.com:-1", "https://example.com:+443", "https://example.com:８０",
                    "https://example.com:443:443", "https://", "https:/example.com", "https:example.com", "example.com", "",
                    "https://exa mple.com", "https://exam_ple.com", "https://ex\u{E4}mple.com", "https://example.com\u{0}",
                    "https://[::1]:443", "null", "https://example.com.", "https://example.com\\@evil.test"] {
            #expect(!PasskeyOrigins.allows(bad, project: dev), "\(bad)")
        }
        #expect(PasskeyOrigins.schemeAndHost("HTTPS://App.Example.com:8443").map { [$0.0, $0.1] } == ["https", "app.example.com"])
        #expect(PasskeyOrigins.schemeAndHost("https://example.com/") == nil)
    }
}
