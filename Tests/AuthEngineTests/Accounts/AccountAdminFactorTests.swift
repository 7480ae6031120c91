import Testing
@testable import AuthEngine

/// An administrator's removal of one second factor (the operator console's "Remove"): no recent
/// sign-in of the user asked for, everything issued before revoked as a user's own withdrawal
/// revokes it, and one `mfa.withdraw` row naming the administrator.
@Suite("Account administration: removing a factor")
struct AccountAdminFactorTests {
    static let p = SessionWorld.project

    @Test("the factor goes, every earlier sign-in ends, the row names the actor")
    func removes() throws {
        let w = try SessionWorld()
        try w.user("ada")
        var c = AccountChanges()
        c.localID = "ada"
        c.mfaEnrollments = [.init(enrollmentID: "desk", phoneNumber: "+33612345601", displayName: "Desk", enrolledAt: nil),
                            .init(enrollmentID: "pocket", phoneNumber: "+33612345602", displayName: nil, enrolledAt: nil)]
        _ = try w.admin.update(project: Self.p, c)
        w.clock.advance(seconds: 2)
        let before = try w.signIn("ada")
        w.clock.advance(seconds: 2)
        let admin = AccountAdmin(store: w.store, clock: w.clock, random: w.random, cache: w.cache, actor: "operator:op")
        let a = try admin.removeFactor(project: Self.p, localID: "ada", enrollmentID: "desk", remoteAddress: "203.0.113.9")
        #expect(a.mfaEnrollments.map(\.enrollmentID) == ["pocket"])
        #expect(try w.account("ada").mfaEnrollments.map(\.enrollmentID) == ["pocket"])
        #expect(wireError { try w.refreshOnce(before.refreshToken) } == "TOKEN_EXPIRED")
        #expect(wireError { try w.accounts.account(forIDToken: before.idToken, project: Self.p) } == "TOKEN_EXPIRED")
        let row = try #require(try w.store.auditEvents(project: Self.p, localID: "ada", since: nil, limit: 1).first)
        #expect(row.event.event == .mfaWithdraw && row.event.actor == "operator:op" && row.event.remoteAddress == "203.0.113.9")
        #expect(row.event.detail?.hasPrefix("desk: refreshTokens=1 sessions=0") == true)
        // What signs in afterwards is not touched by what came before.
        w.clock.advance(seconds: 2)
        let after = try w.signIn("ada")
        #expect(throws: Never.self) { try w.refreshOnce(after.refreshToken) }
    }

    @Test("an unknown factor or user is refused and changes nothing")
    func refuses() throws {
        let w = try SessionWorld()
        try w.user("ada")
        let admin = AccountAdmin(store: w.store, clock: w.clock, random: w.random, actor: "operator:op")
        #expect(throws: AuthError(.mfaEnrollmentNotFound)) { try admin.removeFactor(project: Self.p, localID: "ada", enrollmentID: "none") }
        #expect(throws: AuthError(.mfaEnrollmentNotFound)) { try admin.removeFactor(project: Self.p, localID: "ada", enrollmentID: "") }
        #expect(throws: AuthError(.userNotFound)) { try admin.removeFactor(project: Self.p, localID: "nobody", enrollmentID: "x") }
        #expect(try w.store.auditEvents(project: Self.p, localID: "ada", since: nil, limit: 10).isEmpty)
        #expect(try w.account("ada").validSince == 0)
    }
}
