import AuthCrypto
@testable import AuthWeb
import Testing

/// The CSRF token's wire form: base64url(HMAC-SHA-256(key, purpose "|" cookie)), whatever way the
/// key is prepared.
@Suite("CSRF tokens")
struct CSRFTokenTests {
    static let key = [UInt8](0..<32)

    @Test("a token is base64url of HMAC-SHA-256 over purpose|cookie (checked against Python's hmac)")
    func wireForm() {
        let token = CSRF.tokenFor(cookie: "abcdefghijklmnopqrstuvwxyz012345", purpose: "phone-send", key: HMACKey(Self.key))
        #expect(token == "69v6cRffEjEkEfieGA5PByMIJsBg3wjwlVIhMQF89fU")
        for (cookie, purpose) in [("c", "phone-verify"), ("", ""), ("ü-cookie", "email")] {
            #expect(CSRF.tokenFor(cookie: cookie, purpose: purpose, key: HMACKey(Self.key))
                    == Base64URL.encode(Digest.hmacSHA256(key: Self.key, purpose + "|" + cookie)))
        }
        // The purpose binds the token.
        #expect(CSRF.tokenFor(cookie: "c", purpose: "phone-send", key: HMACKey(Self.key))
                != CSRF.tokenFor(cookie: "c", purpose: "phone-verify", key: HMACKey(Self.key)))
    }
}
