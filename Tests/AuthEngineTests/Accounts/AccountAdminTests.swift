import Testing
@testable import AuthEngine

@Suite("Account administration")
struct AccountAdminTests {
    static let p = SessionWorld.project

    func changes(_ build: (inout AccountChanges) -> Void) -> AccountChanges {
        var c = AccountChanges()
        build(&c)
        return c
    }

    @Test("create stores normalised fields and the providers Firebase derives from them")
    func create() throws {
        let w = try SessionWorld()
        let a = try w.admin.create(project: AccountAdminTests.p, changes {
            $0.localID = "alice"; $0.email = "Alice@Example.COM"; $0.phoneNumber = "+33 6 12 34 56 78"
            $0.displayName = "Alice"; $0.emailVerified = true; $0.disabled = true
        })
        #expect(a.email == "alice@example.com" && a.phoneNumber == "+33612345678" && a.emailVerified && a.disabled)
        #expect(a.providers.map(\.providerID) == ["phone"])
        #expect(try w.account("alice") == a)
        let generated = try w.admin.create(project: AccountAdminTests.p, AccountChanges())
        #expect(generated.localID.count == 28)
    }

    @Test("create refuses duplicates, bad numbers and emails, and passwords with Firebase's codes")
    func createErrors() throws {
        let w = try SessionWorld()
        try w.user("taken", phone: "+33612345678", email: "taken@example.com")
        let p = AccountAdminTests.p
        #expect(throws: AuthError(.duplicateLocalID)) { try w.admin.create(project: p, changes { $0.localID = "taken" }) }
        #expect(throws: AuthError(.phoneNumberExists)) { try w.admin.create(project: p, changes { $0.phoneNumber = "+33612345678" }) }
        #expect(throws: AuthError(.emailExists)) { try w.admin.create(project: p, changes { $0.email = "TAKEN@example.com" }) }
        #expect(throws: AuthError(.invalidPhoneNumber, "Invalid format.")) { try w.admin.create(project: p, changes { $0.phoneNumber = "12345" }) }
        #expect(throws: AuthError(.invalidPhoneNumber, "TOO_SHORT")) { try w.admin.create(project: p, changes { $0.phoneNumber = "+1 650" }) }
        #expect(throws: AuthError(.invalidEmail)) { try w.admin.create(project: p, changes { $0.email = "not an email" }) }
        #expect(throws: AuthError(.operationNotAllowed, "Password sign-in is disabled for this project.")) {
            try w.admin.create(project: p, changes { $0.password = "secret123" })
        }
        #expect(throws: AuthError.self) { try w.admin.create(project: p, changes { $0.localID = String(repeating: "x", count: 129) }) }
        #expect(try w.store.countAccounts(project: p) == 1)
    }

    @Test("update changes profile fields, deletes attributes and providers, and keeps uniqueness")
    func update() throws {
        let w = try SessionWorld()
        try w.user("bob", phone: "+33612345678", email: "bob@example.com")
        try w.user("carol", phone: "+33612345679")
        let p = AccountAdminTests.p
        var a = try w.admin.update(project: p, changes { $0.localID = "bob"; $0.displayName = "Bob"; $0.photoURL = "https://example.com/b.png" })
        #expect(a.displayName == "Bob" && a.photoURL == "https://example.com/b.png")
        a = try w.admin.update(project: p, changes { $0.localID = "bob"; $0.deleteAttributes = ["DISPLAY_NAME", "PHOTO_URL"] })
        #expect(a.displayName == nil && a.photoURL == nil)
        a = try w.admin.update(project: p, changes { $0.localID = "bob"; $0.deleteProviders = ["phone"] })
        #expect(a.phoneNumber == nil && !a.providers.contains { $0.providerID == "phone" })
        #expect(throws: AuthError(.phoneNumberExists)) { try w.admin.update(project: p, changes { $0.localID = "bob"; $0.phoneNumber = "+33612345679" }) }
        a = try w.admin.update(project: p, changes { $0.localID = "bob"; $0.phoneNumber = "+16505553434"; $0.email = "new@example.com" })
        #expect(a.phoneNumber == "+16505553434" && a.email == "new@example.com" && !a.emailVerified)
        a = try w.admin.update(project: p, changes { $0.localID = "bob"; $0.emailVerified = true })
        #expect(a.emailVerified)
        #expect(throws: AuthError(.missingLocalID)) { try w.admin.update(project: p, AccountChanges()) }
        #expect(throws: AuthError(.userNotFound)) { try w.admin.update(project: p, changes { $0.localID = "nobody" }) }
    }

    @Test("an admin validSince revokes the user's stored refresh tokens and sessions")
    func validSince() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        w.clock.advance(seconds: 5)
        let a = try w.admin.update(project: AccountAdminTests.p, changes { $0.localID = "user-1"; $0.validSince = w.clock.nowSeconds })
        #expect(a.validSince == w.clock.nowSeconds)
        let rec = try #require(try w.store.refreshToken(hash: SignInTokens.hash(refreshToken: t.refreshToken)))
        #expect(rec.revokedAt == w.clock.now())
    }

    @Test("deleting a user removes its refresh tokens and sessions")
    func delete() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        _ = try w.sessions.startHostedSession(account: try w.account(), provider: "phone", lifetime: 3600, idleTimeout: 0)
        try w.admin.delete(project: AccountAdminTests.p, localID: "user-1")
        #expect(try w.store.account(project: AccountAdminTests.p, localID: "user-1") == nil)
        #expect(try w.store.refreshToken(hash: SignInTokens.hash(refreshToken: t.refreshToken)) == nil)
        #expect(try w.store.db.rows("SELECT COUNT(*) FROM sessions") { $0.int(0) } == [0])
        #expect(throws: AuthError(.userNotFound)) { try w.admin.delete(project: AccountAdminTests.p, localID: "user-1") }
    }

    @Test("batch delete refuses enabled accounts unless forced, skips unknown ids, and bounds the list")
    func batchDelete() throws {
        let w = try SessionWorld()
        try w.user("a", phone: nil)
        try w.user("b", phone: nil)
        _ = try w.admin.update(project: AccountAdminTests.p, changes { $0.localID = "b"; $0.disabled = true })
        let errors = try w.admin.batchDelete(project: AccountAdminTests.p, localIDs: ["a", "ghost", "b"], force: false)
        #expect(errors == [AccountAdmin.BatchDeleteError(index: 0, localID: "a", message: "NOT_DISABLED : Disable the account before batch deletion.")])
        #expect(try w.store.account(project: AccountAdminTests.p, localID: "b") == nil)
        #expect(try w.admin.batchDelete(project: AccountAdminTests.p, localIDs: ["a"], force: true).isEmpty)
        #expect(try w.store.countAccounts(project: AccountAdminTests.p) == 0)
        #expect(throws: AuthError(.localIDListExceedsLimit)) { try w.admin.batchDelete(project: AccountAdminTests.p, localIDs: [], force: true) }
        #expect(throws: AuthError(.localIDListExceedsLimit)) {
            try w.admin.batchDelete(project: AccountAdminTests.p, localIDs: (0...1000).map { "u\($0)" }, force: true)
        }
    }

    @Test("listing pages through every user exactly once, in localId order")
    func paging() throws {
        let w = try SessionWorld()
        for i in 0..<7 { try w.user("u\(i)", phone: nil) }
        var seen: [String] = []
        var token: String?
        var pages = 0
        repeat {
            let page = try w.admin.list(project: AccountAdminTests.p, maxResults: 3, pageToken: token)
            seen += page.users.map(\.localID)
            token = page.nextPageToken
            pages += 1
        } while token != nil
        #expect(seen == (0..<7).map { "u\($0)" })
        #expect(pages == 3)
        #expect(throws: AuthError.self) { try w.admin.list(project: AccountAdminTests.p, maxResults: 3, pageToken: "%%%") }
        #expect(try w.admin.list(project: AccountAdminTests.p, maxResults: 7, pageToken: nil).nextPageToken == nil)
    }

    @Test("users may edit their profile but not claims, status, email, phone or password")
    func userFacing() throws {
        let w = try SessionWorld()
        try w.user()
        let t = try w.signIn()
        let p = AccountAdminTests.p
        let a = try w.profile.update(idToken: t.idToken, project: p, changes { $0.displayName = "Me"; $0.photoURL = "https://x/y.png" })
        #expect(a.displayName == "Me")
        #expect(throws: AuthError(.insufficientPermission)) { try w.profile.update(idToken: t.idToken, project: p, changes { $0.customAttributes = "{}" }) }
        #expect(throws: AuthError(.operationNotAllowed)) { try w.profile.update(idToken: t.idToken, project: p, changes { $0.disabled = true }) }
        #expect(throws: AuthError.self) { try w.profile.update(idToken: t.idToken, project: p, changes { $0.email = "x@example.com" }) }
        #expect(throws: AuthError.self) { try w.profile.update(idToken: t.idToken, project: p, changes { $0.phoneNumber = "+33612345670" }) }
        #expect(throws: AuthError(.missingIDToken)) { try w.profile.update(idToken: nil, project: p, changes { $0.displayName = "x" }) }
        try w.profile.delete(idToken: t.idToken, project: p)
        #expect(try w.store.account(project: p, localID: "user-1") == nil)
    }

    @Test("the project number is a stable 12-digit string")
    func projectNumber() {
        let n = ProjectSettings.projectNumber(for: "demo-gatehouse")
        #expect(n.count == 12 && n.allSatisfy(\.isNumber))
        #expect(n == ProjectSettings.projectNumber(for: "demo-gatehouse"))
        #expect(n != ProjectSettings.projectNumber(for: "other"))
    }
}
