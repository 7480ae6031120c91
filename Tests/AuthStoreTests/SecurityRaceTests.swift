import AuthCrypto
import AuthEngine
import AuthStore
import Foundation
import Testing
import Locking

/// Every security action an operator takes (disable, revoke, a claim's removal, the removal of a
/// second factor, an email change) raced against the user's refreshes and sign-ins, with one
/// connection per thread, on every backend: whatever commits in between, the action's result
/// stays and no refresh token issued before it (nor a successor a concurrent refresh wrote)
/// outlives a revocation. Under PostgreSQL's READ COMMITTED a flow that read the account without
/// its row lock used to write the old values back.
@Suite("Security actions against concurrent refreshes and sign-ins (SQLite and PostgreSQL)")
struct SecurityRaceTests {
    enum Action: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case disable, revoke, removeClaim, removeFactor, changeEmail
        var testDescription: String { rawValue }
        /// Whether every refresh token issued before the action must be dead after it.
        var endsTokens: Bool { self == .disable || self == .revoke || self == .removeFactor }
    }

    static let trials = 6
    static let refreshers = 3
    static let refreshesEach = 12

    /// One database, its project and signer, shared by the racing threads (each opens its own connection).
    final class Env: @unchecked Sendable {
        let db: TestDatabase
        let project: ProjectSettings
        let tokens: TokenService
        let random = SystemRandom()

        init(_ backend: Backend) throws {
            db = try TestDatabase(backend)
            var p = ProjectSettings(id: "p", devMode: true)
            p.mfa = .enabled
            project = p
            let clock = SystemClock()
            tokens = TokenService(keyRing: KeyRing(clock: clock), clock: clock)
            try tokens.keyRing.ensureKey(store: try db.open(), random: random)
        }

        /// An unsigned custom token for `uid` (dev mode takes them, as the emulator does).
        func customToken(_ uid: String) -> String {
            let header = #"{"alg":"none","typ":"JWT"}"#
            let claims = #"{"aud":"\#(CustomTokens.audience)","uid":"\#(uid)"}"#
            return Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "."
        }

        func refresh(_ store: any ContractStore, _ token: String) throws -> String {
            try RefreshTokens(store: store, tokens: tokens, random: random)
                .refresh(grantType: "refresh_token", refreshToken: token, project: project.id, graceSeconds: 10).refreshToken
        }

        func act(_ action: Action, on store: any ContractStore, uid: String) throws {
            let admin = AccountAdmin(store: store, clock: tokens.clock, random: random)
            var c = AccountChanges()
            c.localID = uid
            switch action {
            case .disable: c.disabled = true
            case .revoke: try admin.revoke(project: project.id, localID: uid); return
            case .removeClaim: c.customAttributes = "{}"
            case .removeFactor: c.mfaEnrollments = []
            case .changeEmail: c.email = "new-\(uid)@example.com"
            }
            _ = try admin.update(project: project.id, c)
        }
    }

    @Test("a security action raced by refreshes and sign-ins stays done; no earlier refresh token outlives a revocation",
          arguments: Backend.available, Action.allCases)
    func actionAgainstRefreshes(backend: Backend, action: Action) throws {
        let env = try Env(backend)
        defer { env.db.remove() }
        let store = try env.db.open()
        for trial in 0..<Self.trials {
            let uid = "user-\(action.rawValue)-\(trial)"
            var a = Account(projectID: "p", localID: uid, createdAt: env.tokens.clock.now())
            a.email = "\(uid)@example.com"
            a.emailVerified = true
            a.customAttributes = #"{"role":"admin"}"#
            a.mfaEnrollments = [MFAEnrollment(enrollmentID: "factor-\(trial)", phoneNumber: "+15555550100", enrolledAt: 0)]
            try store.insertAccount(a)
            let starts = try (0..<Self.refreshers).map { _ in
                try SignInTokens(tokens: env.tokens, store: store, random: env.random).issue(for: a, provider: "custom").refreshToken
            }
            // Threads 0..<refreshers refresh their family over and over; the next one signs in
            // again and again; the last waits a moment and acts.
            let last = Locked<[Int: String]>([:])
            let racers = Self.refreshers + 2
            let counter = Locked(0)
            _ = try env.db.race(threads: racers) { s -> Bool in
                let me = counter.withLock { n -> Int in defer { n += 1 }; return n }
                if me < Self.refreshers {
                    var token = starts[me]
                    for _ in 0..<Self.refreshesEach {
                        guard let next = try? env.refresh(s, token) else { break }
                        token = next
                        last.withLock { $0[me] = token }
                    }
                } else if me == Self.refreshers {
                    for _ in 0..<4 {
                        _ = try? CustomTokenSignIn(project: env.project, store: s, tokens: env.tokens, random: env.random)
                            .signIn(token: env.customToken(uid), remoteAddress: nil)
                    }
                } else {
                    usleep(UInt32.random(in: 0...15_000))
                    try env.act(action, on: s, uid: uid)
                }
                return true
            }
            let after = try #require(try store.account(project: "p", localID: uid))
            switch action {
            case .disable: #expect(after.disabled, "trial \(trial)")
            case .revoke: #expect(after.validSince > 0, "trial \(trial)")
            case .removeClaim: #expect(!(after.customAttributes ?? "").contains("role"), "trial \(trial)")
            case .removeFactor: #expect(after.mfaEnrollments.isEmpty, "trial \(trial)")
            case .changeEmail: #expect(after.email == "new-\(uid.lowercased())@example.com", "trial \(trial)")
            }
            if action.endsTokens {
                // The newest token of every family, written before or while the action ran, is dead.
                for (family, token) in last.withLock({ $0 }).sorted(by: { $0.key < $1.key }) + starts.enumerated().map({ ($0.offset, $0.element) }) {
                    #expect(throws: AuthError.self, "trial \(trial), family \(family)") { try env.refresh(store, token) }
                }
            }
        }
    }

    @Test("a client racing itself inside the grace window keeps its family", arguments: Backend.available)
    func selfRaceInsideGrace(backend: Backend) throws {
        let env = try Env(backend)
        defer { env.db.remove() }
        let store = try env.db.open()
        for trial in 0..<Self.trials {
            let a = Account(projectID: "p", localID: "self-\(trial)", createdAt: env.tokens.clock.now())
            try store.insertAccount(a)
            let start = try SignInTokens(tokens: env.tokens, store: store, random: env.random).issue(for: a, provider: "custom").refreshToken
            let answers = try env.db.race(threads: 4) { s in try env.refresh(s, start) }
            // One successor, handed to every racer, and it still works.
            #expect(Set(answers).count == 1, "trial \(trial)")
            #expect(try env.refresh(store, answers[0]).hasPrefix(SignInTokens.refreshPrefix), "trial \(trial)")
        }
    }
}
