import AuthCrypto
import AuthStore
import Foundation
import JSONValue
import Testing
@testable import AuthEngine
import TestSupport

/// Engine tests of app verification: ALTCHA v1 challenges, redemption, difficulty, tokens.
@Suite("AppVerification")
struct AppVerificationTests {
    let store: SQLStore
    let clock = FixedClock()
    let flow: AppVerification
    var project: ProjectSettings

    init() throws {
        store = try makeStore()
        flow = AppVerification(store: store, clock: clock, random: SeededRandom())
        project = ProjectSettings.devDefault()
        project.appVerification.minDifficulty = 500
        project.appVerification.maxDifficulty = 8_000
        project.appVerification.freeChallengesPerIP = 3
        project.appVerification.freeChallengesPerKey = 5
    }

    /// Brute force, as the browser does.
    func solve(_ c: PowChallenge) -> PowSolution? {
        for n in 0...c.maxNumber where Hex.encode(Digest.sha256(c.salt + String(n))) == c.challenge {
            return PowSolution(challenge: c.challenge, number: n, salt: c.salt, signature: c.signature)
        }
        return nil
    }

    func issueAndSolve(apiKey: String? = "key-a", ip: String = "192.0.2.1") throws -> PowSolution {
        let c = try flow.issueChallenge(project: project, apiKey: apiKey, remoteAddress: ip)
        return try #require(solve(c))
    }

    func expectFailure(_ reason: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected CAPTCHA_CHECK_FAILED … - \(reason)")
        } catch let e as AuthError {
            #expect(e.code == .captchaCheckFailed)
            #expect(e.detail?.hasSuffix("- " + reason) == true, "\(e.message)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    // MARK: Format

    @Test("A challenge matches a vector computed by the altcha package (hash, HMAC, salt delimiter)")
    func altchaVector() {
        let c = PowChallenge.make(key: Array(0..<32), nonce: Array(0..<12), number: 4242, maxNumber: 50_000,
                                  expiresAt: 1_767_225_900, scope: "abcdef0123456789")
        #expect(c.salt == "000102030405060708090a0b?expires=1767225900&scope=abcdef0123456789&")
        #expect(c.challenge == "c4bd2f72a5a3bdae873882e1981ba8d70639abc9b89e8158d0babf69a84b08bf")
        #expect(c.signature == "4008a68d2156075b1f1090d06863ab77dc31e23aeb3602c15f67f3b048ba49cb")
        let payload = "eyJhbGdvcml0aG0iOiAiU0hBLTI1NiIsICJjaGFsbGVuZ2UiOiAiYzRiZDJmNzJhNWEzYmRhZTg3Mzg4MmUxOTgxYmE4ZDcwNjM5YWJjOWI4OWU4MTU4ZDBiYWJmNjlhODRiMDhiZiIsICJudW1iZXIiOiA0MjQyLCAic2FsdCI6ICIwMDAxMDIwMzA0MDUwNjA3MDgwOTBhMGI/ZXhwaXJlcz0xNzY3MjI1OTAwJnNjb3BlPWFiY2RlZjAxMjM0NTY3ODkmIiwgInNpZ25hdHVyZSI6ICI0MDA4YTY4ZDIxNTYwNzViMWYxMDkwZDA2ODYzYWI3N2RjMzFlMjNhZWIzNjAyYzE1ZjY3ZjNiMDQ4YmE0OWNiIn0="
        let s = PowSolution(payload: payload)
        #expect(s?.number == 4242)
        #expect(s?.isAuthentic(key: Array(0..<32)) == true)
        #expect(s?.isAuthentic(key: Array(1...32)) == false)
        #expect(s?.saltParameters == PowSolution.SaltParameters(expires: 1_767_225_900, scope: "abcdef0123456789"))
    }

    @Test("An issued challenge has ALTCHA v1 fields, a random salt ending with & and the shared key's signature")
    func challengeShape() throws {
        let c = try flow.issueChallenge(project: project, apiKey: "key-a", remoteAddress: "192.0.2.1")
        let json = c.json
        #expect(json["algorithm"]?.stringValue == "SHA-256")
        #expect(json["maxnumber"]?.int64Value == 500)
        #expect(c.salt.hasSuffix("&"))
        #expect(c.salt.prefix(24).allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(c.salt.dropFirst(24) == "?expires=1767225900&scope=" + AppVerification.scope(project: project.id, apiKey: "key-a") + "&")
        #expect(c.signature == Hex.encode(Digest.hmacSHA256(key: try flow.key(), c.challenge)))
        let other = try flow.issueChallenge(project: project, apiKey: "key-a", remoteAddress: "192.0.2.1")
        #expect(other.salt != c.salt)
        #expect(try flow.key() == store.secret(named: AppVerification.keyName))
    }

    // MARK: Redemption

    @Test("A solved challenge is redeemed for a single-use app token")
    func roundTrip() throws {
        let s = try issueAndSolve()
        let token = try flow.redeem(payload: s.payload, project: project, apiKey: "key-a", app: "com.example.gatehouse.demo",
                                    remoteAddress: "192.0.2.1")
        #expect(token.hasPrefix(AppTokens.prefix))
        let tokens = AppTokens(store: store, clock: clock, random: SeededRandom())
        try tokens.consume(token, project: project.id, apiKey: "key-a", app: "com.example.gatehouse.demo")
        #expect(throws: AuthError(.captchaCheckFailed, "Recaptcha verification failed - EXPIRED")) {
            try tokens.consume(token, project: project.id, apiKey: "key-a", app: "com.example.gatehouse.demo")
        }
    }

