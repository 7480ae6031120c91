import Testing
@testable import AuthEngine

@Suite("Email link: continue URLs, app links and link shapes")
struct EmailLinkSettingsTests {
    @Test("A malformed continueUrl is INVALID_CONTINUE_URI")
    func malformedContinueURL() throws {
        let f = try EmailLinkFixture()
        for bad in ["app.example.com/x", "/relative", "javascript:alert(1)", "https://", "https://user@app.example.com/",
                    "https://app.example.com:port/", "https://app example.com/", "1http://app.example.com/"] {
            let e = authError { try f.send(f.request { $0.continueURL = bad }) }
            #expect(e?.code == .invalidContinueURI, "\(bad)")
        }
    }

    @Test("A continueUrl host outside the authorized domains is UNAUTHORIZED_DOMAIN : Domain not allowlisted by project")
    func unauthorizedDomain() throws {
        let f = try EmailLinkFixture()
        let e = authError { try f.send(f.request { $0.continueURL = "https://evil.example.net/x" }) }
        #expect(e?.message == "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project")
        #expect(authError { try f.send(f.request { $0.continueURL = "https://example.org.evil.net/" }) }?.code == .unauthorizedDomain)
        try f.send(f.request { $0.continueURL = "https://APP.example.com:8443/done?x=1" })
        try f.send(f.request { $0.continueURL = "https://shop.example.org/done" })
    }

    @Test("Custom schemes are accepted only when a registered app owns them")
    func customSchemes() throws {
        let f = try EmailLinkFixture()
        try f.send(f.request { $0.continueURL = "app-1-42-ios-abc://done" })
        try f.send(f.request { $0.continueURL = "exampleapp://signin/done" })
        #expect(authError { try f.send(f.request { $0.continueURL = "otherapp://done" }) }?.code == .unauthorizedDomain)
        #expect(authError { try f.send(f.request { $0.continueURL = "data://text/html,x" }) }?.code == .unauthorizedDomain)
    }

    @Test("canHandleCodeInApp without a continueUrl is MISSING_CONTINUE_URI")
    func inAppNeedsContinueURL() throws {
        let f = try EmailLinkFixture()
        #expect(authError { try f.send(f.request { $0.canHandleCodeInApp = true }) }?.code == .missingContinueURI)
    }

    @Test("An App Store id without a bundle id is MISSING_IOS_BUNDLE_ID; an Android install request without a package MISSING_ANDROID_PACKAGE_NAME")
    func appFieldDependencies() throws {
        let f = try EmailLinkFixture()
        #expect(authError { try f.send(f.request { $0.iosAppStoreID = "123" }) }?.code == .missingIOSBundleID)
        #expect(authError { try f.send(f.request { $0.androidInstallApp = true }) }?.code == .missingAndroidPackageName)
        #expect(authError { try f.send(f.request { $0.androidMinimumVersion = "12" }) }?.code == .missingAndroidPackageName)
        try f.send(f.request {
            $0.continueURL = "https://app.example.com/done"
            $0.androidPackageName = "com.example.android"; $0.androidInstallApp = true; $0.androidMinimumVersion = "12"
            $0.iosBundleID = "com.example.ios"; $0.iosAppStoreID = "123"
        })
    }

