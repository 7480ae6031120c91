import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// Input validation of `accounts:sendVerificationCode` and `accounts:signInWithPhoneNumber`
/// (firebase-wire.md §2.1, §2.2): every malformed request gets its wire error, never a crash.
@Suite("Phone API input")
struct PhoneAPITests {
    static let send = WebClient.itk + "/accounts:sendVerificationCode"
    static let signIn = WebClient.itk + "/accounts:signInWithPhoneNumber"

    /// JSON values that are not a usable string: numbers (converted to text, so never a valid
    /// number), containers, null and booleans (dropped or converted, so treated as missing).
    static let wrongTypes = ["1e300", "-1e19", "0", "[]", "[\"+15555550100\"]", "{}", "null", "true"]

    @Test("a missing or unusable phone number is INVALID_PHONE_NUMBER : Invalid format.", arguments: ["{}", "{\"phoneNumber\": \"\"}"]
        + wrongTypes.map { "{\"phoneNumber\": \($0)}" })
    func sendBadNumber(body: String) throws {
        expectBusinessError(try WebClient().post(Self.send, json: body), "INVALID_PHONE_NUMBER : Invalid format.")
    }

    @Test("a number libphonenumber rejects names why")
    func sendRejectedNumbers() throws {
        let c = try WebClient()
        expectBusinessError(c.post(Self.send, json: "{\"phoneNumber\": \"hello\"}"), "INVALID_PHONE_NUMBER : Invalid format.")
        expectBusinessError(c.post(Self.send, json: "{\"phoneNumber\": \"0612345678\"}"), "INVALID_PHONE_NUMBER : Invalid format.")
        expectBusinessError(c.post(Self.send, json: "{\"phoneNumber\": \"+1 650\"}"), "INVALID_PHONE_NUMBER : TOO_SHORT")
        expectBusinessError(c.post(Self.send, json: "{\"phoneNumber\": \"+33 6 12 34 56 78 90 12 34\"}"), "INVALID_PHONE_NUMBER : TOO_LONG")
    }

    @Test("a real number in production needs an app token (MISSING_CLIENT_IDENTIFIER); a test number does not")
    func sendNeedsAppToken() throws {
        let c = try WebClient()
        expectBusinessError(c.post(Self.send, json: "{\"phoneNumber\": \"+33612345678\"}"), "MISSING_CLIENT_IDENTIFIER")
        expectBusinessError(c.post(Self.send, json: "{\"phoneNumber\": \"+33612345678\", \"recaptchaToken\": 1e300}"),
                            "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - MALFORMED")
        let ok = c.post(Self.send, json: "{\"phone_number\": \"+1 555-555-0100\"}")
        #expect(ok.status == 200)
        #expect(ok.json?["sessionInfo"]?.stringValue?.isEmpty == false)
    }

    @Test("a tenant is refused before anything else is read")
    func sendTenant() throws {
        let c = try WebClient()
        expectBusinessError(c.post(Self.send, json: "{\"tenantId\": \"t1\"}"), "UNSUPPORTED_TENANT_OPERATION : Phone sign-in is not available for tenant t1.")
        // The tenant's name is cut in the message.
        let long = String(repeating: "t", count: 200)
        expectBusinessError(c.post(Self.send, json: "{\"tenantId\": \"\(long)\"}"),
                            "UNSUPPORTED_TENANT_OPERATION : Phone sign-in is not available for tenant \(long.prefix(64)).")
    }

    @Test("sign-in without a session is MISSING_SESSION_INFO", arguments: ["{}", "{\"sessionInfo\": \"\"}", "{\"code\": \"123456\"}"]
        + ["[]", "{}", "null"].map { "{\"sessionInfo\": \($0), \"code\": \"123456\"}" })
    func signInMissingSession(body: String) throws {
        expectBusinessError(try WebClient().post(Self.signIn, json: body), "MISSING_SESSION_INFO")
    }

    @Test("a session that is a number, a boolean or unknown text is INVALID_SESSION_INFO",
          arguments: ["1e300", "-1e19", "7", "true", "\"ghs1.nope\"", "\"\\u0000\""])
    func signInInvalidSession(session: String) throws {
        expectBusinessError(try WebClient().post(Self.signIn, json: "{\"sessionInfo\": \(session), \"code\": \"123456\"}"), "INVALID_SESSION_INFO")
    }

    @Test("a real session without a usable code is MISSING_CODE; a wrong one INVALID_CODE")
    func signInCode() throws {
        let c = try WebClient()
        let session = try #require(c.post(Self.send, json: "{\"phoneNumber\": \"+15555550100\"}").json?["sessionInfo"]?.stringValue)
        for code in ["null", "[]", "{}", "\"\""] {
            expectBusinessError(c.post(Self.signIn, json: "{\"sessionInfo\": \"\(session)\", \"code\": \(code)}"), "MISSING_CODE")
        }
        for code in ["1e300", "-1e19", "\"12\"", "\"654321\""] {
            expectBusinessError(c.post(Self.signIn, json: "{\"sessionInfo\": \"\(session)\", \"code\": \(code)}"), "INVALID_CODE")
        }
        // The right code as a JSON number is the code (§1.3: numbers for string fields).
        let ok = c.post(Self.signIn, json: "{\"sessionInfo\": \"\(session)\", \"code\": 123456}")
        #expect(ok.status == 200, "\(ok.text)")
        #expect(ok.json?["phoneNumber"]?.stringValue == "+15555550100")
    }

    @Test("an operation outside the enum is INVALID_ARGUMENT naming it")
    func signInOperation() throws {
        let c = try WebClient()
        expectInvalidArgument(c.post(Self.signIn, json: "{\"operation\": \"DANCE\"}"), "INVALID_ARGUMENT : Invalid value at 'operation' (TYPE_ENUM), \"DANCE\"")
        expectInvalidArgument(c.post(Self.signIn, json: "{\"operation\": 1e300}"), "INVALID_ARGUMENT : Invalid value at 'operation' (TYPE_ENUM), \"1e+300\"")
    }

    @Test("a temporary proof needs its number, and must be real")
    func signInTemporaryProof() throws {
        let c = try WebClient()
        expectBusinessError(c.post(Self.signIn, json: "{\"temporaryProof\": \"p\"}"), "MISSING_PHONE_NUMBER")
        expectBusinessError(c.post(Self.signIn, json: "{\"temporaryProof\": \"p\", \"phoneNumber\": \"+15555550100\"}"), "INVALID_TEMPORARY_PROOF")
        expectBusinessError(c.post(Self.signIn, json: "{\"temporaryProof\": [], \"phoneNumber\": \"+15555550100\"}"), "MISSING_SESSION_INFO")
    }

    @Test("the legacy v3 paths validate the same way")
    func legacyPaths() throws {
        let c = try WebClient()
        let legacy = "/www.googleapis.com/identitytoolkit/v3/relyingparty"
        expectBusinessError(c.post(legacy + "/sendVerificationCode", json: "{}"), "INVALID_PHONE_NUMBER : Invalid format.")
        expectBusinessError(c.post(legacy + "/verifyPhoneNumber", json: "{}"), "MISSING_SESSION_INFO")
    }
}
