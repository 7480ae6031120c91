@testable import AuthCrypto
@testable import AuthEngine

/// A software authenticator for the tests, written from WebAuthn Level 3 (§6.1 authenticator
/// data, §6.5 attestation objects, §5.8.1 client data) and RFC 9053 (COSE keys): one credential
/// with an ES256 key (OpenSSL's, through `ES256PrivateKey`; its raw `r ‖ s` signatures are
/// DER-encoded as authenticators send them) or an RS256 key, its id and its signature counter.
/// Each checked field of a ceremony can be changed through `Ceremony`, so that a test breaks
/// exactly one check.
final class SoftAuthenticator {
    enum Key {
        case es256(ES256PrivateKey)
        case rs256(RSAPrivateKey)
    }

    static let up: UInt8 = 0x01, uv: UInt8 = 0x04, be: UInt8 = 0x08, bs: UInt8 = 0x10, at: UInt8 = 0x40, ed: UInt8 = 0x80

    let key: Key
    let credentialID: [UInt8]
    /// The user handle the relying party gave at registration (sent back with each assertion).
    var userHandle: [UInt8]?
    var signCount: UInt32

    init(key: Key, credentialID: [UInt8], signCount: UInt32 = 0) {
        self.key = key; self.credentialID = credentialID; self.signCount = signCount
    }

    /// A fresh P-256 key and a 16-byte id drawn from `seed`.
    static func es256(id seed: UInt8 = 1, signCount: UInt32 = 0) throws -> SoftAuthenticator {
        SoftAuthenticator(key: .es256(try ES256PrivateKey.generate()), credentialID: (0..<16).map { seed &+ UInt8($0) }, signCount: signCount)
    }

    /// The credential id as the wire names it.
    var id: String { Base64URL.encode(credentialID) }

