import AuthEngine
@testable import AuthWeb
import HTTP
import Testing

/// Input validation of app verification: the proof-of-work challenge and its redemption
/// (`/__/auth/challenge`) and the reCAPTCHA parameter endpoints (firebase-wire.md §2.14, §4.4).
@Suite("App verification API input")
struct AppVerificationAPITests {
    static let badKey = "API key not valid. Please pass a valid API key."

    static func solve(_ c: WebClient, _ json: String) -> Response {
        c.request("POST", "/__/auth/challenge", body: Array(json.utf8), headers: ["content-type": "application/json"])
    }

    @Test("a redemption without a usable payload, or with a malformed one, is refused", arguments: [
        ("{}", "MISSING_APP_CREDENTIAL : Missing proof of work payload."),
        ("{\"payload\": \"\"}", "MISSING_APP_CREDENTIAL : Missing proof of work payload."),
        ("{\"payload\": []}", "MISSING_APP_CREDENTIAL : Missing proof of work payload."),
        ("{\"payload\": null}", "MISSING_APP_CREDENTIAL : Missing proof of work payload."),
        ("{\"payload\": 1e300}", "CAPTCHA_CHECK_FAILED : Proof of work verification failed - MALFORMED"),
        ("{\"payload\": -1e19}", "CAPTCHA_CHECK_FAILED : Proof of work verification failed - MALFORMED"),
        ("{\"payload\": \"eyJ9\"}", "CAPTCHA_CHECK_FAILED : Proof of work verification failed - MALFORMED"),
        ("{\"payload\": \"e30\"}", "CAPTCHA_CHECK_FAILED : Proof of work verification failed - MALFORMED"),
    ])
    func payload(body: String, message: String) throws {
        expectBusinessError(Self.solve(try WebClient(), body), message)
    }

    @Test("the app a token is for must be web or registered", arguments: ["\"com.unknown\"", "1e300", "true"])
    func app(app: String) throws {
        expectInvalidArgument(Self.solve(try WebClient(), "{\"payload\": \"x\", \"app\": \(app)}"),
                              "INVALID_ARGUMENT : app is neither \"web\" nor a registered iOS bundle id or Android package.")
    }

    @Test("the verification page's parameters are checked before the payload is read", arguments: [
        ("{\"eventId\": \"QWERTYUIOP\"}", "ibi or apn is required."),
        ("{\"eventId\": \"QWERTYUIOP\", \"ibi\": \"com.evil.app\", \"appId\": \"1:1:ios:1\"}", "The app is not registered for this project."),
        ("{\"eventId\": \"QWERTYUIOP\", \"ibi\": \"com.example.app\"}", "clientId or appId is required."),
        ("{\"eventId\": \"QWERTYUIOP\", \"apn\": \"com.example.unknown\"}", "The app is not registered for this project."),
        ("{\"eventId\": \"QWERTYUIOP\", \"ibi\": 1e300}", "The app is not registered for this project."),
        ("{\"ibi\": \"com.example.app\", \"appId\": \"1:1:ios:1\"}", "eventId is missing or malformed."),
        ("{\"ibi\": \"com.example.app\", \"eventId\": [], \"appId\": \"1:1:ios:1\"}", "eventId is missing or malformed."),
    ])
    func handlerParameters(body: String, detail: String) throws {
        expectInvalidArgument(Self.solve(try WebClient(), body), "INVALID_ARGUMENT : " + detail)
    }

    @Test("an unknown or oversized API key is refused, in the body or the query", arguments: [
        "\"nope\"", "1e300", "\"" + String(repeating: "k", count: 500) + "\"",
    ])
    func apiKey(key: String) throws {
        let c = try WebClient()
        expectEnvelope(Self.solve(c, "{\"apiKey\": \(key)}"), 400, Self.badKey, reason: "keyInvalid", canonical: "INVALID_ARGUMENT")
    }

    @Test("a redemption reads the API key from the query as a challenge does (an ALTCHA widget's form action may carry it)")
    func apiKeyInQuery() throws {
        let c = try WebClient()
        for query in ["apiKey=nope", "key=nope"] {
            let r = c.request("POST", "/__/auth/challenge", query: query, body: Array(#"{"payload":"x"}"#.utf8),
                              headers: ["content-type": "application/json"])
            expectEnvelope(r, 400, Self.badKey, reason: "keyInvalid", canonical: "INVALID_ARGUMENT")
        }
        let known = c.request("POST", "/__/auth/challenge", query: "apiKey=key-prod", body: Array(#"{"payload":"e30"}"#.utf8),
                              headers: ["content-type": "application/json"])
        expectBusinessError(known, "CAPTCHA_CHECK_FAILED : Proof of work verification failed - MALFORMED")
    }

    @Test("a challenge is issued with no key or a project's key, and refused for an unknown one")
    func challenge() throws {
        let c = try WebClient()
        for query in ["", "apiKey=key-prod", "key=key-prod", "apiKey="] {
            let r = c.request("GET", "/__/auth/challenge", query: query)
            #expect(r.status == 200, "\(query)")
            #expect(r.json?["algorithm"]?.stringValue == "SHA-256")
            #expect(r.headers.contains { $0 == ("Cache-Control", "no-store") })
        }
        for query in ["apiKey=nope", "key=nope", "apiKey=" + String(repeating: "k", count: 201)] {
            expectEnvelope(c.request("GET", "/__/auth/challenge", query: query), 400, Self.badKey, reason: "keyInvalid",
                           canonical: "INVALID_ARGUMENT")
        }
    }

    @Test("the reCAPTCHA endpoints answer off for the proof of work")
    func recaptchaEndpoints() throws {
        let c = try WebClient()
        let params = c.request("GET", WebClient.itk + "/recaptchaParams", query: "key=key-prod")
        // Fixed placeholders, as the Firebase emulator answers, so clients that read them find them.
        #expect(params.text == "{\"kind\":\"identitytoolkit#GetRecaptchaParamResponse\",\"recaptchaSiteKey\":\"gatehouse-no-recaptcha-site-key\","
                + "\"recaptchaStoken\":\"gatehouse-no-recaptcha-stoken\"}")
        let config = c.request("GET", "/identitytoolkit.googleapis.com/v2/recaptchaConfig", query: "key=key-prod")
        #expect(config.status == 200)
        // A key in the four parts iOS splits, naming what it is (the web SDK keeps a config only with one).
        #expect(config.json?["recaptchaKey"]?.stringValue == "projects/prod/keys/gatehouse-proof-of-work")
        #expect(config.json?["recaptchaEnforcementState"]?.arrayValue?.allSatisfy { $0["enforcementState"]?.stringValue == "OFF" } == true)
    }
}
