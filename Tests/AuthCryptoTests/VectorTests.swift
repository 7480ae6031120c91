import AuthCrypto
import Testing

/// Published test vectors: RFC 4231 (HMAC-SHA-256), FIPS 180-2 (SHA-256), RFC 7515 A.2 (RS256),
/// RFC 4648 §10 (base64).
@Suite("Crypto vectors")
struct VectorTests {
    func hex(_ s: String) -> [UInt8] { Hex.decode(s)! }

    @Test("SHA-256 of \"abc\" matches FIPS 180-2")
    func sha256() {
        #expect(Hex.encode(Digest.sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Hex.encode(Digest.sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("HMAC-SHA-256 matches RFC 4231 test cases 1, 2, 3, 4, 6 and 7", arguments: RFC4231.cases)
    func hmac(key: String, data: String, expected: String) {
        #expect(Hex.encode(Digest.hmacSHA256(key: hex(key), data: hex(data))) == expected)
    }

    @Test("HMAC-SHA-256 RFC 4231 test case 7 (long key and long data)")
    func hmacLong() {
        let data = "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
        #expect(Hex.encode(Digest.hmacSHA256(key: hex(String(repeating: "aa", count: 131)), data)) ==
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    // RFC 7515 Appendix A.2: RS256 over the A.1 payload with the RFC 7517 A.2 key.
    static let n = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let e = "AQAB"
    static let d = "Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ"
    static let p = "4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc"
    static let q = "uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc"
    static let dp = "BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0"
    static let dq = "h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU"
    static let qi = "IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U"
    static let header = "eyJhbGciOiJSUzI1NiJ9"
    static let payload = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let signature = "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    static func b(_ s: String) -> [UInt8] { Base64URL.decode(s)! }

    static func privateKey() throws -> RSAPrivateKey {
        try RSAPrivateKey(n: b(n), e: b(e), d: b(d), p: b(p), q: b(q), dp: b(dp), dq: b(dq), qi: b(qi))
    }

    @Test("RS256 signing reproduces the RFC 7515 A.2 signature byte for byte")
    func rs256Sign() throws {
        let token = try JWS.signRS256(header: Self.b(Self.header), payload: Self.b(Self.payload), key: Self.privateKey())
        #expect(token == "\(Self.header).\(Self.payload).\(Self.signature)")
    }

    @Test("RS256 verification accepts the RFC 7515 A.2 signature with the public JWK and rejects a changed payload")
    func rs256Verify() throws {
        let pub = try RSAPublicKey(n: Self.b(Self.n), e: Self.b(Self.e))
        #expect(pub.bits == 2048)
        let input = Array("\(Self.header).\(Self.payload)".utf8)
        #expect(pub.verifyRS256(signature: Self.b(Self.signature), data: input))
        var tampered = input
        tampered[tampered.count - 1] ^= 1
        #expect(!pub.verifyRS256(signature: Self.b(Self.signature), data: tampered))
        #expect(!pub.verifyRS256(signature: [1, 2, 3], data: input))
    }

    @Test("a generated key survives PEM round trips and publishes its JWK modulus")
    func pemRoundTrip() throws {
        let key = try RSAPrivateKey.generate()
        let again = try RSAPrivateKey(pem: key.pem())
        let sig = try again.signRS256(Array("hello".utf8))
        let pub = try RSAPublicKey(pem: key.publicKey.pem())
        #expect(pub.verifyRS256(signature: sig, data: Array("hello".utf8)))
        #expect(try pub.modulus().count == 256)
        #expect(try pub.exponent() == [1, 0, 1])
        let cert = try key.selfSignedCertificatePEM(commonName: "test", notBefore: 1_767_225_600, validSeconds: 86400, serial: 7)
        #expect(cert.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(throws: CryptoError.self) { try RSAPrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
    }

    @Test("base64 matches RFC 4648 §10 and base64url never pads", arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func base64(plain: String, encoded: String) {
        #expect(Base64URL.encodeStandard(Array(plain.utf8)) == encoded)
        #expect(Base64URL.encode(plain) == String(encoded.filter { $0 != "=" }))
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test("base64url decoding refuses characters outside the alphabet")
    func base64Invalid() {
        #expect(Base64URL.decode("ab$d") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("_-_-") == [0xFF, 0xEF, 0xFE])
    }

    @Test("constant-time equality compares content and length")
    func constantTime() {
        #expect(Digest.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!Digest.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(Digest.constantTimeEqual("abc", "abc"))
    }

    @Test("the CSPRNG returns the requested length and does not repeat")
    func random() {
        #expect(SecureRandom.bytes(32).count == 32)
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
        #expect((0..<200).allSatisfy { _ in SecureRandom.uniform(10) < 10 })
    }
}

/// RFC 4231 test cases 1, 2, 3, 4 and 6 for HMAC-SHA-256 as (key, data, expected MAC) in hex;
/// case 7's data is text, so the tests spell it out.
enum RFC4231 {
    static let cases: [(String, String, String)] = [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (String(repeating: "aa", count: 20), String(repeating: "dd", count: 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        ("0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (String(repeating: "aa", count: 131), "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ]
}
