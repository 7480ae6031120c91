import AuthCrypto
import JSONValue

/// What a relying party reads from an authenticator (WebAuthn Level 3): the client data, the
/// authenticator data and, at registration, the attestation object and the credential's COSE
/// key. Each reader is strict and bounded and refuses with `INVALID_AUTHENTICATOR_RESPONSE :
/// <what>`; the checks of a ceremony are `Passkeys`'.
enum WebAuthn {
    /// Bounds on what a client may send (a real authenticator's are far smaller).
    static let maxClientDataBytes = 4096
    static let maxAttestationBytes = 16384
    static let maxAuthenticatorDataBytes = 4096
    static let maxCredentialIDBytes = 1023

    static func refuse(_ what: String) -> AuthError { AuthError(.invalidAuthenticatorResponse, what) }

    /// `CollectedClientData` (§5.8.1): its JSON, of which type, challenge, origin and crossOrigin are read.
    struct ClientData {
        let type: String
        let challenge: [UInt8]
        let origin: String
        let crossOrigin: Bool

        init(_ bytes: [UInt8]) throws(AuthError) {
            guard !bytes.isEmpty, bytes.count <= WebAuthn.maxClientDataBytes,
                  let json = try? JSONParser(maxBytes: WebAuthn.maxClientDataBytes, maxDepth: 4).parse(bytes),
                  json.objectValue != nil else { throw WebAuthn.refuse("clientDataJSON is not a JSON object") }
            guard let type = json["type"]?.stringValue else { throw WebAuthn.refuse("clientDataJSON has no type") }
            guard let text = json["challenge"]?.stringValue, text.utf8.count <= 256, let challenge = Base64URL.decode(text), !challenge.isEmpty else {
                throw WebAuthn.refuse("clientDataJSON has no challenge")
            }
            guard let origin = json["origin"]?.stringValue, !origin.isEmpty, origin.utf8.count <= 512 else {
                throw WebAuthn.refuse("clientDataJSON has no origin")
            }
            if let c = json["crossOrigin"], !c.isNull, c.boolValue == nil { throw WebAuthn.refuse("clientDataJSON crossOrigin is not a boolean") }
            self.type = type; self.challenge = challenge; self.origin = origin
            self.crossOrigin = json["crossOrigin"]?.boolValue ?? false
        }
    }

    /// Authenticator data (§6.1): the relying party id's hash, flags, the signature counter and,
    /// at registration, the attested credential (AAGUID, credential id, COSE key).
    struct AuthenticatorData {
        static let userPresent: UInt8 = 0x01, userVerified: UInt8 = 0x04, backupEligible: UInt8 = 0x08, backedUp: UInt8 = 0x10
        static let attested: UInt8 = 0x40, extensions: UInt8 = 0x80

        let rpIDHash: [UInt8]
        let flags: UInt8
        let signCount: UInt32
        let credential: AttestedCredential?

        struct AttestedCredential {
            let aaguid: [UInt8]
            let id: [UInt8]
            /// The COSE key's own bytes, stored as they came.
            let publicKey: [UInt8]
            let key: CBOR
        }

        func has(_ flag: UInt8) -> Bool { flags & flag != 0 }

        init(_ bytes: [UInt8]) throws(AuthError) {
            guard bytes.count >= 37, bytes.count <= WebAuthn.maxAuthenticatorDataBytes else {
                throw WebAuthn.refuse("authenticator data of \(bytes.count) bytes")
            }
            rpIDHash = Array(bytes[0..<32])
            flags = bytes[32]
            signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
            // Reserved flag bits (0x02, 0x20) are ignored, as §6.1 asks.
            if flags & AuthenticatorData.backedUp != 0, flags & AuthenticatorData.backupEligible == 0 {
                throw WebAuthn.refuse("backed up but not backup eligible")
            }
            var at = 37
            if flags & AuthenticatorData.attested != 0 {
                guard bytes.count >= at + 18 else { throw WebAuthn.refuse("attested credential data cut short") }
                let aaguid = Array(bytes[at..<(at + 16)])
                let length = Int(bytes[at + 16]) << 8 | Int(bytes[at + 17])
                at += 18
                guard length >= 1, length <= WebAuthn.maxCredentialIDBytes, bytes.count >= at + length else {
                    throw WebAuthn.refuse("credential id of \(length) bytes")
                }
                let id = Array(bytes[at..<(at + length)])
                at += length
                let key: CBOR, end: Int
                do { (key, end) = try CBOR.decodePrefix(bytes[at...]) } catch { throw WebAuthn.refuse("credential public key: \(error)") }
                credential = AttestedCredential(aaguid: aaguid, id: id, publicKey: Array(bytes[at..<end]), key: key)
                at = end
            } else {
                credential = nil
            }
            if flags & AuthenticatorData.extensions != 0 {
                // Extension outputs: one CBOR map, read only to find its end (none is used).
                do {
                    let (ext, end) = try CBOR.decodePrefix(bytes[at...])
                    guard case .map = ext else { throw WebAuthn.refuse("extensions are not a map") }
                    at = end
                } catch let e as AuthError { throw e } catch { throw WebAuthn.refuse("extensions: \(error)") }
            }
            guard at == bytes.count else { throw WebAuthn.refuse("bytes after the authenticator data") }
        }
    }

