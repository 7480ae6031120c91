import Testing
@testable import AuthEngine

@Suite("Phone sign-in: REAUTH, LINK, UPDATE and temporaryProof")
struct PhoneAccountTests {
    let fr = "+33612345678"
    let de = "+4915123456789"

    @Test("REAUTH signs the number's owner in again")
    func reauth() throws {
        let f = try PhoneFixture()
        let (owner, _) = try f.signedInUser(fr)
        let s = try f.send(fr)
        guard case let .signedIn(a, _, isNew) = try f.signIn(s.sessionInfo, try f.lastCode(), op: .reauth) else { Issue.record("no"); return }
        #expect(!isNew && a.localID == owner.localID)
    }

    @Test("REAUTH with a number that has no account gets USER_NOT_FOUND and creates nothing")
    func reauthUnknown() throws {
        let f = try PhoneFixture()
        let s = try f.send(fr)
        let code = try f.lastCode()
        #expect(wireError { try f.signIn(s.sessionInfo, code, op: .reauth) } == "USER_NOT_FOUND")
        #expect(try f.store.countAccounts(project: f.project.id) == 0)
        // The whole flow rolled back: the code is still good for a sign-in.
        guard case .signedIn(_, _, true) = try f.signIn(s.sessionInfo, code) else { Issue.record("no"); return }
    }

    @Test("LINK adds the number and a phone provider to the ID token's account")
    func link() throws {
        let f = try PhoneFixture()
        let (user, idToken) = try f.emailUser()
        let s = try f.send(fr)
        guard case let .signedIn(a, tokens?, isNew) = try f.signIn(s.sessionInfo, try f.lastCode(), op: .link, idToken: idToken) else {
            Issue.record("no"); return
        }
        #expect(!isNew && a.localID == user.localID && a.phoneNumber == fr && a.email == "ana@example.com")
        #expect(a.providers.map(\.providerID).sorted() == ["password", "phone"])
        let claims = try f.tokens.verify(tokens.idToken, kind: .idToken, project: f.project.id, store: f.store)
        #expect(claims.phoneNumber == fr && claims.email == "ana@example.com" && claims.signInProvider == "phone")
    }

    @Test("LINK and UPDATE need a valid ID token")
    func linkNeedsIDToken() throws {
        let f = try PhoneFixture()
        let s = try f.send(fr)
        let code = try f.lastCode()
        #expect(wireError { try f.signIn(s.sessionInfo, code, op: .link) } == "MISSING_ID_TOKEN")
        #expect(wireError { try f.signIn(s.sessionInfo, code, op: .update, idToken: "a.b.c") } == "INVALID_ID_TOKEN")
    }

    @Test("UPDATE replaces the account's number")
    func update() throws {
        let f = try PhoneFixture()
        let (user, tokens) = try f.signedInUser(fr)
        let s = try f.send(de)
        guard case let .signedIn(a, _, _) = try f.signIn(s.sessionInfo, try f.lastCode(), op: .update, idToken: tokens.idToken) else {
            Issue.record("no"); return
        }
        #expect(a.localID == user.localID && a.phoneNumber == de)
        #expect(a.providers == [ProviderInfo(providerID: "phone", rawID: de, phoneNumber: de)])
        #expect(try f.store.account(project: f.project.id, phoneNumber: fr) == nil)
    }

    @Test("linking a number owned by another account answers a temporaryProof and no tokens")
    func linkNumberInUse() throws {
        let f = try PhoneFixture()
        let (owner, _) = try f.signedInUser(fr)
        let (_, idToken) = try f.emailUser()
        let s = try f.send(fr)
        let result = try f.signIn(s.sessionInfo, try f.lastCode(), op: .link, idToken: idToken)
        guard case let .numberInUse(proof, expiresIn, number) = result else { Issue.record("expected a proof"); return }
        #expect(expiresIn == 3600 && number == fr && proof.hasPrefix("ghp1."))
        #expect(wireError { try f.signIn(s.sessionInfo, "000000") } == "SESSION_EXPIRED", "the code was used")
        let stored = try f.store.db.rows("SELECT proof_hash FROM phone_proofs") { $0.blob(0) }
        #expect(stored == [PhoneSignIn.hash(proof: proof)], "only the proof's hash is stored")
        // Linking with the proof still conflicts.
        #expect(wireError { try f.signIn(proof: proof, number: fr, op: .link, idToken: idToken) } == "PHONE_NUMBER_EXISTS")
        // Signing in with the proof reaches the owner, once.
        guard case let .signedIn(a, _, isNew) = try f.signIn(proof: proof, number: fr) else { Issue.record("no"); return }
        #expect(a.localID == owner.localID && !isNew)
        #expect(wireError { try f.signIn(proof: proof, number: fr) } == "INVALID_TEMPORARY_PROOF")
    }

    @Test("a temporaryProof needs the number it was issued for, and expires after an hour")
    func proofChecks() throws {
        let f = try PhoneFixture()
        _ = try f.signedInUser(fr)
        let (_, idToken) = try f.emailUser()
        let s = try f.send(fr)
        guard case let .numberInUse(proof, _, _) = try f.signIn(s.sessionInfo, try f.lastCode(), op: .link, idToken: idToken) else {
            Issue.record("expected a proof"); return
        }
        #expect(wireError { try f.signIn(proof: proof, number: nil) } == "MISSING_PHONE_NUMBER")
        #expect(wireError { try f.signIn(proof: proof, number: de) } == "INVALID_TEMPORARY_PROOF")
        #expect(wireError { try f.signIn(proof: "ghp1.forged", number: fr) } == "INVALID_TEMPORARY_PROOF")
        #expect(wireError { try f.signIn(proof: proof, number: "12") } == "INVALID_PHONE_NUMBER : Invalid format.")
        f.clock.advance(seconds: 3600)
        #expect(wireError { try f.signIn(proof: proof, number: fr) } == "INVALID_TEMPORARY_PROOF")
    }

    @Test("a disabled account gets USER_DISABLED")
    func disabled() throws {
        let f = try PhoneFixture()
        let (user, _) = try f.signedInUser(fr)
        try f.store.change(project: user.projectID, localID: user.localID) { $0.disabled = true }
        let s = try f.send(fr)
        #expect(wireError { try f.signIn(s.sessionInfo, try f.lastCode()) } == "USER_DISABLED")
    }

    @Test("the hosted page's sign-in records the login without issuing tokens")
    func noTokens() throws {
        let f = try PhoneFixture(dev: true)
        let s = try f.send(fr)
        let r = try f.flow.signIn(.init(sessionInfo: s.sessionInfo, code: try f.lastCode(), remoteAddress: "x", issueTokens: false))
        guard case let .signedIn(a, nil, true) = r else { Issue.record("no"); return }
        #expect(a.lastLoginAt == f.clock.now())
        #expect(try f.store.db.first("SELECT COUNT(*) FROM refresh_tokens") { $0.int(0) } == 0)
    }

    @Test("operations arrive as names or enum indexes")
    func operationWire() {
        #expect(PhoneSignIn.Operation(wire: nil) == .unspecified)
        #expect(PhoneSignIn.Operation(wire: "REAUTH") == .reauth)
        #expect(PhoneSignIn.Operation(wire: "4") == .link)
        #expect(PhoneSignIn.Operation(wire: "9") == nil)
        #expect(PhoneSignIn.Operation(wire: "DELETE") == nil)
    }
}
