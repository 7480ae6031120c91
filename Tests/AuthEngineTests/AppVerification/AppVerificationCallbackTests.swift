import AuthCrypto
import AuthStore
import Foundation
import JSONValue
import Testing
@testable import AuthEngine
import TestSupport

/// The verification page's redirect (firebase-wire.md §4.4) and external verifiers.
@Suite("AppVerification callback and external verifiers")
struct AppVerificationCallbackTests {
    static let demoScheme = "app-1-123456789-ios-abcdef0123456789"

    var project: ProjectSettings = {
        var p = ProjectSettings.devDefault()
        p.iosApps.append(IOSApp(bundleID: "com.example.client", teamID: "TEAM000001", clientID: "123-abc.apps.googleusercontent.com"))
        p.androidApps = [AndroidApp(packageName: "com.example.android"),
                         AndroidApp(packageName: "com.example.schemed", extraSchemes: ["gatehouse-demo"])]
        return p
    }()

    /// The iOS SDK's `dictionary(withHttpArgumentsString:)`: split on `&`, `+` → space, percent-decode.
    static func iosArguments(_ query: String?) -> [String: String] {
        var out: [String: String] = [:]
        for part in (query ?? "").components(separatedBy: "&").reversed() where !part.isEmpty {
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            out[kv[0]] = kv.count > 1 ? kv[1] : ""
        }
        return out
    }

    /// What the iOS SDK does with the redirect (AuthWebUtils.isExpectedCallbackURL and
    /// PhoneAuthProvider.reCAPTCHAToken): returns the inner query, or nil when it would ignore it.
    static func iosParse(_ url: String, scheme: String, eventID: String) -> (match: [String: String], items: [String: String])? {
        guard let components = URLComponents(string: url) else { return nil }
        var stripped = components
        stripped.query = nil
        stripped.fragment = nil
        var expected = URLComponents()
        expected.scheme = scheme
        expected.host = "firebaseauth"
        expected.path = "/link"
        guard stripped.url == expected.url else { return nil }
        guard let deep = iosArguments(components.percentEncodedQuery)["deep_link_id"], let inner = URL(string: deep) else { return nil }
        let match = iosArguments(inner.query)
        guard match["authType"] == "verifyApp", match["eventId"] == eventID else { return nil }
        // reCAPTCHAToken(forURL:): URLComponents query items, twice.
        guard let deepItem = components.queryItems?.first(where: { $0.name == "deep_link_id" })?.value,
              let innerItems = URLComponents(string: deepItem)?.queryItems else { return nil }
        var items: [String: String] = [:]
        for i in innerItems where items[i.name] == nil { items[i.name] = i.value ?? "" }
        return (match, items)
    }

    @Test("An iOS app-id callback carries the token where the iOS SDK looks for it")
    func iosSuccessURL() throws {
        let cb = try AppCallback.resolve(project: project, ibi: "com.example.gatehouse.demo", apn: nil, clientID: nil,
                                         appID: "1:123456789:ios:abcdef0123456789", eventID: "ABCDEFGHIJ")
        #expect(cb.destination == .scheme(Self.demoScheme))
        #expect(cb.app == "com.example.gatehouse.demo")
        let url = cb.successURL(authority: "auth.example.com", token: "ghat1.abc-_DEF")
        #expect(url.hasPrefix(Self.demoScheme + "://firebaseauth/link?deep_link_id=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Fcallback%3F"))
        let parsed = try #require(Self.iosParse(url, scheme: Self.demoScheme, eventID: "ABCDEFGHIJ"))
        #expect(parsed.items["recaptchaToken"] == "ghat1.abc-_DEF")
        #expect(parsed.items["authType"] == "verifyApp")
        #expect(Self.iosParse(url, scheme: Self.demoScheme, eventID: "OTHEREVENT") == nil)
        #expect(Self.iosParse(url, scheme: "app-1-other", eventID: "ABCDEFGHIJ") == nil)
    }

    @Test("A failure callback carries firebaseError JSON the iOS SDK decodes, spaces and all")
    func iosFailureURL() throws {
        let cb = try AppCallback.resolve(project: project, ibi: "com.example.client", apn: nil,
                                         clientID: "123-abc.apps.googleusercontent.com", appID: nil, eventID: "QWERTYUIOP")
        #expect(cb.destination == .scheme("com.googleusercontent.apps.123-abc"))
        let url = cb.failureURL(authority: "127.0.0.1:8443", code: "auth/captcha-check-failed", message: "Verification failed & stopped: 50% + more")
        let parsed = try #require(Self.iosParse(url, scheme: "com.googleusercontent.apps.123-abc", eventID: "QWERTYUIOP"))
        #expect(parsed.items["recaptchaToken"] == nil)
        let error = try #require(parsed.items["firebaseError"])
        let dict = try #require(JSONSerialization.jsonObject(with: Data(error.utf8)) as? [String: String])
        #expect(dict == ["code": "auth/captcha-check-failed", "message": "Verification failed & stopped: 50% + more"])
    }