    /// The attestation object (§6.5): its format, statement and authenticator data. Statements
    /// are read but not trusted: `none` is asked for, and any format is taken as self-reported
    /// (docs/passkeys.md "Attestation").
    struct AttestationObject {
        let format: String
        let statement: CBOR
        let authenticatorData: AuthenticatorData
        /// The authenticator data's bytes, as signed.
        let authenticatorDataBytes: [UInt8]

        init(_ bytes: [UInt8]) throws(AuthError) {
            guard !bytes.isEmpty, bytes.count <= WebAuthn.maxAttestationBytes else { throw WebAuthn.refuse("attestation object of \(bytes.count) bytes") }
            let object: CBOR
            do { object = try CBOR.decode(bytes) } catch { throw WebAuthn.refuse("attestation object: \(error)") }
            guard let format = object["fmt"]?.textValue, !format.isEmpty, format.utf8.count <= 32 else {
                throw WebAuthn.refuse("attestation object has no format")
            }
            guard case let .map(statement)? = object["attStmt"] else { throw WebAuthn.refuse("attestation object has no statement") }
            if format == "none", !statement.isEmpty { throw WebAuthn.refuse("a none attestation with a statement") }
            guard let data = object["authData"]?.bytesValue else { throw WebAuthn.refuse("attestation object has no authenticator data") }
            self.format = format
            self.statement = .map(statement)
            self.authenticatorDataBytes = data
            self.authenticatorData = try AuthenticatorData(data)
        }

        /// A `packed` attestation with a certificate chain (§8.2) that ends in one of `roots`: the
        /// statement's signature over `authenticatorData ‖ clientDataHash` by the leaf, whose
        /// certificate is an authenticator's (OU `Authenticator Attestation`, not a CA) and names
        /// the attested AAGUID when it names one. Self attestation and other formats are refused.
        func verifyTrusted(roots: AttestationRoots, clientDataHash: [UInt8]) throws(AuthError) {
            guard format == "packed" else { throw WebAuthn.refuse("attestation format \(format) is not trusted (packed with a certificate is required)") }
            guard let alg = statement["alg"]?.intValue, let sig = statement["sig"]?.bytesValue,
                  case let .array(x5c)? = statement["x5c"], !x5c.isEmpty else {
                throw WebAuthn.refuse("a packed attestation without a certificate (self attestation) is not trusted")
            }
            let chain = x5c.compactMap(\.bytesValue)
            guard chain.count == x5c.count else { throw WebAuthn.refuse("x5c holds something other than certificates") }
            let algorithm: SignatureKey.Algorithm
            switch alg {
            case COSEKey.es256: algorithm = .es256
            case COSEKey.rs256: algorithm = .rs256
            case COSEKey.eddsa: algorithm = .eddsa
            default: throw WebAuthn.refuse("attestation algorithm \(alg) is not supported")
            }
            guard let leaf = roots.verifiedLeaf(chain, algorithm: algorithm) else {
                throw WebAuthn.refuse("the attestation certificate does not chain to a trusted root")
            }
            guard leaf.organizationalUnit == "Authenticator Attestation", !leaf.isCA else {
                throw WebAuthn.refuse("the attestation certificate is not an authenticator's")
            }
            if let aaguid = leaf.aaguid, aaguid != authenticatorData.credential?.aaguid {
                throw WebAuthn.refuse("the attestation certificate names another AAGUID")
            }
            guard leaf.key.verify(signature: sig, message: authenticatorDataBytes + clientDataHash) else {
                throw WebAuthn.refuse("the attestation signature does not verify")
            }
        }
    }

