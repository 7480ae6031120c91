@testable import AuthCrypto
import Testing

/// The direct reading of stored public keys agrees with OpenSSL's decoder, and anything it does
/// not read exactly is left to OpenSSL.
@Suite("Public key PEM read directly")
struct PublicKeyDERTests {
    @Test("n and e read directly equal OpenSSL's, and the key verifies what the private key signs")
    func agreesWithOpenSSL() throws {
        for _ in 0..<3 {
            let key = try RSAPrivateKey.generate()
            let pem = try key.publicKey.pem()
            let direct = try #require(PublicKeyDER.rsaNumbers(pem: pem))
            #expect(direct.n == (try key.publicKey.modulus()))
            #expect(direct.e == (try key.publicKey.exponent()))
            let pub = try RSAPublicKey(pem: pem)
            #expect(pub.bits == 2048)
            #expect(try pub.pem() == pem)
            let data = Array("header.payload".utf8)
            #expect(pub.verifyRS256(signature: try key.signRS256(data), data: data))
            #expect(!pub.verifyRS256(signature: try key.signRS256(data + [1]), data: data))
        }
    }

    @Test("CRLF line ends still read directly; other forms go to OpenSSL; damaged text is refused")
    func otherForms() throws {
        let key = try RSAPrivateKey.generate()
        let pem = try key.publicKey.pem()
        #expect(PublicKeyDER.rsaNumbers(pem: pem.split(separator: "\n").joined(separator: "\r\n")) != nil)
        // Not the stored shape: left to OpenSSL, which still reads it.
        let labelled = "comment line\n" + pem
        #expect(PublicKeyDER.rsaNumbers(pem: labelled) == nil)
        #expect(try RSAPublicKey(pem: labelled).modulus() == (try key.publicKey.modulus()))
        // Damaged base64 or DER: refused by both.
        var lines = pem.split(separator: "\n").map(String.init)
        lines[2] = String(lines[2].dropLast(4)) + "!!!!"
        #expect(PublicKeyDER.rsaNumbers(pem: lines.joined(separator: "\n")) == nil)
        #expect(throws: CryptoError.self) { try RSAPublicKey(pem: lines.joined(separator: "\n")) }
        #expect(Base64URL.decodeStandard(lines: Array("QUJD".utf8)) == Array("ABC".utf8))
        #expect(Base64URL.decodeStandard(lines: Array("QUI=".utf8)) == Array("AB".utf8))
        #expect(Base64URL.decodeStandard(lines: Array("QR==".utf8)) == nil)  // non-zero leftover bits
        #expect(Base64URL.decodeStandard(lines: Array("QUI=QUI=".utf8)) == nil)
        #expect(Base64URL.decodeStandard(lines: Array("QU\r\nJD\n".utf8)) == Array("ABC".utf8))  // line breaks skipped
        #expect(Base64URL.decodeStandard(lines: Array("QUI".utf8)) == nil)  // unpadded
        #expect(Base64URL.decodeStandard(lines: Array("P-_A".utf8)) == nil)  // the URL alphabet
        #expect(Base64URL.decodeStandard(lines: Array("QQ===".utf8)) == nil)  // three pads
        // Non-minimal INTEGER, trailing bytes.
        #expect(PublicKeyDER.rsaNumbers(spki: [0x30, 0x03, 0x02, 0x01, 0x01, 0x00]) == nil)
    }
}
