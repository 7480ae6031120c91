import AuthCrypto
import Foundation
import Testing

/// RS256 with pooled, pre-initialised OpenSSL contexts: a context that refused a signature still
/// accepts the next good one, keys sign identically to the published vector, and concurrent
/// threads each get their own context.
@Suite("Reused RS256 contexts")
struct ReusedContextTests {
    static let key = try! RSAPrivateKey.generate()

    @Test("good, tampered, good, wrong length, good: each answer is independent of the previous one")
    func alternating() throws {
        let pub = Self.key.publicKey
        let data = Array("header.payload".utf8)
        let sig = try Self.key.signRS256(data)
        var badSig = sig
        badSig[10] ^= 0x40
        var badData = data
        badData[0] ^= 1
        for _ in 0..<3 {
            #expect(pub.verifyRS256(signature: sig, data: data))
            #expect(!pub.verifyRS256(signature: badSig, data: data))
            #expect(!pub.verifyRS256(signature: sig, data: badData))
            #expect(!pub.verifyRS256(signature: Array(sig.dropLast()), data: data))
            #expect(!pub.verifyRS256(signature: [], data: data))
        }
        // Deterministic PKCS#1 v1.5: a reused signing context gives the same bytes each time.
        #expect(try Self.key.signRS256(data) == sig)
        // A signature by another key is refused.
        let other = try RSAPrivateKey.generate()
        #expect(!pub.verifyRS256(signature: try other.signRS256(data), data: data))
    }

    @Test("many threads sign and verify at once with one key; every answer is right")
    func threads() throws {
        let key = Self.key
        let pub = key.publicKey
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let data = Array("thread \(i)".utf8)
            for round in 0..<12 {
                guard let sig = try? key.signRS256(data) else { failures.add(); continue }
                var bad = sig
                bad[round % sig.count] ^= 1
                if !pub.verifyRS256(signature: sig, data: data) { failures.add() }
                if pub.verifyRS256(signature: bad, data: data) { failures.add() }
            }
        }
        #expect(failures.value == 0)
    }

    @Test("JWS.verifiedRS256 checks the signature in place, hands the header to the key choice, refuses tampering")
    func verifiedInPlace() throws {
        let header = Array(#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#.utf8)
        let payload = Array(#"{"sub":"u1","exp":1}"#.utf8)
        let token = try JWS.signRS256(header: header, payload: payload, key: Self.key)
        var seen: [UInt8] = []
        let ok = JWS.verifiedRS256(token) { h in seen = h; return Self.key.publicKey }
        #expect(ok?.header == header && ok?.payload == payload && seen == header)
        #expect(JWS.verifiedRS256(token) { _ in nil } == nil)
        let parts = token.split(separator: ".")
        let otherPayload = Base64URL.encode(Array(#"{"sub":"u2","exp":1}"#.utf8))
        #expect(JWS.verifiedRS256("\(parts[0]).\(otherPayload).\(parts[2])") { _ in Self.key.publicKey } == nil)
        #expect(JWS.verifiedRS256("\(parts[0]).\(parts[1])") { _ in Self.key.publicKey } == nil)
        #expect(JWS.verifiedRS256(token + ".x") { _ in Self.key.publicKey } == nil)
        #expect(JWS.verifiedRS256("\(parts[0]).\(parts[1]).\(parts[2])!") { _ in Self.key.publicKey } == nil)
    }

    @Test("the fast base64url decoder agrees with the general one on every length and refuses bad characters")
    func base64Agrees() {
        var bytes: [UInt8] = []
        for n in 0..<70 {
            let text = Base64URL.encode(bytes)
            #expect(Base64URL.decode(text) == bytes)
            #expect(Base64URL.decode(bytes: Array(text.utf8)[...]) == bytes)
            bytes.append(UInt8(truncatingIfNeeded: n * 37 + 11))
        }
        #expect(Base64URL.decode("Zm9v!") == nil)
        #expect(Base64URL.decode("Z") == nil)
        #expect(Base64URL.decode("Zm9vYg==") == Array("foob".utf8))
        #expect(Base64URL.decode("+/+/") == Base64URL.decode("-_-_"))
    }
}

/// A thread-safe counter for the concurrency test.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
