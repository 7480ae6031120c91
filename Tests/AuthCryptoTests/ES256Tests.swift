import AuthCrypto
import Testing

/// ES256 (RFC 7518 §3.4), the APNs provider tokens' algorithm: RFC 7515 A.3's published JWS
/// checks with its key, our signatures check with OpenSSL's verifier, and keys on other curves
/// or of other types are refused with a message naming the problem.
@Suite("ES256")
struct ES256Tests {
    /// RFC 7515 A.3: the example key's public half (x, y of its JWK, as SubjectPublicKeyInfo).
    static let rfcPublicKey = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEf83OJ3D2xF1Bg8vub9tLe1gHMzV7
        6e8Tus9uPHvRVEXH8UTNG72bfocs3+257rn0s2ldbqkLJK2KRiMohYjlrQ==
        -----END PUBLIC KEY-----
        """
    static let rfcJWS = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ."
        + "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
    /// A P-384 key in PKCS#8: the wrong curve for ES256.
    static let p384 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDBeR45L8zERilyy7OIk
        bl3gLulR3CZ6pmjasKijTdbfjUtN154CrDlBq/AqkCfVVC2hZANiAAQG/9JxzO49
        AzTi6uS+KUWNsExk5BfIiI85naZgdekjVC6PLiFfUBHkbcEwyMcDbu9NgakvIOZ4
        Elo2yNQwelwKoxKY1M6Tvgs/ve19ftrhu4NNNFiA7BYQ2GAUrZlfktI=
        -----END PRIVATE KEY-----
        """

    @Test("RFC 7515 A.3's ES256 JWS verifies with its key; one changed byte does not")
    func rfcVector() throws {
        let key = try ES256PublicKey(pem: Self.rfcPublicKey)
        let parts = try #require(JWS.parse(Self.rfcJWS))
        #expect(parts.signature.count == 64)
        #expect(key.verify(signature: parts.signature, data: parts.signingInput))
        var tampered = parts.signingInput
        tampered[tampered.count - 1] ^= 1
        #expect(!key.verify(signature: parts.signature, data: tampered))
        #expect(!key.verify(signature: Array(parts.signature.dropLast()), data: parts.signingInput))
        #expect(!key.verify(signature: [UInt8](repeating: 0, count: 64), data: parts.signingInput))
    }

    @Test("a signature is r ‖ s (64 bytes) and verifies with the key's public half, through its PEM")
    func signAndVerify() throws {
        let key = try ES256PrivateKey.generate()
        let reloaded = try ES256PrivateKey(pem: try key.pem())
        let publicKey = try ES256PublicKey(pem: try reloaded.publicKeyPEM())
        let token = try JWS.signES256(header: Array(#"{"alg":"ES256","kid":"KEYID12345"}"#.utf8), payload: Array(#"{"iss":"TEAMID1234","iat":1}"#.utf8),
                                      key: reloaded)
        let parts = try #require(JWS.parse(token))
        #expect(parts.signature.count == 64)
        #expect(publicKey.verify(signature: parts.signature, data: parts.signingInput))
        // ECDSA signs with a fresh nonce: two signatures of one input differ, both valid.
        let again = try reloaded.sign(parts.signingInput)
        #expect(again != parts.signature && publicKey.verify(signature: again, data: parts.signingInput))
        // Another key's public half does not verify it.
        let other = try ES256PublicKey(pem: try ES256PrivateKey.generate().publicKeyPEM())
        #expect(!other.verify(signature: parts.signature, data: parts.signingInput))
    }

    @Test("a P-384 key, an RSA key and a broken PEM are refused, naming why")
    func wrongKeys() throws {
        #expect(throws: CryptoError.self) { try ES256PrivateKey(pem: Self.p384) }
        do { _ = try ES256PrivateKey(pem: Self.p384) } catch { #expect(error.detail.contains("P-256") && error.detail.contains("secp384r1")) }
        let rsa = try RSAPrivateKey.generate(bits: 1024)
        do { _ = try ES256PrivateKey(pem: try rsa.pem()); Issue.record("RSA accepted") } catch { #expect(error.detail.contains("elliptic")) }
        #expect(throws: CryptoError.self) { try ES256PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
        #expect(throws: CryptoError.self) { try ES256PublicKey(pem: "") }
    }
}
