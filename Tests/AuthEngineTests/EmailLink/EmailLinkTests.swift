import AuthCrypto
import JSONValue
import Testing
@testable import AuthEngine

@Suite("Email link: sending")
struct EmailLinkTests {
    @Test("requestType may arrive as its integer index: 6 is EMAIL_SIGNIN, 4 VERIFY_EMAIL")
    func integerRequestTypes() {
        #expect(OobRequestType(index: 6) == .emailSignIn)
        #expect(OobRequestType(index: 4) == .verifyEmail)
        #expect(OobRequestType(index: 0) == .unspecified)
        #expect(OobRequestType(index: 9) == nil)
        #expect(OobRequestType(index: -1) == nil)
    }

    @Test("A missing or unspecified requestType is MISSING_REQ_TYPE")
    func missingRequestType() throws {
        let f = try EmailLinkFixture()
        #expect(authError { try f.send(f.request(nil)) }?.code == .missingReqType)
        #expect(authError { try f.send(f.request(.unspecified)) }?.code == .missingReqType)
    }

    @Test("returnOobLink without admin rights is INSUFFICIENT_PERMISSION")
    func returnOobLinkNeedsAdmin() throws {
        let f = try EmailLinkFixture()
        var r = f.request()
        r.returnOobLink = true
        #expect(authError { try f.send(r) }?.code == .insufficientPermission)
        #expect(try f.outbox().isEmpty)
    }

    @Test("An admin's returnOobLink returns code and link and sends no email")
    func adminGeneratesWithoutSending() throws {
        let f = try EmailLinkFixture()
        var r = f.request()
        r.returnOobLink = true
        r.isAdmin = true
        let res = try f.send(r)
        #expect(!res.emailed)
        #expect(res.oobLink.contains("oobCode=" + res.oobCode))
        #expect(try f.outbox().isEmpty)
        #expect(f.composed.isEmpty)
    }

    @Test("A send queues one email to the address as typed, stores only the code's hash, valid 30 minutes")
    func sendQueuesEmail() throws {
        let f = try EmailLinkFixture()
        let res = try f.send(f.request(email: " Ada@Example.com "))
        #expect(res.email == "ada@example.com")
        let out = try f.outbox()
        #expect(out.count == 1)
        #expect(out[0].recipient == "Ada@Example.com")
        #expect(out[0].body.contains(res.oobLink))
        #expect(out[0].htmlBody?.contains(res.oobLink) == true)
        #expect(out[0].subject?.hasPrefix("Sign in") == true)
        #expect(!out[0].metadata.contains(res.oobCode), "production metadata keeps no secret")
        let rec = try #require(try f.store.emailLink(hash: Digest.sha256(res.oobCode)))
        #expect(rec.codeHash != Array(res.oobCode.utf8))
        #expect(rec.expiresAt - rec.createdAt == 30 * 60 * 1000)
        #expect(rec.lang == "fr")
        #expect(res.oobCode.count == 43)
        #expect(f.composed.first?.lifetimeMinutes == 30)
    }

    @Test("Dev mode puts oobCode, oobLink, requestType and email in the message metadata")
    func devMetadata() throws {
        let f = try EmailLinkFixture(devMode: true)
        let res = try f.send(f.request())
        let meta = try JSONParser().parse(try f.outbox()[0].metadata)
        #expect(meta["oobCode"]?.stringValue == res.oobCode)
        #expect(meta["oobLink"]?.stringValue == res.oobLink)
        #expect(meta["requestType"]?.stringValue == "EMAIL_SIGNIN")
        #expect(meta["email"]?.stringValue == "ada@example.com")
    }

    @Test("The link lifetime follows the project's policy")
    func configurableLifetime() throws {
        let f = try EmailLinkFixture { $0.emailLink.linkLifetimeSeconds = 600 }
        let res = try f.send(f.request())
        #expect(res.record.expiresAt - res.record.createdAt == 600_000)
    }

    @Test("Sending a new link leaves earlier unexpired links usable")
    func newLinkKeepsOldOnes() throws {
        let f = try EmailLinkFixture()
        let first = try f.code()
        let second = try f.code()
        #expect(first != second)
        #expect(try f.flows.signIn(email: "ada@example.com", oobCode: first).account.email == "ada@example.com")
        #expect(try f.flows.signIn(email: "ada@example.com", oobCode: second).isNewUser == false)
    }

    @Test("A missing email is MISSING_EMAIL and a malformed one INVALID_EMAIL")
    func emailValidation() throws {
        let f = try EmailLinkFixture()
        #expect(authError { try f.send(f.request(email: nil)) }?.code == .missingEmail)
        #expect(authError { try f.send(f.request(email: "")) }?.code == .missingEmail)
        for bad in ["ada", "ada@", "@example.com", "ada@example", "a b@example.com", "ada@exa_mple.com", "ada@@example.com", "ada\r\n@x.com"] {
            #expect(authError { try f.send(f.request(email: bad)) }?.code == .invalidEmail, "\(bad)")
        }
    }

    @Test("Email-link sign-in switched off is OPERATION_NOT_ALLOWED")
    func disabled() throws {
        let f = try EmailLinkFixture { $0.emailLink.enabled = false }
        #expect(authError { try f.send(f.request()) }?.code == .operationNotAllowed)
    }

