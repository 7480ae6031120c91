import AuthStore
import HTTP
import Testing
@testable import AuthEngine
@testable import AuthWeb

/// The console's own gate, with no nginx in front (a request that reaches Gatehouse some other
/// way): every page and action checks the session, its second factor and the operator list.
@Suite("Console gate")
struct ConsoleGateTests {
    static let pages = ["/__/auth/console/", "/__/auth/console/users", "/__/auth/console/delivery", "/__/auth/console/audit",
                        "/__/auth/console/keys"]

    static func client() throws -> WebClient {
        var p = WebClient.productionProject()
        p.mfa = .enabled
        p.passkeys.enabled = true
        return try WebClient(projects: [p])
    }

    static func session(_ c: WebClient, email: String, provider: String = "password", factor: Bool) throws -> (String, Account) {
        let account = try MFAPageTests.account(c, email: email)
        let second = factor ? SecondFactor(identifier: try #require(account.mfaEnrollments.first).enrollmentID) : nil
        let cookie = try Sessions(store: c.store, tokens: c.app.tokens, random: c.app.random)
            .startHostedSession(account: account, provider: provider, lifetime: 3600, idleTimeout: 0, secondFactor: second)
        return (cookie, account)
    }

    static func get(_ c: WebClient, _ path: String, _ cookie: String?) -> Response {
        c.request("GET", path, headers: cookie.map { ["cookie": "__Host-gatehouse=" + $0] } ?? [:])
    }

    @Test("no session: to sign-in; first factor only: to the second factor; not an operator: the same 403 everywhere")
    func refusals() throws {
        let c = try Self.client()
        let (firstOnly, _) = try Self.session(c, email: "first@example.com", factor: false)
        let (stranger, _) = try Self.session(c, email: "stranger@example.com", factor: true)
        var forbidden: Set<[UInt8]> = []
        for path in Self.pages {
            let none = Self.get(c, path, nil)
            #expect(none.status == 303 && (none.header("Location") ?? "").contains("/__/auth/signin"), "\(path)")
            let stepUp = Self.get(c, path, firstOnly)
            #expect(stepUp.status == 303 && (stepUp.header("Location") ?? "").contains("/__/auth/mfa"), "\(path)")
            let r = Self.get(c, path, stranger)
            #expect(r.status == 403, "\(path)")
            forbidden.insert(r.body)
        }
        // One body for every page, naming no operator, no page and no reason.
        #expect(forbidden.count == 1)
        let text = String(decoding: try #require(forbidden.first), as: UTF8.self)
        #expect(!text.lowercased().contains("operator") && !text.contains("gh-console-nav"))
        // An action posted by a non-operator changes nothing and says nothing more.
        let post = c.request("POST", "/__/auth/console/keys", body: Array("action=rotate".utf8),
                             headers: ["cookie": "__Host-gatehouse=" + stranger, "content-type": "application/x-www-form-urlencoded"])
        #expect(post.status == 403 && post.body == forbidden.first)
    }

    @Test("an operator with a second factor or a passkey gets in; removed, the next request is refused")
    func operators() throws {
        let c = try Self.client()
        let (withFactor, account) = try Self.session(c, email: "op@example.com", factor: true)
        let (passkey, other) = try Self.session(c, email: "op2@example.com", provider: Passkeys.provider, factor: false)
        for a in [account, other] {
            #expect(try c.store.addOperator(OperatorRecord(projectID: a.projectID, localID: a.localID, addedAt: 1, addedBy: "cli")))
        }
        for path in Self.pages {
            #expect(Self.get(c, path, withFactor).status == 200, "\(path)")
            #expect(Self.get(c, path, passkey).status == 200, "\(path)")
        }
        #expect(try c.store.removeOperator(project: account.projectID, localID: account.localID))
        #expect(Self.get(c, "/__/auth/console/users", withFactor).status == 403)
        #expect(Self.get(c, "/__/auth/console/users", passkey).status == 200)
    }
}