    /// The COSE key (RFC 9053 §7.1 EC2, RFC 8230 §4 RSA), in the key order authenticators use.
    var coseKey: CBOR {
        switch key {
        case let .es256(k):
            let (x, y) = Self.point(k)
            return TestCBOR.map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(x)), (.int(-3), .bytes(y))])
        case let .rs256(k):
            let n = (try? k.publicKey.modulus()) ?? [], e = (try? k.publicKey.exponent()) ?? []
            return TestCBOR.map([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(n)), (.int(-2), .bytes(e))])
        }
    }

    /// A P-256 key's public point: the last 64 bytes of its SubjectPublicKeyInfo (`04 ‖ x ‖ y`).
    static func point(_ key: ES256PrivateKey) -> (x: [UInt8], y: [UInt8]) {
        guard let pem = try? key.publicKeyPEM(), let der = PublicKeyDER.body(pem: Array(pem.utf8)), der.count == 91 else {
            fatalError("the test key has no P-256 point")
        }
        return (Array(der[27..<59]), Array(der[59..<91]))
    }

    /// The signature an authenticator sends (§6.5.6): DER ECDSA, or PKCS#1 v1.5.
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        switch key {
        case let .es256(k):
            guard let der = ES256Signature.der(fromRaw: try k.sign(message)) else { fatalError("no DER signature") }
            return der
        case let .rs256(k):
            return try k.signRS256(message)
        }
    }

    // MARK: The pieces

    static func clientDataJSON(type: String, challenge: String, origin: String, crossOrigin: Bool?) -> [UInt8] {
        var text = "{\"type\":\"\(type)\",\"challenge\":\"\(challenge)\",\"origin\":\"\(origin)\""
        if let crossOrigin { text += ",\"crossOrigin\":\(crossOrigin)" }
        return Array((text + "}").utf8)
    }

    static func authenticatorData(rpID: String, flags: UInt8, counter: UInt32, attested: [UInt8] = [], extensions: [UInt8] = []) -> [UInt8] {
        Digest.sha256(rpID) + [flags] + TestCBOR.bigEndian(UInt64(counter), 4) + attested + extensions
    }

    /// Attested credential data (§6.5.2): AAGUID, the id's length (2 bytes), the id, the COSE key.
    func attestedCredentialData(aaguid: [UInt8] = [UInt8](repeating: 0, count: 16), id: [UInt8]? = nil, coseKey: [UInt8]? = nil) -> [UInt8] {
        let id = id ?? credentialID
        return aaguid + TestCBOR.bigEndian(UInt64(id.count), 2) + id + (coseKey ?? TestCBOR.encode(self.coseKey))
    }

    /// Everything a ceremony's response is made of, each field changeable.
    struct Ceremony {
        var challenge: [UInt8]
        var rpID: String
        var origin: String
        var type: String
        var flags: UInt8
        var crossOrigin: Bool? = false
        /// The challenge as the client data carries it (its base64url unless changed).
        var challengeText: String? = nil
        /// The response's `id` and `rawId` (the credential's unless changed).
        var responseID: String? = nil
        var rawID: String? = nil
        /// Registration: the attestation format and statement, the AAGUID, the attested id.
        var format = "none"
        var statement: [CBOR.Pair] = []
        var aaguid = [UInt8](repeating: 0, count: 16)
        var attestedID: [UInt8]? = nil
        /// Registration: whether the attested credential data is there at all (its flag is `flags`' business).
        var attested = true
        /// Assertion: the counter sent (the authenticator's next one unless set), the user handle.
        var counter: UInt32? = nil
        var userHandle: [UInt8]?? = nil
        /// Assertion: the signature is spoiled (one bit flipped) after signing.
        var flipSignatureBit = false
        /// Base64 (standard, padded) instead of base64url for the binary fields, as the iOS SDK sends them.
        var standardBase64 = false
    }

    func encode(_ bytes: [UInt8], _ ceremony: Ceremony) -> String {
        ceremony.standardBase64 ? Base64URL.encodeStandard(bytes) : Base64URL.encode(bytes)
    }

    /// `navigator.credentials.create()`'s answer to `challenge`.
    func register(challenge: [UInt8], rpID: String, origin: String, _ edit: (inout Ceremony) -> Void = { _ in }) -> Passkeys.RegistrationResponse {
        var c = Ceremony(challenge: challenge, rpID: rpID, origin: origin, type: "webauthn.create",
                         flags: Self.up | Self.uv | Self.be | Self.bs | Self.at)
        c.counter = signCount
        edit(&c)
        let client = Self.clientDataJSON(type: c.type, challenge: c.challengeText ?? Base64URL.encode(c.challenge), origin: c.origin,
                                         crossOrigin: c.crossOrigin)
        let data = Self.authenticatorData(rpID: c.rpID, flags: c.flags, counter: c.counter ?? signCount,
                                          attested: c.attested ? attestedCredentialData(aaguid: c.aaguid, id: c.attestedID) : [])
        let object = TestCBOR.map([(.text("fmt"), .text(c.format)), (.text("attStmt"), .map(c.statement)), (.text("authData"), .bytes(data))])
        return Passkeys.RegistrationResponse(id: c.responseID ?? id, rawID: c.rawID ?? encode(credentialID, c), type: "public-key",
                                             clientDataJSON: encode(client, c), attestationObject: encode(TestCBOR.encode(object), c))
    }

    /// `navigator.credentials.get()`'s answer to `challenge`; the counter moves on by one.
    func assert(challenge: [UInt8], rpID: String, origin: String, _ edit: (inout Ceremony) -> Void = { _ in }) throws -> Passkeys.AssertionResponse {
        var c = Ceremony(challenge: challenge, rpID: rpID, origin: origin, type: "webauthn.get", flags: Self.up | Self.uv | Self.be | Self.bs)
        edit(&c)
        if c.counter == nil { signCount += 1 }
        let client = Self.clientDataJSON(type: c.type, challenge: c.challengeText ?? Base64URL.encode(c.challenge), origin: c.origin,
                                         crossOrigin: c.crossOrigin)
        let data = Self.authenticatorData(rpID: c.rpID, flags: c.flags, counter: c.counter ?? signCount)
        var signature = try sign(data + Digest.sha256(client))
        if c.flipSignatureBit { signature[signature.count / 2] ^= 0x01 }
        let handle: [UInt8]? = c.userHandle ?? userHandle
        return Passkeys.AssertionResponse(id: c.responseID ?? id, rawID: c.rawID ?? encode(credentialID, c), type: "public-key",
                                          clientDataJSON: encode(client, c), authenticatorData: encode(data, c),
                                          signature: encode(signature, c), userHandle: handle.map { encode($0, c) })
    }
}