    @Test("PASSWORD_RESET links are refused with PASSWORD_LOGIN_DISABLED; other kinds with OPERATION_NOT_ALLOWED")
    func unsupportedKinds() throws {
        let f = try EmailLinkFixture()
        #expect(authError { try f.send(f.request(.passwordReset)) }?.code == .passwordLoginDisabled)
        #expect(authError { try f.send(f.request(.verifyAndChangeEmail)) }?.code == .operationNotAllowed)
    }

    @Test("The response is the same whether or not an account owns the address")
    func noEnumeration() throws {
        let f = try EmailLinkFixture()
        _ = try f.insertAccount(email: "known@example.com")
        let known = try f.send(f.request(email: "known@example.com"))
        let unknown = try f.send(f.request(email: "unknown@example.com"))
        #expect(known.emailed && unknown.emailed)
        #expect(known.record.localID == nil && unknown.record.localID == nil)
        #expect(try f.outbox().count == 2)
    }

    @Test("Five sends per mailbox per hour, then one per client block (its reserve): strangers cannot spend the owner's link")
    func perAddressLimit() throws {
        let f = try EmailLinkFixture()
        for i in 0..<5 { try f.send(f.request(ip: "198.51.100.\(i)")) }
        // The block that spent the budget has its one reserve link, then no more.
        try f.send(f.request(ip: "198.51.100.9"))
        #expect(authError { try f.send(f.request(ip: "198.51.100.10")) }?.code == .tooManyAttempts)
        #expect(try f.outbox().count == 6)
        // The owner, on a network of their own, still gets a link this hour; once.
        try f.send(f.request(ip: "203.0.113.80"))
        #expect(authError { try f.send(f.request(ip: "203.0.113.81")) }?.code == .tooManyAttempts)
        #expect(try f.outbox().count == 7)
        f.clock.advance(seconds: 3600)
        try f.send(f.request())
    }

    @Test("Sends per IP are limited across addresses")
    func perIPLimit() throws {
        let f = try EmailLinkFixture { $0.emailLink.sendsPerIPPerHour = 3 }
        for i in 0..<3 { try f.send(f.request(email: "u\(i)@example.com")) }
        #expect(authError { try f.send(f.request(email: "u9@example.com")) }?.code == .tooManyAttempts)
        try f.send(f.request(email: "u9@example.com", ip: "192.0.2.77"))
    }

    @Test("Admins are not throttled")
    func adminNotThrottled() throws {
        let f = try EmailLinkFixture()
        for _ in 0..<7 {
            var r = f.request()
            r.isAdmin = true
            try f.send(r)
        }
    }

    @Test("+tag variants of one mailbox share its budget (counted on the canonical mailbox); mail still goes to the address as typed")
    func plusTagsShareTheBudget() throws {
        let f = try EmailLinkFixture()
        for i in 0..<6 { try f.send(f.request(email: "Ada+\(i)@Example.com", ip: "198.51.100.\(i)")) }
        #expect(authError { try f.send(f.request(email: "ada+other@example.com", ip: "198.51.100.9")) }?.code == .tooManyAttempts)
        #expect(authError { try f.send(f.request(email: "ada@example.com", ip: "198.51.100.9")) }?.code == .tooManyAttempts)
        // The owner's block keeps its reserve, whatever variants others used.
        try f.send(f.request(email: "ada@example.com", ip: "203.0.113.80"))
        #expect(try f.outbox().map(\.recipient).first == "Ada+0@Example.com")
        try f.send(f.request(email: "ada-other@example.com", ip: "198.51.100.9"))
        #expect(EmailAddress.mailbox(" Ana+x+y@Example.COM") == "ana@example.com")
        #expect(EmailAddress.mailbox("+tag@example.com") == "+tag@example.com", "an empty mailbox name is left as it is")
    }

    @Test("A sign-in link outside dev mode needs an app token bound to the project, key and app: MISSING_RECAPTCHA_TOKEN, CAPTCHA_CHECK_FAILED")
    func sendNeedsAppVerification() throws {
        let f = try EmailLinkFixture()
        var bare = f.request()
        bare.appToken = nil
        #expect(authError { try f.send(bare) }?.code == .missingRecaptchaToken)
        var forged = f.request()
        forged.appToken = "ghat1.forged"
        #expect(authError { try f.send(forged) }?.code == .captchaCheckFailed)
        var wrongApp = f.request()
        wrongApp.appToken = try f.appToken(app: "com.example.ios")
        #expect(authError { try f.send(wrongApp) }?.code == .captchaCheckFailed)
        let ok = f.request()
        try f.send(ok)
        #expect(authError { try f.send(ok) }?.code == .captchaCheckFailed, "a token is single use")
        #expect(try f.outbox().count == 1)
        // Admins need none; neither does dev mode; a verify-email link is the signed-in user's own.
        var admin = f.request()
        admin.appToken = nil
        admin.isAdmin = true
        try f.send(admin)
        let dev = try EmailLinkFixture(devMode: true)
        var devRequest = dev.request()
        devRequest.appToken = nil
        try dev.send(devRequest)
    }

    @Test("A refused send spends no budget: the mailbox and client counts stay as they were")
    func refusalSpendsNothing() throws {
        let f = try EmailLinkFixture { $0.emailLink.sendsPerIPPerHour = 2 }
        try f.send(f.request(email: "a@example.com"))
        try f.send(f.request(email: "b@example.com"))
        #expect(authError { try f.send(f.request(email: "c@example.com")) }?.code == .tooManyAttempts)
        // c@ was not counted: another client can still send it its five links.
        for i in 0..<5 { try f.send(f.request(email: "c@example.com", ip: "192.0.2.\(100 + i * 10)")) }
    }
}
