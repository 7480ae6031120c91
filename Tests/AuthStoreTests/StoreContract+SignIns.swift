import AuthCrypto
import AuthEngine
import AuthStore
import Foundation
import Testing
import Locking

/// The contract of `SignInListStore` (the account page's "Where you're signed in" and the new
/// sign-in notice's devices) on every backend: each revocation is scoped to its user and names
/// exactly what it revokes; a family keeps its device; of concurrent sightings of one new device
/// exactly one is new; a sign-out of the others racing a refresh leaves no token of theirs working.
@Suite("Store contract: sign-ins and devices (SQLite and PostgreSQL)")
struct StoreContractSignIns {
    static func token(_ n: Int, family: String, user: String = "u1", at: Millis = 1_000, rotated: Millis? = nil,
                      userAgent: String? = nil, network: String? = nil) -> RefreshTokenRecord {
        RefreshTokenRecord(tokenHash: Digest.sha256("t\(n)"), familyID: family, projectID: "p", localID: user, provider: "phone",
                           authTime: 1, createdAt: at, rotatedAt: rotated, userAgent: userAgent, network: network)
    }

    static func session(_ n: Int, user: String = "u1", at: Millis = 1_000) -> SessionRecord {
        SessionRecord(sidHash: Digest.sha256("s\(n)"), projectID: "p", localID: user, provider: "password", createdAt: at, lastSeenAt: at,
                      expiresAt: 10_000_000, idleTimeoutSeconds: 0, secondFactor: "f1", userAgent: "UA \(n)", network: "203.0.113.0/24")
    }

    @Test("live refresh tokens: the newest of each family, rotated and revoked ones left out; a token's device read back",
          arguments: Backend.available)
    func liveTokens(backend: Backend) throws {
        try with(backend) { _, s in
            try s.insertRefreshToken(Self.token(1, family: "fa", at: 1_000, rotated: 2_000))
            try s.insertRefreshToken(Self.token(2, family: "fa", at: 2_000, userAgent: "Firefox", network: "198.51.100.0/24"))
            try s.insertRefreshToken(Self.token(3, family: "fb", at: 1_500))
            try s.insertRefreshToken(Self.token(4, family: "fc", user: "u2"))
            let live = try s.liveRefreshTokens(project: "p", localID: "u1")
            #expect(live.map(\.familyID) == ["fb", "fa"])
            #expect(live.first { $0.familyID == "fa" }?.userAgent == "Firefox")
            #expect(live.first { $0.familyID == "fa" }?.network == "198.51.100.0/24")
            #expect(try s.liveRefreshTokens(project: "other", localID: "u1").isEmpty)
            // Sessions keep their second factor and device.
            try s.insertSession(Self.session(1))
            let stored = try #require(try s.session(sidHash: Digest.sha256("s1")))
            #expect(stored.secondFactor == "f1" && stored.userAgent == "UA 1" && stored.network == "203.0.113.0/24")
        }
    }

    @Test("each revocation is the user's own and names exactly what it revokes", arguments: Backend.available)
    func revocations(backend: Backend) throws {
        try with(backend) { _, s in
            try s.insertRefreshToken(Self.token(1, family: "fa", at: 1_000, rotated: 2_000))
            try s.insertRefreshToken(Self.token(2, family: "fa", at: 2_000, userAgent: "Firefox", network: "198.51.100.0/24"))
            try s.insertRefreshToken(Self.token(3, family: "fb"))
            try s.insertRefreshToken(Self.token(4, family: "fc", user: "u2"))
            for n in 1...3 { try s.insertSession(Self.session(n)) }
            try s.insertSession(Self.session(4, user: "u2"))
            // Another user's family or session names nothing.
            #expect(try s.revokeUserRefreshFamily(project: "p", localID: "u1", familyID: "fc", at: 5_000) == 0)
            #expect(try !s.revokeUserSession(project: "p", localID: "u1", sidHash: Digest.sha256("s4"), at: 5_000))
            #expect(try !s.revokeUserSession(project: "q", localID: "u1", sidHash: Digest.sha256("s1"), at: 5_000))
            // One family: both of its tokens; once.
            #expect(try s.revokeUserRefreshFamily(project: "p", localID: "u1", familyID: "fa", at: 5_000) == 2)
            #expect(try s.revokeUserRefreshFamily(project: "p", localID: "u1", familyID: "fa", at: 6_000) == 0)
            #expect(try s.refreshToken(hash: Digest.sha256("t3"))?.revokedAt == nil)
            // One session; once.
            #expect(try s.revokeUserSession(project: "p", localID: "u1", sidHash: Digest.sha256("s1"), at: 5_000))
            #expect(try !s.revokeUserSession(project: "p", localID: "u1", sidHash: Digest.sha256("s1"), at: 6_000))
            #expect(try s.session(sidHash: Digest.sha256("s2"))?.revokedAt == nil)
            // The others: every session but the kept one, every refresh token; the other user untouched.
            #expect(try s.revokeSignIns(project: "p", localID: "u1", keepingSession: Digest.sha256("s3"), at: 7_000) == 2)
            #expect(try s.session(sidHash: Digest.sha256("s2"))?.revokedAt == 7_000)
            #expect(try s.session(sidHash: Digest.sha256("s3"))?.revokedAt == nil)
            #expect(try s.refreshToken(hash: Digest.sha256("t3"))?.revokedAt == 7_000)
            #expect(try s.session(sidHash: Digest.sha256("s4"))?.revokedAt == nil)
            #expect(try s.refreshToken(hash: Digest.sha256("t4"))?.revokedAt == nil)
            #expect(try s.liveRefreshTokens(project: "p", localID: "u1").isEmpty)
            // Keeping none: the last session too.
            #expect(try s.revokeSignIns(project: "p", localID: "u1", keepingSession: nil, at: 8_000) == 1)
            #expect(try s.activeSessions(project: "p", localID: "u1", now: 9_000).isEmpty)
            #expect(try s.activeSessions(project: "p", localID: "u2", now: 9_000).count == 1)
        }
    }

