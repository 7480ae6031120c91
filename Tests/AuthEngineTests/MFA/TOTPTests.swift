import AuthCrypto
import AuthStore
import Testing
@testable import AuthEngine

/// TOTP codes (RFC 6238 with RFC 4226's truncation), base32 secrets and the sealed box they rest in.
@Suite("TOTP: codes, secrets and sealing")
struct TOTPTests {
    static let rfcSecret = Array("12345678901234567890".utf8)

    @Test("RFC 6238 appendix B's SHA-1 vectors, as 6 digits", arguments: [
        (59, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"),
        (2_000_000_000, "279037"), (20_000_000_000, "353130"),
    ] as [(Int64, String)])
    func vectors(seconds: Int64, code: String) {
        #expect(TOTP.code(secret: Self.rfcSecret, step: TOTP.step(at: seconds * 1000)) == code)
    }

    @Test("a code is accepted within the adjacent steps, once, and never one older than the last accepted")
    func window() {
        let now: Millis = 1_234_567_890_000
        let step = TOTP.step(at: now)
        let previous = TOTP.code(secret: Self.rfcSecret, step: step - 1)
        #expect(TOTP.acceptedStep(previous, secret: Self.rfcSecret, now: now, adjacent: 1, after: .min) == step - 1)
        #expect(TOTP.acceptedStep(previous, secret: Self.rfcSecret, now: now, adjacent: 0, after: .min) == nil)
        let twoBack = TOTP.code(secret: Self.rfcSecret, step: step - 2)
        #expect(TOTP.acceptedStep(twoBack, secret: Self.rfcSecret, now: now, adjacent: 1, after: .min) == nil)
        let current = TOTP.code(secret: Self.rfcSecret, step: step)
        #expect(TOTP.acceptedStep(current, secret: Self.rfcSecret, now: now, adjacent: 1, after: step) == nil, "replayed")
        #expect(TOTP.acceptedStep(previous, secret: Self.rfcSecret, now: now, adjacent: 1, after: step - 1) == nil, "older than the last")
        for bad in ["", "12345", "1234567", "12a456", "١٢٣٤٥٦"] {
            #expect(TOTP.acceptedStep(bad, secret: Self.rfcSecret, now: now, adjacent: 10, after: .min) == nil)
        }
    }

    @Test("base32: RFC 4648's vectors, case and padding tolerated on the way in, nothing else")
    func base32() {
        for (plain, encoded) in [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
                                 ("foobar", "MZXW6YTBOI")] {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
            #expect(Base32.decode(encoded.lowercased() + "===") == Array(plain.utf8))
        }
        #expect(Base32.decode("MZXW1") == nil)
        #expect(Base32.decode("MZ!W6") == nil)
    }

    @Test("the otpauth URI names issuer and account, the secret in base32, SHA1, 6 digits, 30 s")
    func uri() {
        let u = TOTP.uri(secret: Self.rfcSecret, account: "ada+work@example.com", issuer: "auth.example.com")
        #expect(u == "otpauth://totp/auth.example.com:ada%2Bwork%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
                + "&issuer=auth.example.com&algorithm=SHA1&digits=6&period=30")
    }

    @Test("a sealed box opens only under its key and its purpose, and not once altered")
    func sealing() throws {
        let key = SecureRandom.bytes(32)
        let box = try SealedBox.seal(Self.rfcSecret, key: key, aad: Array("a".utf8))
        #expect(box.count == 12 + 20 + 16)
        #expect(SealedBox.open(box, key: key, aad: Array("a".utf8)) == Self.rfcSecret)
        #expect(SealedBox.open(box, key: key, aad: Array("b".utf8)) == nil)
        #expect(SealedBox.open(box, key: SecureRandom.bytes(32), aad: Array("a".utf8)) == nil)
        for i in [0, 12, box.count - 1] {
            var altered = box
            altered[i] ^= 1
            #expect(SealedBox.open(altered, key: key, aad: Array("a".utf8)) == nil)
        }
        #expect(SealedBox.open(Array(box.prefix(20)), key: key, aad: []) == nil)
        // Oversized input is refused, never handed to OpenSSL's Int32 lengths.
        #expect(throws: CryptoError.self) { try SealedBox.seal(Array(repeating: 1, count: (1 << 16) + 1), key: key, aad: []) }
        #expect(SealedBox.open(box, key: key, aad: Array(repeating: 1, count: (1 << 16) + 1)) == nil)
        #expect(SealedBox.open(Array(repeating: 0, count: (1 << 16) + 1), key: key, aad: []) == nil)
        #expect(try SealedBox.seal(Self.rfcSecret, key: key, aad: []) != SealedBox.seal(Self.rfcSecret, key: key, aad: []), "a fresh nonce each time")
    }
}