    @Test("The same solution is accepted once; the replay is refused")
    func replay() throws {
        let s = try issueAndSolve()
        _ = try flow.redeem(payload: s.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "192.0.2.1")
        expectFailure("REPLAYED") {
            _ = try flow.redeem(payload: s.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "192.0.2.9")
        }
    }

    @Test("A changed salt, expiry, number, challenge or signature is refused")
    func tampering() throws {
        let s = try issueAndSolve()
        let later = s.salt.replacingOccurrences(of: "expires=1767225900", with: "expires=1767299999")
        let cases: [(String, PowSolution)] = [
            ("INVALID", PowSolution(challenge: s.challenge, number: s.number, salt: later, signature: s.signature)),
            ("INVALID", PowSolution(challenge: s.challenge, number: s.number, salt: "00" + s.salt.dropFirst(2), signature: s.signature)),
            ("INVALID", PowSolution(challenge: s.challenge, number: s.number + 1, salt: s.salt, signature: s.signature)),
            ("INVALID", PowSolution(challenge: String(repeating: "0", count: 64), number: s.number, salt: s.salt, signature: s.signature)),
            ("INVALID", PowSolution(challenge: s.challenge, number: s.number, salt: s.salt, signature: String(s.signature.reversed()))),
            ("INVALID", PowSolution(algorithm: "SHA-1", challenge: s.challenge, number: s.number, salt: s.salt, signature: s.signature)),
            ("MALFORMED", PowSolution(challenge: s.challenge, number: s.number, salt: "nonce&", signature: s.signature)),
            ("MALFORMED", PowSolution(challenge: s.challenge, number: s.number,
                                      salt: s.salt + "expires=1767299999&", signature: s.signature)),
        ]
        for (reason, bad) in cases {
            expectFailure(reason) {
                _ = try flow.redeem(payload: bad.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "192.0.2.1")
            }
        }
        for garbage in ["not base64 !", Base64URL.encodeStandard(Array("{\"algorithm\":\"SHA-256\"}".utf8)),
                        Base64URL.encodeStandard(Array("[1,2]".utf8)), String(repeating: "A", count: 5000)] {
            expectFailure("MALFORMED") {
                _ = try flow.redeem(payload: garbage, project: project, apiKey: "key-a", app: "web", remoteAddress: "192.0.2.1")
            }
        }
        // The genuine solution still works after all those refusals.
        _ = try flow.redeem(payload: s.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "192.0.2.1")
    }