    static func note(_ s: any ContractStore, _ user: String, _ device: String, at: Millis) throws -> DeviceSighting {
        try s.noteDevice(UserDeviceRecord(projectID: "p", localID: user, deviceHash: Digest.sha256(device), firstSeenAt: at, lastSeenAt: at))
    }

    @Test("devices: the account's first, then known, then a new one; per account; last seen moves once a day", arguments: Backend.available)
    func devices(backend: Backend) throws {
        try with(backend) { _, s in
            let seen = try [("u1", "firefox", 1_000), ("u1", "firefox", 2_000), ("u1", "chrome", 3_000), ("u1", "chrome", 4_000),
                            // Another account's devices are its own.
                            ("u2", "chrome", 5_000), ("u2", "firefox", 5_000)].map { try Self.note(s, $0.0, $0.1, at: Millis($0.2)) }
            #expect(seen == [.firstDevice, .known, .new, .known, .firstDevice, .new])
        }
    }

    @Test("two sightings of one new device at once: exactly one is new", arguments: Backend.available)
    func deviceRace(backend: Backend) throws {
        try with(backend) { db, s in
            for trial in 0..<6 {
                let user = "race-\(trial)"
                #expect(try s.noteDevice(UserDeviceRecord(projectID: "p", localID: user, deviceHash: Digest.sha256("first"),
                                                          firstSeenAt: 1, lastSeenAt: 1)) == .firstDevice)
                let seen = try db.race(threads: 4) { store in
                    try store.noteDevice(UserDeviceRecord(projectID: "p", localID: user, deviceHash: Digest.sha256("second"),
                                                          firstSeenAt: 2, lastSeenAt: 2))
                }
                #expect(seen.filter { $0 == .new }.count == 1, "trial \(trial): \(seen)")
                #expect(seen.filter { $0 == .known }.count == 3, "trial \(trial): \(seen)")
            }
            // A brand-new account signing in twice at once: one first device, the other known.
            let seen = try db.race(threads: 3) { store in
                try store.noteDevice(UserDeviceRecord(projectID: "p", localID: "fresh", deviceHash: Digest.sha256("d"), firstSeenAt: 1, lastSeenAt: 1))
            }
            #expect(seen.filter { $0 == .firstDevice }.count == 1 && !seen.contains(.new), "\(seen)")
        }
    }

    @Test("signing out the others raced by the refreshes of their families: no refresh token of theirs outlives it",
          arguments: Backend.available)
    func signOutOthersAgainstRefreshes(backend: Backend) throws {
        let env = try SecurityRaceTests.Env(backend)
        defer { env.db.remove() }
        let store = try env.db.open()
        for trial in 0..<SecurityRaceTests.trials {
            let uid = "others-\(trial)"
            let a = Account(projectID: "p", localID: uid, createdAt: env.tokens.clock.now())
            try store.insertAccount(a)
            let starts = try (0..<3).map { _ in
                try SignInTokens(tokens: env.tokens, store: store, random: env.random).issue(for: a, provider: "custom").refreshToken
            }
            let last = Locked<[Int: String]>([:])
            let counter = Locked(0)
            _ = try env.db.race(threads: starts.count + 1) { s -> Bool in
                let me = counter.withLock { n -> Int in defer { n += 1 }; return n }
                if me < starts.count {
                    var token = starts[me]
                    for _ in 0..<12 {
                        guard let next = try? env.refresh(s, token) else { break }
                        token = next
                        last.withLock { $0[me] = token }
                    }
                } else {
                    usleep(UInt32.random(in: 0...15_000))
                    let account = try #require(try s.account(project: "p", localID: uid))
                    try SignInList(store: s, clock: env.tokens.clock).signOutOthers(account: account, currentSession: nil, remoteAddress: nil)
                }
                return true
            }
            for (family, token) in last.withLock({ $0 }).sorted(by: { $0.key < $1.key }) + starts.enumerated().map({ ($0.offset, $0.element) }) {
                #expect(throws: AuthError.self, "trial \(trial), family \(family)") { try env.refresh(store, token) }
            }
            #expect(try store.liveRefreshTokens(project: "p", localID: uid).isEmpty, "trial \(trial)")
        }
    }
}
