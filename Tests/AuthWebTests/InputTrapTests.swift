import AuthEngine
import HTTP
import JSONValue
import Testing

/// Inputs that used to end the process. Each request must get an answer in the contract's
/// envelope; a trap would end the test run itself.
@Suite("No input ends the process")
struct InputTrapTests {
    @Test("a JSON number beyond Int64 in a string field is an ordinary bad value", arguments: [
        "1e300", "-1e19", "9223372036854775808", "-9223372036854775809", "1.5e19", "123456789012345678901234567890",
    ])
    func hugeNumberInStringField(number: String) throws {
        let client = try WebClient()
        let r = client.post(WebClient.itk + "/accounts:sendVerificationCode", json: #"{"phoneNumber":\#(number)}"#)
        #expect(r.status == 400)
        #expect(r.errorMessage?.hasPrefix("INVALID_PHONE_NUMBER") == true, "\(r.text)")
    }

    @Test("the challenge endpoint (no API key needed) takes any number as `app`", arguments: ["-1e19", "1e300", "12"])
    func hugeNumberAsApp(number: String) throws {
        let client = try WebClient()
        let r = client.post("/__/auth/challenge", json: #"{"app":\#(number),"payload":"x"}"#, key: nil)
        #expect(r.status == 400)
        #expect(r.errorMessage?.hasPrefix("INVALID_ARGUMENT") == true, "\(r.text)")
    }

    @Test("huge numbers in every string field of the phone and email endpoints answer in the envelope")
    func hugeNumbersEverywhere() throws {
        let client = try WebClient()
        let fields = ["phoneNumber", "recaptchaToken", "sessionInfo", "code", "temporaryProof", "idToken", "operation", "email",
                      "requestType", "continueUrl", "oobCode", "tenantId", "returnOobLink", "canHandleCodeInApp"]
        for path in ["accounts:sendVerificationCode", "accounts:signInWithPhoneNumber", "accounts:sendOobCode",
                     "accounts:signInWithEmailLink", "accounts:createAuthUri", "accounts:lookup", "accounts:update"] {
            for value in ["1e300", "-1e300", "1e19"] {
                let body = "{" + fields.map { #""\#($0)":\#(value)"# }.joined(separator: ",") + "}"
                let r = client.post(WebClient.itk + "/" + path, json: body)
                #expect((400..<500).contains(r.status), "\(path): \(r.status) \(r.text)")
            }
        }
    }
}