    @Test("A challenge signed with another key is refused")
    func foreignKey() throws {
        let c = PowChallenge.make(key: Array(repeating: 7, count: 32), nonce: Array(0..<12), number: 3, maxNumber: 10,
                                  expiresAt: clock.nowSeconds + 60, scope: nil)
        let s = try #require(solve(c))
        expectFailure("INVALID") {
            _ = try flow.redeem(payload: s.payload, project: project, apiKey: nil, app: "web", remoteAddress: "192.0.2.1")
        }
    }

    @Test("A challenge expires after its lifetime, and one claiming a far expiry is refused")
    func expiry() throws {
        let s = try issueAndSolve()
        clock.advance(seconds: project.appVerification.challengeLifetimeSeconds)
        expectFailure("EXPIRED") {
            _ = try flow.redeem(payload: s.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "192.0.2.1")
        }
        let far = PowChallenge.make(key: try flow.key(), nonce: Array(0..<12), number: 5, maxNumber: 10,
                                    expiresAt: clock.nowSeconds + 2 * AppVerification.maxLifetimeSeconds, scope: nil)
        let f = try #require(solve(far))
        expectFailure("INVALID") {
            _ = try flow.redeem(payload: f.payload, project: project, apiKey: nil, app: "web", remoteAddress: "192.0.2.1")
        }
    }

    @Test("A challenge issued for one API key cannot be redeemed with another or without one")
    func scopeBinding() throws {
        let s = try issueAndSolve(apiKey: "key-a")
        expectFailure("SCOPE") {
            _ = try flow.redeem(payload: s.payload, project: project, apiKey: "key-b", app: "web", remoteAddress: "192.0.2.1")
        }
        expectFailure("SCOPE") {
            _ = try flow.redeem(payload: s.payload, project: project, apiKey: nil, app: "web", remoteAddress: "192.0.2.1")
        }
        _ = try flow.redeem(payload: s.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "192.0.2.1")
    }

    @Test("An unscoped challenge made with the shared key (as the altcha package makes them) is accepted")
    func unscopedChallenge() throws {
        let c = PowChallenge.make(key: try flow.key(), nonce: Array(0..<12), number: 9, maxNumber: 20,
                                  expiresAt: clock.nowSeconds + 60, scope: nil)
        let s = try #require(solve(c))
        let token = try flow.redeem(payload: s.payload, project: project, apiKey: "any", app: "web", remoteAddress: "192.0.2.1")
        #expect(token.hasPrefix(AppTokens.prefix))
    }

