import AuthCrypto
import Testing
@testable import AuthEngine

/// Passkey enrolment and sign-in (`Passkeys`) over a real store with a software authenticator:
/// the ceremonies end in tokens, each check refuses what it must, a challenge serves once, for
/// what it was made and until it expires, a counter that does not grow is refused and audited,
/// the client budgets count challenges and failures, and removing a passkey ends what passkeys
/// signed in.
@Suite("Passkeys: enrolment and sign-in")
struct PasskeyFlowTests {
    typealias F = PasskeyFixture

    static func refused(_ what: String) -> String { "INVALID_AUTHENTICATOR_RESPONSE : " + what }
    static let challengeUsed = refused("the challenge is unknown or used")

    // MARK: The ceremonies

    @Test("enrol, then sign in: tokens of the passkey provider, the counter and last use stored, both audited")
    func enrolAndSignIn() throws {
        let f = try F()
        let (account, _) = try f.user()
        let authenticator = try SoftAuthenticator.es256()
        let enrolled = try f.enrol(account, authenticator, name: "Laptop")
        #expect(enrolled.passkey.credentialID == authenticator.id && enrolled.passkey.localID == account.localID)
        #expect(enrolled.passkey.algorithm == -7 && enrolled.passkey.name == "Laptop" && enrolled.passkey.signCount == 0)
        #expect(enrolled.passkey.backupEligible && enrolled.passkey.backedUp && enrolled.passkey.aaguid == [UInt8](repeating: 0, count: 16))
        #expect(enrolled.passkey.publicKey == TestCBOR.encode(authenticator.coseKey))
        // The enrolment's own tokens continue the caller's sign-in (its provider, not the passkey).
        let enrolmentTokens = try #require(enrolled.tokens)
        #expect(try f.tokens.verify(enrolmentTokens.idToken, kind: .idToken, project: f.project.id, store: f.store).signInProvider == "password")
        #expect(try f.passkeys.list(localID: account.localID) == [enrolled.passkey])

        f.clock.advance(seconds: 60)
        let signedIn = try f.signIn(authenticator)
        guard case let .done(who, passkey, tokens) = signedIn else { Issue.record("no tokens"); return }
        #expect(who.localID == account.localID && who.lastLoginAt == f.clock.now())
        #expect(passkey.signCount == 1 && passkey.lastUsedAt == f.clock.now())
        let verified = try f.tokens.verify(try #require(tokens).idToken, kind: .idToken, project: f.project.id, store: f.store)
        #expect(verified.uid == account.localID && verified.signInProvider == "passkey" && verified.authTime == f.clock.now() / 1000)
        let stored = try #require(try f.store.passkey(project: f.project.id, credentialID: authenticator.id))
        #expect(stored.signCount == 1 && stored.lastUsedAt == f.clock.now())
        // The refresh token is the passkey sign-in's.
        #expect(f.refreshes(try #require(tokens).refreshToken) == nil)
        #expect(try f.audit(account.localID).map(\.event) == [.passkeySignIn, .passkeyEnrol])
        #expect(try f.audit(account.localID).allSatisfy { $0.detail == authenticator.id && $0.outcome == "ok" && $0.remoteAddress == F.ip })
    }

    @Test("enrolment through an ID token, options naming the relying party, the user and the passkeys it already has")
    func enrolThroughIDToken() throws {
        let f = try F { $0.passkeys.rpName = "Example" }
        let (account, idToken) = try f.user()
        let first = try SoftAuthenticator.es256(id: 1)
        try f.enrol(account, first)
        let options = try f.passkeys.startEnrolment(idToken: idToken, remoteAddress: F.ip)
        #expect(options.rpID == F.rpID && options.rpName == "Example" && options.userID == Array(account.localID.utf8))
        #expect(options.userName == "ada@example.com" && options.userDisplayName == "ada@example.com")
        #expect(options.challenge.count == 32 && options.timeoutMillis == 300_000 && options.excludeCredentials == [first.id])
        let second = try SoftAuthenticator.es256(id: 50)
        let enrolled = try f.passkeys.finishEnrolment(idToken: idToken, response: second.register(challenge: options.challenge, rpID: F.rpID,
                                                                                                     origin: F.origin),
                                                      name: nil, remoteAddress: F.ip)
        #expect(enrolled.passkey.name == nil && enrolled.tokens != nil)
        #expect(try f.passkeys.list(localID: account.localID).map(\.credentialID) == [first.id, second.id])
    }

    @Test("an RS256 passkey enrols and signs in; standard base64 fields (as the iOS SDK sends them) are read too")
    func rs256AndStandardBase64() throws {
        let f = try F()
        let (account, _) = try f.user()
        let authenticator = SoftAuthenticator(key: .rs256(try RSAPrivateKey.generate()), credentialID: [0xFB, 0xFF, 0xFE, 0x01], signCount: 7)
        let enrolled = try f.enrol(account, authenticator) { $0.standardBase64 = true }
        #expect(enrolled.passkey.algorithm == -257 && enrolled.passkey.signCount == 7 && enrolled.passkey.credentialID == "-__-AQ")
        let signedIn = try f.signIn(authenticator) { $0.standardBase64 = true }
        guard case let .done(_, passkey, _) = signedIn else { Issue.record("no tokens"); return }
        #expect(passkey.signCount == 8)
    }

    @Test("without tokens asked for, a sign-in and an enrolment still record the use and the passkey")
    func withoutTokens() throws {
        let f = try F()
        let (account, _) = try f.user()
        let authenticator = try SoftAuthenticator.es256()
        #expect(try f.enrol(account, authenticator, issueTokens: false).tokens == nil)
        let options = try f.passkeys.startSignIn(remoteAddress: F.ip)
        let response = try authenticator.assert(challenge: options.challenge, rpID: F.rpID, origin: F.origin)
        guard case let .done(_, _, tokens) = try f.passkeys.finishSignIn(response: response, remoteAddress: F.ip, issueTokens: false) else {
            Issue.record("no sign-in"); return
        }
        #expect(tokens == nil)
        #expect(try f.store.passkey(project: f.project.id, credentialID: authenticator.id)?.signCount == 1)
    }

    // MARK: Challenges

    @Test("a challenge answers once: the same assertion again is refused, and so is a new assertion over it")
    func challengeUsedTwice() throws {
        let f = try F()
        let (account, _) = try f.user()
        let authenticator = try SoftAuthenticator.es256()
        try f.enrol(account, authenticator)
        let options = try f.passkeys.startSignIn(remoteAddress: F.ip)
        let response = try authenticator.assert(challenge: options.challenge, rpID: F.rpID, origin: F.origin)
        _ = try f.passkeys.finishSignIn(response: response, remoteAddress: F.ip)
        #expect(wireError { try f.passkeys.finishSignIn(response: response, remoteAddress: F.ip) } == Self.challengeUsed)
        let again = try authenticator.assert(challenge: options.challenge, rpID: F.rpID, origin: F.origin)
        #expect(wireError { try f.passkeys.finishSignIn(response: again, remoteAddress: F.ip) } == Self.challengeUsed)
        // An enrolment's challenge is spent by its registration too.
        let enrolment = try f.passkeys.startEnrolment(account: account, proof: f.proof(), remoteAddress: F.ip)
        let other = try SoftAuthenticator.es256(id: 90)
        _ = try f.passkeys.finishEnrolment(account: account, proof: f.proof(), response: other.register(challenge: enrolment.challenge, rpID: F.rpID,
                                                                                                            origin: F.origin),
                                           name: nil, remoteAddress: F.ip, issueTokens: false)
        let third = try SoftAuthenticator.es256(id: 180)
        #expect(wireError {
            try f.passkeys.finishEnrolment(account: account, proof: f.proof(), response: third.register(challenge: enrolment.challenge, rpID: F.rpID,
                                                                                                          origin: F.origin),
                                           name: nil, remoteAddress: F.ip, issueTokens: false)
        } == Self.challengeUsed)
    }

    @Test("a challenge expires after passkeys.challengeSeconds: PASSKEY_CHALLENGE_TIMEOUT, and it is not spent by the refusal")
    func challengeExpired() throws {
        let f = try F { $0.passkeys.challengeSeconds = 60 }
        let (account, _) = try f.user()
        let authenticator = try SoftAuthenticator.es256()
        try f.enrol(account, authenticator)
        let options = try f.passkeys.startSignIn(remoteAddress: F.ip)
        #expect(options.timeoutMillis == 60_000)
        let response = try authenticator.assert(challenge: options.challenge, rpID: F.rpID, origin: F.origin)
        f.clock.advance(seconds: 60)
        #expect(wireError { try f.passkeys.finishSignIn(response: response, remoteAddress: F.ip) } == "PASSKEY_CHALLENGE_TIMEOUT")
        f.clock.advance(seconds: 1000)
        #expect(wireError { try f.passkeys.finishSignIn(response: response, remoteAddress: F.ip) } == "PASSKEY_CHALLENGE_TIMEOUT")
        // One millisecond before the end it still answers.
        let fresh = try f.passkeys.startSignIn(remoteAddress: F.ip)
        f.clock.advance(millis: 59_999)
        guard case .done = try f.passkeys.finishSignIn(response: try authenticator.assert(challenge: fresh.challenge, rpID: F.rpID, origin: F.origin),
                                                       remoteAddress: F.ip) else { Issue.record("no sign-in"); return }
        // An enrolment's challenge expires alike.
        let enrolment = try f.passkeys.startEnrolment(account: account, proof: f.proof(), remoteAddress: F.ip)
        f.clock.advance(seconds: 61)
        let other = try SoftAuthenticator.es256(id: 70)
        #expect(wireError {
            try f.passkeys.finishEnrolment(account: account, proof: f.proof(), response: other.register(challenge: enrolment.challenge, rpID: F.rpID,
                                                                                                          origin: F.origin),
                                           name: nil, remoteAddress: F.ip, issueTokens: false)
        } == "PASSKEY_CHALLENGE_TIMEOUT")
    }

    @Test("an enrolment challenge is bound to its user and its purpose: B cannot use A's, a sign-in cannot use it, nor it a sign-in's")
    func challengeBound() throws {
        let f = try F()
        let (ada, _) = try f.user("ada@example.com")
        let (bob, _) = try f.user("bob@example.com")
        let adas = try f.passkeys.startEnrolment(account: ada, proof: f.proof(), remoteAddress: F.ip)
        let key = try SoftAuthenticator.es256(id: 3)
        let response = key.register(challenge: adas.challenge, rpID: F.rpID, origin: F.origin)
        #expect(wireError {
            try f.passkeys.finishEnrolment(account: bob, proof: f.proof(), response: response, name: nil, remoteAddress: F.ip, issueTokens: true)
        } == Self.challengeUsed)
        #expect(try f.passkeys.list(localID: bob.localID).isEmpty)
        // Nor is it a sign-in's challenge (once Ada's passkey exists, an assertion over it is still refused).
        let adasKey = try SoftAuthenticator.es256(id: 40)
        try f.enrol(ada, adasKey)
        let assertion = try adasKey.assert(challenge: adas.challenge, rpID: F.rpID, origin: F.origin)
        #expect(wireError { try f.passkeys.finishSignIn(response: assertion, remoteAddress: F.ip) } == Self.challengeUsed)
        // A sign-in's challenge does not enrol.
        let signIn = try f.passkeys.startSignIn(remoteAddress: F.ip)
        #expect(wireError {
            try f.passkeys.finishEnrolment(account: bob, proof: f.proof(), response: key.register(challenge: signIn.challenge, rpID: F.rpID, origin: F.origin),
                                           name: nil, remoteAddress: F.ip, issueTokens: true)
        } == Self.challengeUsed)
        // A's challenge, refused to B, still enrols A.
        #expect(try f.passkeys.finishEnrolment(account: ada, proof: f.proof(), response: response, name: nil, remoteAddress: F.ip,
                                               issueTokens: false).passkey.localID == ada.localID)
        // A challenge never handed out is unknown.
        let made = try key.assert(challenge: [UInt8](repeating: 1, count: 32), rpID: F.rpID, origin: F.origin)
        #expect(wireError { try f.passkeys.finishSignIn(response: made, remoteAddress: F.ip) } == Self.challengeUsed)
    }

    @Test("another project's challenge is unknown here")
    func challengeOfAnotherProject() throws {
        let f = try F()
        let (account, _) = try f.user()
        let authenticator = try SoftAuthenticator.es256()
        try f.enrol(account, authenticator)
        var other = f.project
        other.id = "other-project"
        let elsewhere = Passkeys(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, project: other)
        let options = try elsewhere.startSignIn(remoteAddress: F.ip)
        let response = try authenticator.assert(challenge: options.challenge, rpID: F.rpID, origin: F.origin)
        #expect(wireError { try f.passkeys.finishSignIn(response: response, remoteAddress: F.ip) } == Self.challengeUsed)
    }

    // MARK: Checks of a registration

    @Test("registration checks: type, origin, cross-origin, relying party hash, user presence and verification, ids, format")
    func registrationChecks() throws {
        let f = try F()
        let (account, _) = try f.user()
        let key = try SoftAuthenticator.es256()
        let cases: [(String, (inout SoftAuthenticator.Ceremony) -> Void)] = [
            (Self.refused("clientDataJSON type is not webauthn.create"), { $0.type = "webauthn.get" }),
            (Self.refused("origin https://evil.test is not allowed"), { $0.origin = "https://evil.test" }),
            (Self.refused("origin http://example.com is not allowed"), { $0.origin = "http://example.com" }),
            (Self.refused("a cross-origin ceremony"), { $0.crossOrigin = true }),
            (Self.refused("the relying party id hash is not example.com's"), { $0.rpID = "evil.test" }),
            (Self.refused("user presence flag not set"), { $0.flags &= ~SoftAuthenticator.up }),
            (Self.refused("user verification flag not set"), { $0.flags &= ~SoftAuthenticator.uv }),
            (Self.refused("no attested credential"), { $0.flags &= ~SoftAuthenticator.at; $0.attested = false }),
            (Self.refused("bytes after the authenticator data"), { $0.flags &= ~SoftAuthenticator.at }),
            (Self.refused("the attested credential id is not the response's"), { $0.attestedID = [1, 2, 3] }),
            ("INVALID_CREDENTIAL_ID", { $0.rawID = "AAAA" }),
            ("INVALID_CREDENTIAL_ID", { $0.responseID = "" }),
            ("INVALID_CREDENTIAL_ID", { $0.responseID = "***" }),
            (Self.refused("a none attestation with a statement"), { $0.statement = [CBOR.Pair(key: .text("alg"), value: .int(-7))] }),
            (Self.challengeUsed, { $0.challenge = [UInt8](repeating: 9, count: 32) }),
            (Self.refused("clientDataJSON has no challenge"), { $0.challengeText = "" }),
        ]
        for (expected, edit) in cases {
            #expect(wireError { try f.enrol(account, key, edit) } == expected, "\(expected)")
        }
        #expect(try f.passkeys.list(localID: account.localID).isEmpty)
        // Each refusal above was before the challenge was spent, or spent only its own.
        try f.enrol(account, key)
        #expect(try f.passkeys.list(localID: account.localID).count == 1)
    }

    @Test("the same credential again is PASSKEY_EXISTS; another user's is CREDENTIAL_ALREADY_IN_USE; maxPerUser is PASSKEY_LIMIT_EXCEEDED")
    func registrationConflicts() throws {
        let f = try F { $0.passkeys.maxPerUser = 2 }
        let (ada, _) = try f.user("ada@example.com")
        let (bob, _) = try f.user("bob@example.com")
        let key = try SoftAuthenticator.es256(id: 1)
        try f.enrol(ada, key)
        #expect(wireError { try f.enrol(ada, key) } == "PASSKEY_EXISTS")
        #expect(wireError { try f.enrol(bob, key) } == "CREDENTIAL_ALREADY_IN_USE")
        try f.enrol(ada, try SoftAuthenticator.es256(id: 30))
        // The limit is checked when the challenge is asked for, and again at the end.
        #expect(wireError { try f.passkeys.startEnrolment(account: ada, proof: f.proof(), remoteAddress: F.ip) } == "PASSKEY_LIMIT_EXCEEDED")
        try f.enrol(bob, try SoftAuthenticator.es256(id: 60))
        let options = try f.passkeys.startEnrolment(account: bob, proof: f.proof(), remoteAddress: F.ip)
        try f.enrol(bob, try SoftAuthenticator.es256(id: 90))
        let late = try SoftAuthenticator.es256(id: 120).register(challenge: options.challenge, rpID: F.rpID, origin: F.origin)
        #expect(wireError {
            try f.passkeys.finishEnrolment(account: bob, proof: f.proof(), response: late, name: nil, remoteAddress: F.ip, issueTokens: false)
        } == "PASSKEY_LIMIT_EXCEEDED")
    }

    @Test("enrolment needs passkeys on, an enabled user, a recent sign-in and, for a user with a factor, that factor")
    func enrolmentPreconditions() throws {
        let f = try F()
        let (account, idToken) = try f.user()
        let key = try SoftAuthenticator.es256()
        var off = f.project
        off.passkeys.enabled = false
        let disabled = Passkeys(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, project: off)
        #expect(wireError { try disabled.startEnrolment(idToken: idToken, remoteAddress: F.ip) } == "PASSKEY_NOT_ENABLED")
        #expect(wireError { try disabled.startSignIn(remoteAddress: F.ip) } == "PASSKEY_NOT_ENABLED")
        #expect(wireError { try f.passkeys.startEnrolment(idToken: nil, remoteAddress: F.ip) } == "MISSING_ID_TOKEN")
        // Six minutes after the sign-in: too old to add a way in.
        let old = f.proof()
        f.clock.advance(seconds: 301)
        #expect(wireError { try f.passkeys.startEnrolment(account: account, proof: old, remoteAddress: F.ip) }
                == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN : " + SensitiveChange.tooOldDetail)
        // A user with a second factor: a sign-in that passed it.
        let (withFactor, _) = try f.user("factor@example.com", factor: F.phoneFactor)
        #expect(wireError { try f.enrol(withFactor, key) } == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN : " + SensitiveChange.secondFactorDetail)
        try f.enrol(withFactor, key, factor: F.phoneFactor)
        // A disabled user.
        try f.store.change(project: f.project.id, localID: account.localID) { $0.disabled = true }
        #expect(wireError { try f.enrol(try f.account(account.localID), try SoftAuthenticator.es256(id: 77)) } == "USER_DISABLED")
        // Disabled between the challenge and the registration.
        let (carol, _) = try f.user("carol@example.com")
        let options = try f.passkeys.startEnrolment(account: carol, proof: f.proof(), remoteAddress: F.ip)
        try f.store.change(project: f.project.id, localID: carol.localID) { $0.disabled = true }
        let late = try SoftAuthenticator.es256(id: 99).register(challenge: options.challenge, rpID: F.rpID, origin: F.origin)
        #expect(wireError {
            try f.passkeys.finishEnrolment(account: carol, proof: f.proof(), response: late, name: nil, remoteAddress: F.ip, issueTokens: true)
        } == "USER_DISABLED")
        #expect(try f.passkeys.list(localID: carol.localID).isEmpty)
    }

    @Test("an anonymous account that enrols a passkey is anonymous no more")
    func anonymousUpgrade() throws {
        let f = try F()
        var a = Account(projectID: f.project.id, localID: f.random.userID(), createdAt: f.clock.now())
        a.anonymous = true
        try f.store.insertAccount(a)
        let proof = SignInProof(firstFactor: "anonymous", authTime: 0)
        let options = try f.passkeys.startEnrolment(account: a, proof: proof, remoteAddress: F.ip)
        #expect(options.userName == a.localID)
        let key = try SoftAuthenticator.es256()
        let enrolled = try f.passkeys.finishEnrolment(account: a, proof: proof, response: key.register(challenge: options.challenge, rpID: F.rpID,
                                                                                                         origin: F.origin),
                                                      name: nil, remoteAddress: F.ip, issueTokens: true)
        let stored = try f.account(a.localID)
        #expect(!enrolled.account.anonymous && !stored.anonymous)
    }

    @Test("a name is at most 128 bytes without control characters")
    func names() throws {
        let f = try F()
        let (account, _) = try f.user()
        #expect(wireError { try f.enrol(account, try SoftAuthenticator.es256(id: 1), name: String(repeating: "n", count: 129)) }
                == "INVALID_ARGUMENT : Invalid passkey name.")
        #expect(wireError { try f.enrol(account, try SoftAuthenticator.es256(id: 2), name: "a\u{7}b") } == "INVALID_ARGUMENT : Invalid passkey name.")
        let enrolled = try f.enrol(account, try SoftAuthenticator.es256(id: 3), name: String(repeating: "é", count: 64))
        #expect(enrolled.passkey.name?.utf8.count == 128)
        try f.passkeys.rename(account: account, credentialID: enrolled.passkey.credentialID, name: "Phone", remoteAddress: F.ip)
        #expect(try f.passkeys.list(localID: account.localID).first?.name == "Phone")
        #expect(wireError { try f.passkeys.rename(account: account, credentialID: "unknown", name: "x", remoteAddress: F.ip) }
                == "PASSKEY_ENROLLMENT_NOT_FOUND")
    }

    // MARK: Checks of an assertion

    @Test("assertion checks: type, origin, hash, flags, signature, user handle, unknown credential; none spends the passkey's counter")
    func assertionChecks() throws {
        let f = try F()
        let (account, _) = try f.user()
        let key = try SoftAuthenticator.es256()
        try f.enrol(account, key)
        key.userHandle = Array(account.localID.utf8)
        let cases: [(String, (inout SoftAuthenticator.Ceremony) -> Void)] = [
            (Self.refused("clientDataJSON type is not webauthn.get"), { $0.type = "webauthn.create" }),
            (Self.refused("origin https://evil.test is not allowed"), { $0.origin = "https://evil.test" }),
            (Self.refused("a cross-origin ceremony"), { $0.crossOrigin = true }),
            (Self.refused("the relying party id hash is not example.com's"), { $0.rpID = "app.example.com" }),
            (Self.refused("user presence flag not set"), { $0.flags &= ~SoftAuthenticator.up }),
            (Self.refused("user verification flag not set"), { $0.flags &= ~SoftAuthenticator.uv }),
            (Self.refused("backed up but not backup eligible"), { $0.flags &= ~SoftAuthenticator.be }),
            (Self.refused("the signature does not verify"), { $0.flipSignatureBit = true }),
            (Self.refused("userHandle is not the passkey's user"), { $0.userHandle = .some(Array("someone-else".utf8)) }),
            ("PASSKEY_CREDENTIAL_NOT_FOUND", { $0.responseID = "AAAAAAAA"; $0.rawID = "AAAAAAAA" }),
            ("INVALID_CREDENTIAL_ID", { $0.rawID = "AAAAAAAA" }),
        ]
        for (expected, edit) in cases {
            #expect(wireError { try f.signIn(key, edit) } == expected, "\(expected)")
        }
        #expect(try f.store.passkey(project: f.project.id, credentialID: key.id)?.signCount == 0)
        // Without a user handle (it is optional), and with the right one.
        guard case .done = try f.signIn(key, { $0.userHandle = .some(nil) }) else { Issue.record("no sign-in"); return }
        guard case .done = try f.signIn(key) else { Issue.record("no sign-in"); return }
        // Missing fields.
        #expect(wireError { try f.passkeys.finishSignIn(response: nil, remoteAddress: F.ip) } == "MISSING_AUTHENTICATOR_RESPONSE")
        var partial = try key.assert(challenge: try f.passkeys.startSignIn(remoteAddress: F.ip).challenge, rpID: F.rpID, origin: F.origin)
        partial.signature = nil
        #expect(wireError { try f.passkeys.finishSignIn(response: partial, remoteAddress: F.ip) } == "MISSING_AUTHENTICATOR_RESPONSE")
        partial.signature = "!!"
        #expect(wireError { try f.passkeys.finishSignIn(response: partial, remoteAddress: F.ip) } == Self.refused("a field that is not base64"))
    }

    @Test("a counter that does not grow is refused and audited as passkey.counter_regression; a zero counter on both sides is fine")
    func counterRegression() throws {
        let f = try F()
        let (account, _) = try f.user()
        let key = try SoftAuthenticator.es256(signCount: 5)
        try f.enrol(account, key)
        guard case .done = try f.signIn(key, { $0.counter = 6 }) else { Issue.record("no sign-in"); return }
        for counter: UInt32 in [6, 5, 0] {
            #expect(wireError { try f.signIn(key, { $0.counter = counter }) } == Self.refused("the signature counter did not increase"), "\(counter)")
        }
        let regressions = try f.audit(account.localID).filter { $0.event == .passkeyCounterRegression }
        #expect(regressions.count == 3)
        #expect(regressions.allSatisfy { $0.outcome == "refused" && $0.detail == key.id && $0.event.rawValue == "passkey.counter_regression" })
        // The stored counter is untouched by the refusals; a larger one signs in.
        #expect(try f.store.passkey(project: f.project.id, credentialID: key.id)?.signCount == 6)
        guard case .done = try f.signIn(key, { $0.counter = 1000 }) else { Issue.record("no sign-in"); return }

        // An authenticator without a counter (always 0) signs in every time.
        let (bob, _) = try f.user("bob@example.com")
        let counterless = try SoftAuthenticator.es256(id: 100)
        try f.enrol(bob, counterless)
        for _ in 0..<3 {
            guard case .done = try f.signIn(counterless, { $0.counter = 0 }) else { Issue.record("no sign-in"); return }
        }
        #expect(try f.audit(bob.localID).filter { $0.event == .passkeyCounterRegression }.isEmpty)
    }

    @Test("a disabled user's passkey does not sign in")
    func disabledUser() throws {
        let f = try F()
        let (account, _) = try f.user()
        let key = try SoftAuthenticator.es256()
        try f.enrol(account, key)
        try f.store.change(project: f.project.id, localID: account.localID) { $0.disabled = true }
        #expect(wireError { try f.signIn(key) } == "USER_DISABLED")
        #expect(try f.store.passkey(project: f.project.id, credentialID: key.id)?.lastUsedAt == nil)
        #expect(try f.audit(account.localID).filter { $0.event == .passkeySignIn }.isEmpty)
    }

    @Test("a deleted user's passkey is not found")
    func deletedUser() throws {
        let f = try F()
        let (account, _) = try f.user()
        let key = try SoftAuthenticator.es256()
        try f.enrol(account, key)
        _ = try f.store.deleteAccount(project: f.project.id, localID: account.localID)
        #expect(wireError { try f.signIn(key) } == "PASSKEY_CREDENTIAL_NOT_FOUND")
    }

    // MARK: Second factor

    @Test("skipSecondFactor = false: a user with a factor gets a second-factor challenge (the counter still recorded); without a factor, tokens")
    func secondFactor() throws {
        let f = try F { $0.passkeys.skipSecondFactor = false }
        let (account, _) = try f.user(factor: F.phoneFactor)
        let key = try SoftAuthenticator.es256()
        try f.enrol(account, key, factor: F.phoneFactor)
        guard case let .secondFactor(who, challenge) = try f.signIn(key) else { Issue.record("no second-factor challenge"); return }
        #expect(who.localID == account.localID && challenge.enrollments == [F.phoneFactor])
        #expect(challenge.pendingCredential.hasPrefix(PhoneMFA.pendingPrefix))
        #expect(try f.store.passkey(project: f.project.id, credentialID: key.id)?.signCount == 1)
        #expect(try f.audit(account.localID).filter { $0.event == .passkeySignIn }.isEmpty)
        // The pending credential names the passkey as the first factor.
        let pending = try #require(try f.store.mfaPending(hash: PhoneMFA.hash(pendingCredential: challenge.pendingCredential)))
        #expect(pending.firstFactor == "passkey" && pending.localID == account.localID && pending.consumedAt == nil)
        // Removing the passkey ends the second factor it was leading to.
        _ = try f.passkeys.remove(account: account, proof: f.proof(factor: F.phoneFactor), credentialIDs: [key.id], remoteAddress: F.ip)
        #expect(try f.store.mfaPending(hash: PhoneMFA.hash(pendingCredential: challenge.pendingCredential))?.consumedAt == f.clock.now())

        let (bob, _) = try f.user("bob@example.com")
        let bobs = try SoftAuthenticator.es256(id: 60)
        try f.enrol(bob, bobs)
        guard case .done = try f.signIn(bobs) else { Issue.record("a user without a factor was asked for one"); return }
    }

    @Test("skipSecondFactor = true (the default): a user with a factor signs in with the passkey alone")
    func secondFactorSkipped() throws {
        let f = try F()
        #expect(f.project.passkeys.skipSecondFactor)
        let (account, _) = try f.user(factor: F.phoneFactor)
        let key = try SoftAuthenticator.es256()
        try f.enrol(account, key, factor: F.phoneFactor)
        _ = try f.tokens(of: try f.signIn(key))
    }

    // MARK: Budgets

    @Test("challenges: challengesPerIPPer5Min per client, sign-in and enrolment together; another client and the next window are not affected")
    func challengeBudget() throws {
        let f = try F { $0.passkeys.challengesPerIPPer5Min = 3 }
        let (account, _) = try f.user()
        _ = try f.passkeys.startSignIn(remoteAddress: F.ip)
        _ = try f.passkeys.startEnrolment(account: account, proof: f.proof(), remoteAddress: F.ip)
        _ = try f.passkeys.startSignIn(remoteAddress: F.ip)
        #expect(wireError { try f.passkeys.startSignIn(remoteAddress: F.ip) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(wireError { try f.passkeys.startEnrolment(account: account, proof: f.proof(), remoteAddress: F.ip) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        _ = try f.passkeys.startSignIn(remoteAddress: F.otherIP)
        f.clock.advance(seconds: 300)
        _ = try f.passkeys.startSignIn(remoteAddress: F.ip)
    }

    @Test("failed assertions count against the phone failure budget: once spent, even a good assertion from that client is refused")
    func failureBudget() throws {
        let f = try F { $0.phone.failureBudgetPerDay = 3 }
        let (account, _) = try f.user()
        let key = try SoftAuthenticator.es256()
        try f.enrol(account, key)
        #expect(wireError { try f.signIn(key, { $0.flipSignatureBit = true }) } == Self.refused("the signature does not verify"))
        #expect(wireError { try f.signIn(key, { $0.responseID = "AAAAAAAA"; $0.rawID = "AAAAAAAA" }) } == "PASSKEY_CREDENTIAL_NOT_FOUND")
        #expect(wireError { try f.signIn(key, { $0.userHandle = .some([1, 2, 3]) }) } == Self.refused("userHandle is not the passkey's user"))
        #expect(wireError { try f.signIn(key) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
        // Another client's budget is its own.
        guard case .done = try f.signIn(key, ip: F.otherIP) else { Issue.record("no sign-in"); return }
        // The next day, the first client may try again.
        f.clock.advance(seconds: 86_400)
        guard case .done = try f.signIn(key) else { Issue.record("no sign-in"); return }
    }

    @Test("every finish counts against the per-address verify budget, refused or not")
    func verifyBudget() throws {
        let f = try F {
            $0.phone.verifyAttemptsPerIPPer5Min = 3
            $0.passkeys.challengesPerIPPer5Min = 100
        }
        let (account, _) = try f.user()
        let key = try SoftAuthenticator.es256()
        try f.enrol(account, key, ip: F.otherIP)
        // A challenge that is unknown (refused before any failure is counted) still costs an attempt.
        for _ in 0..<2 {
            #expect(wireError { try f.signIn(key, { $0.challenge = [UInt8](repeating: 7, count: 32) }) } == Self.challengeUsed)
        }
        guard case .done = try f.signIn(key) else { Issue.record("no sign-in"); return }
        #expect(wireError { try f.signIn(key) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
    }

    // MARK: Removal

    @Test("removing a passkey ends every credential of the user, as a factor's removal does; unknown ids remove nothing")
    func removal() throws {
        let f = try F()
        let (account, _) = try f.user()
        let key = try SoftAuthenticator.es256(id: 1), spare = try SoftAuthenticator.es256(id: 40)
        let enrolled = try f.enrol(account, key)
        try f.enrol(account, spare)
        let enrolmentTokens = try #require(enrolled.tokens)
        let byPasskey = try f.tokens(of: try f.signIn(key))
        let bySpare = try f.tokens(of: try f.signIn(spare))
        let byPassword = try SignInTokens(tokens: f.tokens, store: f.store, random: f.random).issue(for: try f.account(account.localID), provider: "password")
        // A passkey sign-in's refresh token once refreshed, and a session cookie made from a passkey ID token.
        let refreshed = try f.refresh.refresh(grantType: "refresh_token", refreshToken: bySpare.refreshToken, project: f.project.id, graceSeconds: 10)
        let sessions = Sessions(store: f.store, tokens: f.tokens, random: f.random)
        let cookie = try sessions.createSessionCookie(idToken: byPasskey.idToken, validDuration: nil, project: f.project.id)
        #expect(try sessions.authorize(cookie: cookie, project: f.project.id, cache: nil).identity?.uid == account.localID)

        #expect(wireError { _ = try f.passkeys.remove(account: account, proof: f.proof(), credentialIDs: [key.id, "unknown"], remoteAddress: F.ip) }
                == "PASSKEY_ENROLLMENT_NOT_FOUND")
        #expect(try f.passkeys.list(localID: account.localID).count == 2)

        f.clock.advance(seconds: 1)
        _ = try f.passkeys.remove(account: account, proof: f.proof(), credentialIDs: [key.id], remoteAddress: F.ip)
        #expect(try f.passkeys.list(localID: account.localID).map(\.credentialID) == [spare.id])
        #expect(f.refreshes(byPasskey.refreshToken) == "TOKEN_EXPIRED")
        #expect(f.refreshes(bySpare.refreshToken) == "TOKEN_EXPIRED")
        #expect(f.refreshes(refreshed.refreshToken) == "TOKEN_EXPIRED")
        guard case .signedOut = try sessions.authorize(cookie: cookie, project: f.project.id, cache: nil) else {
            Issue.record("the passkey session outlived the passkey"); return
        }
        // A passkey stands for a second factor: its removal ends every credential of the user, as a factor's does.
        #expect(f.refreshes(enrolmentTokens.refreshToken) == "TOKEN_EXPIRED")
        #expect(f.refreshes(byPassword.refreshToken) == "TOKEN_EXPIRED")
        #expect(try f.account(account.localID).validSince == f.clock.nowSeconds)
        let events = try f.audit(account.localID)
        #expect(events.contains { $0.event == .passkeyRemove && $0.detail == key.id })
        // Six refresh tokens (two enrolments', two passkey sign-ins' (one refreshed) and its successor, the password's) and the session.
        #expect(events.contains { $0.event == .revoke && $0.detail == "passkey removed: refreshTokens=6 sessions=1" })
        // The removed passkey no longer signs in; the spare does.
        #expect(wireError { try f.signIn(key) } == "PASSKEY_CREDENTIAL_NOT_FOUND")
        _ = try f.tokens(of: try f.signIn(spare))
        // Removal is a sensitive change: a recent sign-in.
        f.clock.advance(seconds: 600)
        #expect(wireError { _ = try f.passkeys.remove(account: account, proof: SignInProof(firstFactor: "password", authTime: 0),
                                                      credentialIDs: [spare.id], remoteAddress: F.ip) }
                == "CREDENTIAL_TOO_OLD_LOGIN_AGAIN : " + SensitiveChange.tooOldDetail)
        // Another user's passkey id is unknown to this one.
        let (bob, _) = try f.user("bob@example.com")
        #expect(wireError { _ = try f.passkeys.remove(account: bob, proof: f.proof(), credentialIDs: [spare.id], remoteAddress: F.ip) }
                == "PASSKEY_ENROLLMENT_NOT_FOUND")
    }
}
