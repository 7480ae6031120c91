@testable import AuthCrypto
@testable import AuthEngine

/// What a relying party reads from an authenticator (passkeys): the strict CBOR reader alone,
/// and the WebAuthn readers over it.
enum PasskeyTargets {
    /// The CBOR reader: `decodePrefix` ends within its input (also in a slice that does not
    /// start at 0), `decode` accepts exactly when that end is the input's, an error names a byte
    /// of the input, and what is accepted re-encodes to the very bytes read (the profile leaves
    /// one encoding per value: shortest heads, definite lengths, map pairs in their order).
    static let cbor = FuzzTarget(name: "cbor") { data in
        let bytes = data.array
        var prefix: (CBOR, Int)? = nil
        do throws(CBOR.Malformed) {
            prefix = try CBOR.decodePrefix(bytes[...])
        } catch {
            expect(error.offset >= 0 && error.offset <= bytes.count, "CBOR error at \(error.offset) of \(bytes.count) bytes")
        }
        var whole: CBOR? = nil
        do throws(CBOR.Malformed) {
            whole = try CBOR.decode(bytes)
        } catch {
            expect(error.offset >= 0 && error.offset <= bytes.count, "CBOR error at \(error.offset) of \(bytes.count) bytes")
        }
        guard let (value, end) = prefix else {
            expect(whole == nil, "decode accepted what decodePrefix refused")
            return
        }
        expect(end > 0 && end <= bytes.count, "decodePrefix ended at \(end) of \(bytes.count) bytes")
        expect((whole != nil) == (end == bytes.count), "decode \(whole == nil ? "refused" : "accepted") an item ending at \(end) of \(bytes.count)")
        if let whole { expect(whole == value, "decode and decodePrefix read different values") }
        expect(encode(value) == Array(bytes[..<end]), "the item does not re-encode to the bytes read: \(value)")
        if verbose { print("cbor: \(end) of \(bytes.count) bytes: \(value)") }
        // The same bytes after one more in front: the same item, its end one further.
        let shifted = [0xFF] + bytes
        if let (again, next) = try? CBOR.decodePrefix(shifted[1...]) {
            expect(again == value && next == end + 1, "the item read at offset 1 differs")
        } else {
            expect(false, "the item does not read at offset 1")
        }
    }