    @Test("Submissions per IP are limited, failed ones included")
    mutating func redemptionLimit() throws {
        project.appVerification.redemptionsPerIP = 3
        for _ in 0..<3 {
            expectFailure("MALFORMED") {
                _ = try flow.redeem(payload: "x", project: project, apiKey: nil, app: "web", remoteAddress: "198.51.100.7")
            }
        }
        let s = try issueAndSolve(ip: "198.51.100.7")
        #expect(throws: AuthError(.tooManyAttempts)) {
            _ = try flow.redeem(payload: s.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "198.51.100.7")
        }
        _ = try flow.redeem(payload: s.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "198.51.100.8")
    }

    // MARK: Difficulty

    @Test("Difficulty doubles per block of free challenges, per IP and per key, and stops at the cap")
    func difficultyFunction() {
        var p = AppVerificationPolicy()
        p.minDifficulty = 1000; p.maxDifficulty = 10_000; p.freeChallengesPerIP = 10; p.freeChallengesPerKey = 100
        #expect(AppVerification.difficulty(p, ipCount: 1, keyCount: 1) == 1000)
        #expect(AppVerification.difficulty(p, ipCount: 10, keyCount: 100) == 1000)
        #expect(AppVerification.difficulty(p, ipCount: 11, keyCount: 0) == 2000)
        #expect(AppVerification.difficulty(p, ipCount: 31, keyCount: 0) == 8000)
        #expect(AppVerification.difficulty(p, ipCount: 1, keyCount: 101) == 2000)
        #expect(AppVerification.difficulty(p, ipCount: 41, keyCount: 0) == 10_000)
        #expect(AppVerification.difficulty(p, ipCount: 1_000_000, keyCount: 1_000_000) == 10_000)
    }

    @Test("Issued challenges get harder for a busy IP but not for a quiet one, and relax in the next window")
    func difficultyScaling() throws {
        let sizes = try (0..<7).map { _ in try flow.issueChallenge(project: project, apiKey: nil, remoteAddress: "203.0.113.5").maxNumber }
        #expect(sizes == [500, 500, 500, 1000, 1000, 1000, 2000])
        #expect(try flow.issueChallenge(project: project, apiKey: nil, remoteAddress: "203.0.113.6").maxNumber == 500)
        for _ in 0..<20 { _ = try flow.issueChallenge(project: project, apiKey: nil, remoteAddress: "203.0.113.5") }
        #expect(try flow.issueChallenge(project: project, apiKey: nil, remoteAddress: "203.0.113.5").maxNumber == 8_000)
        clock.advance(seconds: project.appVerification.windowSeconds)
        #expect(try flow.issueChallenge(project: project, apiKey: nil, remoteAddress: "203.0.113.5").maxNumber == 500)
    }

    @Test("Many IPs sharing one API key raise that key's difficulty only")
    func difficultyPerKey() throws {
        for i in 0..<5 { _ = try flow.issueChallenge(project: project, apiKey: "busy", remoteAddress: "10.0.0.\(i)") }
        #expect(try flow.issueChallenge(project: project, apiKey: "busy", remoteAddress: "10.0.1.1").maxNumber == 1000)
        #expect(try flow.issueChallenge(project: project, apiKey: "quiet", remoteAddress: "10.0.1.2").maxNumber == 500)
    }

    // MARK: Tokens

    @Test("An app token is bound to its project and API key, used once, and expires after 2 minutes")
    func tokenBinding() throws {
        let tokens = AppTokens(store: store, clock: clock, random: SeededRandom(seed: 3))
        func mint() throws -> String {
            try flow.redeem(payload: try issueAndSolve().payload, project: project, apiKey: "key-a", app: "com.example.gatehouse.demo",
                            remoteAddress: "192.0.2.1")
        }
        let failed = AuthError(.captchaCheckFailed, "Recaptcha verification failed - MALFORMED")
        let t1 = try mint()
        #expect(throws: failed) { try tokens.consume(t1, project: "other-project", apiKey: "key-a", app: "com.example.gatehouse.demo") }
        let t2 = try mint()
        #expect(throws: failed) { try tokens.consume(t2, project: project.id, apiKey: "key-b", app: "com.example.gatehouse.demo") }
        let t3 = try mint()
        try tokens.consume(t3, project: project.id, apiKey: nil, app: "com.example.gatehouse.demo")
        let wrongApp = try mint()
        #expect(throws: failed) { try tokens.consume(wrongApp, project: project.id, apiKey: "key-a", app: "web") }
        let t4 = try mint()
        clock.advance(millis: AppTokens.lifetime)
        #expect(throws: AuthError(.captchaCheckFailed, "Recaptcha verification failed - EXPIRED")) {
            try tokens.consume(t4, project: project.id, apiKey: "key-a", app: "com.example.gatehouse.demo")
        }
    }

    @Test("A refused solution mints no token and leaves no replay entry behind")
    func noHalfWrites() throws {
        let s = try issueAndSolve()
        let bad = PowSolution(challenge: s.challenge, number: s.number + 1, salt: s.salt, signature: s.signature)
        expectFailure("INVALID") {
            _ = try flow.redeem(payload: bad.payload, project: project, apiKey: "key-a", app: "web", remoteAddress: "192.0.2.1")
        }
        #expect(try store.db.first("SELECT COUNT(*) FROM app_tokens") { $0.int(0) } == 0)
        #expect(try store.db.first("SELECT COUNT(*) FROM app_verification_replays") { $0.int(0) } == 0)
    }
}