    @Test("Unknown bundles, unregistered schemes, bad event ids and missing identifiers are refused")
    func refusals() {
        func problem(_ ibi: String?, _ apn: String?, _ clientID: String?, _ appID: String?, _ event: String?) -> AppCallback.Problem? {
            do {
                _ = try AppCallback.resolve(project: project, ibi: ibi, apn: apn, clientID: clientID, appID: appID, eventID: event)
                return nil
            } catch { return error }
        }
        let demo = "com.example.gatehouse.demo", demoApp = "1:123456789:ios:abcdef0123456789"
        #expect(problem("com.evil.app", nil, nil, demoApp, "EVENTIDXYZ") == .unknownApp)
        #expect(problem(demo, nil, nil, "1:123456789:ios:ffffffffffff", "EVENTIDXYZ") == .unregisteredScheme)
        #expect(problem(demo, nil, "999.apps.googleusercontent.com", nil, "EVENTIDXYZ") == .unregisteredScheme)
        #expect(problem(demo, nil, nil, nil, "EVENTIDXYZ") == .missingClientIdentifier)
        #expect(problem(demo, nil, nil, demoApp, nil) == .invalidEventID)
        #expect(problem(demo, nil, nil, demoApp, "A&B=C") == .invalidEventID)
        #expect(problem(demo, nil, nil, demoApp, String(repeating: "A", count: 65)) == .invalidEventID)
        #expect(problem(nil, nil, nil, demoApp, "EVENTIDXYZ") == .missingApp)
        #expect(problem(nil, "com.unknown", nil, nil, "EVENTIDXYZ") == .unknownApp)
        #expect(problem(nil, "com.example.android", nil, demoApp, "EVENTIDXYZ") == .unregisteredScheme)
        // The demo app's scheme, registered for the demo bundle, is not valid for another bundle.
        #expect(problem("com.example.client", nil, nil, demoApp, "EVENTIDXYZ") == .unregisteredScheme)
    }

    @Test("Android: an intent:// URL to the SDK's reCAPTCHA activity, or a registered scheme")
    func android() throws {
        let cb = try AppCallback.resolve(project: project, ibi: nil, apn: "com.example.android", clientID: nil, appID: nil, eventID: "EV1")
        let url = cb.successURL(authority: "auth.example.com", token: "ghat1.xyz")
        #expect(url == "intent://firebase.auth/#Intent;scheme=recaptcha;package=com.example.android;S.authType=verifyApp;S.eventId=EV1;"
            + "S.link=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Fcallback%3FauthType%3DverifyApp%26recaptchaToken%3Dghat1.xyz%26eventId%3DEV1;"
            + "B.encryptionEnabled=false;end;")
        let schemed = try AppCallback.resolve(project: project, ibi: nil, apn: "com.example.schemed", clientID: nil, appID: nil, eventID: "EV2")
        #expect(schemed.destination == .androidIntent(package: "com.example.schemed"))
        var p = project
        p.androidApps[1].appID = "1:1:android:ab"
        let byApp = try AppCallback.resolve(project: p, ibi: nil, apn: "com.example.schemed", clientID: nil, appID: "1:1:android:ab", eventID: "EV3")
        #expect(byApp.destination == .scheme("app-1-1-android-ab"))
    }
}

/// A scripted `siteverify`.
struct FakeVerifier: ExternalVerifying {
    var verdict: ExternalVerdict?
    func siteverify(url: String, secret: String, response: String, remoteAddress: String?, siteKey: String?) throws -> ExternalVerdict {
        guard let verdict else { throw PortError("fake", "connection refused") }
        #expect(secret == "s3cret")
        return verdict
    }
}

@Suite("AppVerification external verifiers")
struct ExternalVerifierTests {
    let store: SQLStore
    let clock = FixedClock()
    let flow: AppVerification
    var project = ProjectSettings.devDefault()

    init() throws {
        store = try makeStore()
        flow = AppVerification(store: store, clock: clock, random: SeededRandom())
        project.appVerification.provider = .turnstile
        project.appVerification.siteKey = "site"
        project.appVerification.secret = "s3cret"
    }

    func redeem(_ response: String, _ verdict: ExternalVerdict?) throws -> String {
        try flow.redeemExternal(response: response, project: project, apiKey: "k", app: "web", remoteAddress: "192.0.2.1",
                                expectedHostname: "auth.example.com", verifier: FakeVerifier(verdict: verdict))
    }

    @Test("A successful siteverify mints a token; the same response is not redeemed twice")
    func success() throws {
        let token = try redeem("resp-1", ExternalVerdict(success: true, hostname: "auth.example.com"))
        #expect(token.hasPrefix(AppTokens.prefix))
        #expect(throws: AuthError(.captchaCheckFailed, "External verification failed - REPLAYED")) {
            _ = try redeem("resp-1", ExternalVerdict(success: true, hostname: "auth.example.com"))
        }
    }

    @Test("Refusals, low scores, foreign hostnames and outages mint nothing")
    func refusals() throws {
        #expect(throws: AuthError(.captchaCheckFailed, "External verification failed - TIMEOUT_OR_DUPLICATE")) {
            _ = try redeem("r2", ExternalVerdict(success: false, errorCodes: ["timeout-or-duplicate"]))
        }
        #expect(throws: AuthError(.captchaCheckFailed, "External verification failed - LOW_SCORE")) {
            _ = try redeem("r3", ExternalVerdict(success: true, score: 0.1))
        }
        #expect(throws: AuthError(.captchaCheckFailed, "External verification failed - HOSTNAME")) {
            _ = try redeem("r4", ExternalVerdict(success: true, hostname: "evil.example"))
        }
        #expect(throws: AuthError.self) { _ = try redeem("r5", nil) }
        #expect(throws: AuthError(.missingAppCredential, "Missing verifier response.")) { _ = try redeem("", nil) }
        #expect(try store.db.first("SELECT COUNT(*) FROM app_tokens") { $0.int(0) } == 0)
        // The proof of work is off while an external verifier is configured.
        #expect(throws: AuthError.self) { _ = try flow.issueChallenge(project: project, apiKey: nil, remoteAddress: "192.0.2.1") }
    }
}
