import AuthCrypto
import Foundation
import Synchronization
import Testing

/// HMAC-SHA-256 with a prepared key (`HMACKey`) and the one-shot form give the RFC 4231 answers,
/// the same ones each time and on every thread; the buffered CSPRNG hands out fresh bytes.
@Suite("Prepared HMAC keys and buffered random bytes")
struct HMACKeyTests {
    func hex(_ s: String) -> [UInt8] { Hex.decode(s)! }

    @Test("a prepared key gives the RFC 4231 answers (cases 1, 2, 3, 4, 6), again and again")
    func vectors() {
        for (key, data, expected) in RFC4231.cases {
            let k = HMACKey(hex(key))
            for _ in 0..<3 { #expect(Hex.encode(k.mac(hex(data))) == expected) }
        }
    }

    @Test("RFC 4231 case 7 with a prepared key; an empty message and a 64-byte key agree with the one-shot form")
    func edges() {
        let data = "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
        let long = HMACKey(hex(String(repeating: "aa", count: 131)))
        #expect(Hex.encode(long.mac(data)) == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
        for key in [[UInt8](), [UInt8](repeating: 7, count: 64), [UInt8](repeating: 9, count: 65)] {
            let k = HMACKey(key)
            for message in ["", "x", String(repeating: "m", count: 200)] {
                #expect(k.mac(message) == Digest.hmacSHA256(key: key, message))
            }
        }
        // Two keys never answer for each other.
        #expect(HMACKey([1]).mac("m") != HMACKey([2]).mac("m"))
    }

    @Test("one prepared key used by many threads at once: every answer is right")
    func threads() {
        let key = HMACKey(hex("4a656665"))
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        let data = hex("7768617420646f2079612077616e7420666f72206e6f7468696e673f")
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            for _ in 0..<200 where Hex.encode(key.mac(data)) != expected { wrong.withLock { $0 += 1 } }
        }
        #expect(wrong.withLock { $0 } == 0)
    }

    @Test("buffered random bytes: the asked length, no repeats across refills and threads")
    func random() {
        #expect(SecureRandom.bytes(0).isEmpty)
        for n in [1, 24, 63, 64, 65, 300] { #expect(SecureRandom.bytes(n).count == n) }
        let seen = Mutex(Set<[UInt8]>())
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var mine: [[UInt8]] = []
            for _ in 0..<100 { mine.append(SecureRandom.bytes(24)) }
            seen.withLock { s in for m in mine { s.insert(m) } }
        }
        #expect(seen.withLock { $0.count } == 800)
        // Not all zero, and the bytes of one draw are not all equal.
        let b = SecureRandom.bytes(32)
        #expect(Set(b).count > 4)
    }
}