    /// The one encoding of a value the reader accepts.
    static func encode(_ value: CBOR) -> [UInt8] {
        func head(_ major: UInt8, _ v: UInt64) -> [UInt8] {
            let m = major << 5
            switch v {
            case ..<24: return [m | UInt8(v)]
            case ..<0x100: return [m | 24, UInt8(v)]
            case ..<0x1_0000: return [m | 25, UInt8(v >> 8), UInt8(v & 0xFF)]
            case ..<0x1_0000_0000: return [m | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
            default: return [m | 27] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
            }
        }
        switch value {
        case let .int(i): return i >= 0 ? head(0, UInt64(i)) : head(1, UInt64(-1 - i))
        case let .bytes(b): return head(2, UInt64(b.count)) + b
        case let .text(t): return head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case let .array(items): return head(4, UInt64(items.count)) + items.flatMap(encode)
        case let .map(pairs): return head(5, UInt64(pairs.count)) + pairs.flatMap { encode($0.key) + encode($0.value) }
        case let .bool(b): return [b ? 0xF5 : 0xF4]
        case .null: return [0xF6]
        }
    }

    /// The WebAuthn readers on the same bytes: authenticator data, an attestation object (and,
    /// against a fixed root, its packed attestation: OpenSSL reads the certificates), COSE keys
    /// (read from the input as CBOR, and from what the readers accepted), client data, an origin.
    /// Nothing may trap; a key accepted is read back from its stored bytes alike.
    static let webauthn = FuzzTarget(name: "webauthn", setUp: { _ = roots }) { data in
        let bytes = data.array
        if let authData = try? WebAuthn.AuthenticatorData(bytes) {
            expect(bytes.count >= 37 && bytes.count <= WebAuthn.maxAuthenticatorDataBytes, "authenticator data of \(bytes.count) bytes read")
            expect(!authData.has(WebAuthn.AuthenticatorData.backedUp) || authData.has(WebAuthn.AuthenticatorData.backupEligible),
                   "backed up without backup eligible read")
            if let credential = authData.credential {
                expect((1...WebAuthn.maxCredentialIDBytes).contains(credential.id.count), "credential id of \(credential.id.count) bytes")
                expect((try? CBOR.decode(credential.publicKey)) == credential.key, "the stored key bytes do not read back as the key")
                coseKey(credential.key, message: bytes)
            }
            if verbose { print("webauthn: authenticator data, flags \(authData.flags), credential \(authData.credential != nil)") }
        }
        if let object = try? WebAuthn.AttestationObject(bytes) {
            expect((try? WebAuthn.AuthenticatorData(object.authenticatorDataBytes)) != nil, "the attestation's authenticator data does not read alone")
            if let credential = object.authenticatorData.credential { coseKey(credential.key, message: bytes) }
            let trusted: String
            do throws(AuthError) {
                try object.verifyTrusted(roots: roots, clientDataHash: clientDataHash)
                trusted = "trusted"
            } catch {
                trusted = error.message
            }
            if verbose { print("webauthn: attestation \(object.format): \(trusted)") }
        }
        if let (value, _) = try? CBOR.decodePrefix(bytes[...]) { coseKey(value, message: bytes) }
        if let client = try? WebAuthn.ClientData(bytes) {
            expect(!client.challenge.isEmpty && !client.origin.isEmpty, "client data without challenge or origin read")
            _ = PasskeyOrigins.allows(client.origin, project: fuzzProject)
        }
        let text = data.string
        _ = PasskeyOrigins.allows(text, project: fuzzProject)
        _ = PasskeyOrigins.schemeAndHost(text)
        _ = try? Passkeys.credentialID(id: text, rawID: text)
    }

    /// A COSE key: when it reads, its algorithm is one offered, its stored form (the bytes it was
    /// read from) reads to a key of the same algorithm, and checking a signature does not trap.
    static func coseKey(_ value: CBOR, message: [UInt8]) {
        guard let (key, algorithm) = try? WebAuthn.COSEKey.signatureKey(value) else { return }
        expect(WebAuthn.COSEKey.supported.contains(algorithm), "COSE algorithm \(algorithm) read")
        let stored = try? WebAuthn.COSEKey.signatureKey(stored: encode(value))
        expect(stored?.algorithm == key.algorithm, "a COSE key does not read back from its bytes")
        _ = key.verify(signature: Array(message.suffix(72)), message: message)
        if verbose { print("webauthn: COSE key \(algorithm)") }
    }

    /// The client data hash the seed's packed attestation signed: SHA-256 of "gatehouse fuzz client data".
    static let clientDataHash = Digest.sha256("gatehouse fuzz client data")

    /// A root made once for the seeds (Python's `cryptography`: a P-256 CA certificate, valid
    /// 2025–2125); the seed `attestation-packed-trusted` chains to it.
    static let roots: AttestationRoots = {
        do {
            return try AttestationRoots(pem: """
                -----BEGIN CERTIFICATE-----
                MIIBZzCCAQygAwIBAgIBATAKBggqhkjOPQQDAjApMRMwEQYDVQQKDApGdXp6IE1h
                a2VyMRIwEAYDVQQDDAlGdXp6IFJvb3QwIBcNMjUwMTAxMDAwMDAwWhgPMjEyNTAx
                MDEwMDAwMDBaMCkxEzARBgNVBAoMCkZ1enogTWFrZXIxEjAQBgNVBAMMCUZ1enog
                Um9vdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPKhnoInMWxFebaIlhg6Q4OA
                uCsQEdOCmJwMqXuUeVlZstCsuZ9/OlewVzUoC93sp6MAWuGmtr7WlPfSWDZ/T3aj
                IzAhMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMC
                A0kAMEYCIQCKA4LHXfOAwx4r/N4oh4XzbEVPf9WOv5VWCQiV0h9hGwIhANTW7bDF
                cUzMuz+jGg/mpXOvIh/lkTgqQT86msePTfdw
                -----END CERTIFICATE-----
                """)
        } catch {
            fatalError("the fuzz attestation root does not read: \(error)")
        }
    }()
}