    /// COSE keys (RFC 9052 §7, RFC 9053): EC2 on P-256 with ES256, OKP Ed25519 with EdDSA, RSA
    /// with RS256; the algorithm is the key's own `alg`, which must match its type.
    enum COSEKey {
        static let es256: Int64 = -7, eddsa: Int64 = -8, rs256: Int64 = -257
        static let supported: [Int64] = [es256, eddsa, rs256]

        static func signatureKey(_ key: CBOR) throws(AuthError) -> (SignatureKey, Int64) {
            guard case .map = key, let kty = key[1]?.intValue, let alg = key[3]?.intValue else {
                throw WebAuthn.refuse("the credential public key is not a COSE key")
            }
            let made: SignatureKey?
            switch (kty, alg) {
            case (2, es256):
                guard key[-1]?.intValue == 1, let x = key[-2]?.bytesValue, let y = key[-3]?.bytesValue else {
                    throw WebAuthn.refuse("an ES256 key not on P-256")
                }
                made = SignatureKey.p256(x: x, y: y)
            case (1, eddsa):
                guard key[-1]?.intValue == 6, let x = key[-2]?.bytesValue else { throw WebAuthn.refuse("an EdDSA key not on Ed25519") }
                made = SignatureKey.ed25519(x)
            case (3, rs256):
                guard let n = key[-1]?.bytesValue, let e = key[-2]?.bytesValue else { throw WebAuthn.refuse("an RSA key without n or e") }
                made = SignatureKey.rsa(n: n, e: e)
            default:
                throw WebAuthn.refuse("COSE key type \(kty) with algorithm \(alg) is not supported")
            }
            guard let made else { throw WebAuthn.refuse("the credential public key is not a valid key") }
            return (made, alg)
        }

        /// The key a stored passkey holds (its bytes were checked at registration).
        static func signatureKey(stored bytes: [UInt8]) throws(AuthError) -> SignatureKey {
            let key: CBOR
            do { key = try CBOR.decode(bytes) } catch { throw AuthError(.internalError, "a stored passkey's key does not read: \(error)") }
            return try signatureKey(key).0
        }
    }
}

/// Which origins may answer a project's challenges (§13.4.9): an origin on the relying party's
/// domain (the id itself or a sub-domain) that the project serves — `https`, or `http` on
/// `localhost` — or an Android app of the project (`android:apk-key-hash:` and the base64url of
/// its signing certificate's SHA-256), or one listed in `passkeys.origins`.
public enum PasskeyOrigins {
    public static func allows(_ origin: String, project: ProjectSettings) -> Bool {
        if project.passkeys.origins.contains(where: { $0.lowercased() == origin.lowercased() }) { return true }
        if origin.hasPrefix(androidPrefix) {
            let hash = String(origin.dropFirst(androidPrefix.count))
            return project.androidApps.contains { app in app.sha256Fingerprints.contains { apkKeyHash($0) == hash } }
        }
        guard let (scheme, host) = schemeAndHost(origin) else { return false }
        let rp = project.passkeyRelyingPartyID
        guard host == rp || host.hasSuffix("." + rp) else { return false }
        if scheme == "http" { return host == "localhost" || host.hasSuffix(".localhost") }
        guard scheme == "https" else { return false }
        return project.devMode || project.isAuthorized(host: host)
    }

    public static let androidPrefix = "android:apk-key-hash:"

    /// A fingerprint as configured (hex, with or without colons) as an apk-key-hash origin's tail.
    static func apkKeyHash(_ fingerprint: String) -> String? {
        Hex.decode(fingerprint.filter { $0 != ":" }.lowercased()).flatMap { $0.count == 32 ? Base64URL.encode($0) : nil }
    }

    /// `scheme://host[:port]` with nothing after, lower-cased; nil for anything else.
    public static func schemeAndHost(_ origin: String) -> (String, String)? {
        let lower = origin.lowercased()
        guard let colon = lower.firstIndex(of: ":"), lower[colon...].hasPrefix("://") else { return nil }
        let scheme = String(lower[..<colon])
        var rest = lower[lower.index(colon, offsetBy: 3)...]
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains("?"), !rest.contains("#") else { return nil }
        if let colon = rest.lastIndex(of: ":") {
            let port = rest[rest.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(port), n <= 65535 else { return nil }
            rest = rest[..<colon]
        }
        guard !rest.isEmpty, rest.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }),
              !rest.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else { return nil }
        return (scheme, String(rest))
    }
}
