import AuthCrypto
import Testing
@testable import AuthEngine

/// Prepared phone keys give the sessionInfos and code hashes of the one-shot HMAC formulas, so
/// codes pending across an upgrade keep their sessionInfo and still verify.
@Suite("Phone keys")
struct PhoneKeysTests {
    @Test("sessionInfo and code hash equal the one-shot HMAC-SHA-256 definitions")
    func matchesOneShot() {
        let secret = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let keys = PhoneKeyCache().keys(for: secret)
        let sessionKey = Digest.hmacSHA256(key: secret, "phone-session")
        let codeKey = Digest.hmacSHA256(key: secret, "phone-code")
        for nonce in [[UInt8](repeating: 0xA5, count: 18), (0..<18).map { UInt8($0) }] {
            var raw: [UInt8] = []
            for block in 1...3 { raw += Digest.hmacSHA256(key: sessionKey, data: Array("\(block)".utf8) + nonce) }
            #expect(keys.sessionInfo(nonce: nonce) == PhoneSignIn.sessionPrefix + Base64URL.encode(raw))
            for code in ["123456", "000000", ""] {
                #expect(keys.codeHash(code, nonce: nonce) == Digest.hmacSHA256(key: codeKey, data: nonce + Array(("|" + code).utf8)))
            }
        }
    }
}