    @Test("A browser link is the action URL: apiKey, mode, oobCode, continueUrl and the email's lang")
    func actionLinkShape() throws {
        let f = try EmailLinkFixture()
        let res = try f.send(f.request { $0.continueURL = "https://app.example.com/done?a=1&b=2" })
        #expect(res.oobLink == "https://auth.example.com/__/auth/action?apiKey=key-1&mode=signIn&oobCode=\(res.oobCode)"
                + "&continueUrl=https%3A%2F%2Fapp.example.com%2Fdone%3Fa%3D1%26b%3D2&lang=fr")
    }

    @Test("An app link wraps the action URL once; decoded once, mode=signIn and oobCode are &-separated pairs")
    func wrappedLinkShape() throws {
        let f = try EmailLinkFixture()
        let res = try f.send(f.request {
            $0.continueURL = "https://app.example.com/done"; $0.canHandleCodeInApp = true; $0.iosBundleID = "com.example.ios"
        })
        #expect(res.oobLink.hasPrefix("https://auth.example.com/__/auth/links?link=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Faction%3F"))
        let query = percentDecoded(String(res.oobLink.split(separator: "?", maxSplits: 1)[1]))
        let pairs = query.split(separator: "&").map(String.init)
        #expect(pairs.contains("mode=signIn"))
        #expect(pairs.contains("oobCode=" + res.oobCode))
        #expect(pairs.contains("lang=fr"))
        #expect(!res.oobCode.contains("&") && !res.oobCode.contains("=") && !res.oobCode.contains("%"))
    }

    @Test("canHandleCodeInApp with no app gives the bare action URL; false with an app too")
    func noWrapperWithoutApp() throws {
        let f = try EmailLinkFixture()
        let inApp = try f.send(f.request { $0.continueURL = "https://app.example.com/done"; $0.canHandleCodeInApp = true })
        #expect(inApp.oobLink.hasPrefix("https://auth.example.com/__/auth/action?"))
        #expect(inApp.record.canHandleCodeInApp)
        let hosted = try f.send(f.request { $0.continueURL = "https://app.example.com/done"; $0.iosBundleID = "com.example.ios" })
        #expect(hosted.oobLink.hasPrefix("https://auth.example.com/__/auth/action?"))
        #expect(!hosted.record.canHandleCodeInApp)
    }

    @Test("linkDomain picks the wrapper's host when it is authorized; otherwise INVALID_HOSTING_LINK_DOMAIN")
    func linkDomain() throws {
        let f = try EmailLinkFixture()
        let res = try f.send(f.request {
            $0.continueURL = "https://app.example.com/done"; $0.canHandleCodeInApp = true
            $0.androidPackageName = "com.example.android"; $0.linkDomain = "links.example.org"
        })
        #expect(res.oobLink.hasPrefix("https://links.example.org/__/auth/links?link=https%3A%2F%2Fauth.example.com"))
        #expect(authError { try f.send(f.request { $0.linkDomain = "evil.example.net" }) }?.code == .invalidHostingLinkDomain)
        #expect(authError { try f.send(f.request { $0.linkDomain = "https://app.example.com/" }) }?.code == .invalidHostingLinkDomain)
        #expect(authError { try f.send(f.request { $0.dynamicLinkDomain = "x.page.link" }) }?.code == .invalidDynamicLinkDomain)
        let dyn = try f.send(f.request {
            $0.continueURL = "https://app.example.com/done"; $0.canHandleCodeInApp = true
            $0.iosBundleID = "com.example.ios"; $0.dynamicLinkDomain = "app.example.com"
        })
        #expect(dyn.oobLink.hasPrefix("https://app.example.com/__/auth/links?link="))
    }

    @Test("VERIFY_EMAIL takes the user from the idToken and records it")
    func verifyEmailFromIDToken() throws {
        let f = try EmailLinkFixture()
        let a = try f.insertAccount(email: "bob@example.com", verified: false)
        var r = f.request(.verifyEmail, email: "ignored@example.com")
        r.idToken = try f.idToken(for: a)
        let res = try f.send(r)
        #expect(res.email == "bob@example.com")
        #expect(res.record.localID == a.localID)
        #expect(res.oobLink.contains("mode=verifyEmail"))
        #expect(try f.outbox().first?.recipient == "bob@example.com")
    }

    @Test("VERIFY_EMAIL without idToken is INVALID_ID_TOKEN; for an account without email MISSING_EMAIL")
    func verifyEmailErrors() throws {
        let f = try EmailLinkFixture()
        #expect(authError { try f.send(f.request(.verifyEmail)) }?.code == .invalidIDToken)
        var bad = f.request(.verifyEmail)
        bad.idToken = "not-a-token"
        #expect(authError { try f.send(bad) }?.code == .invalidIDToken)
        let phoneOnly = try f.insertAccount(email: nil, phone: "+15555550100")
        var r = f.request(.verifyEmail)
        r.idToken = try f.idToken(for: phoneOnly)
        #expect(authError { try f.send(r) }?.code == .missingEmail)
    }

    @Test("Admin VERIFY_EMAIL with returnOobLink finds the user by email, else USER_NOT_FOUND")
    func adminVerifyEmail() throws {
        let f = try EmailLinkFixture()
        let a = try f.insertAccount(email: "carol@example.com", verified: false)
        var r = f.request(.verifyEmail, email: "Carol@example.com")
        r.isAdmin = true; r.returnOobLink = true
        #expect(try f.send(r).record.localID == a.localID)
        r.email = "nobody@example.com"
        #expect(authError { try f.send(r) }?.code == .userNotFound)
        r.email = nil
        #expect(authError { try f.send(r) }?.code == .missingEmail)
    }
}
