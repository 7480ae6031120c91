import HTTP
@testable import AuthWeb
import JSONValue
import Testing

@Suite("Error envelope")
struct EnvelopeTests {
    @Test("the envelope has code, message, errors[0] and the optional status, in that order")
    func envelope() {
        let r = ErrorEnvelope.response(code: 400, message: "INVALID_CODE")
        #expect(r.status == 400)
        #expect(String(decoding: r.body, as: UTF8.self) ==
                #"{"error":{"code":400,"message":"INVALID_CODE","errors":[{"message":"INVALID_CODE","domain":"global","reason":"invalid"}]}}"#)
        let s = ErrorEnvelope.json(code: 404, message: "Not Found", reason: "notFound", status: "NOT_FOUND")
        #expect(s["error"]?["status"]?.stringValue == "NOT_FOUND")
    }
}

@Suite("Body limit")
struct BodyLimitTests {
    @Test("a JSON body past listen.max_body_bytes is 413 in the envelope, not invalid JSON")
    func oversizeJSON() throws {
        let web = try WebClient()
        let limit = web.app.settings.maxBodyBytes
        let padding = String(repeating: "a", count: limit)
        let r = web.post(WebClient.itk + "/accounts:sendVerificationCode", json: #"{"phoneNumber":"+15555550100","x":""# + padding + #""}"#)
        #expect(r.status == 413)
        #expect(r.errorMessage == "PAYLOAD_TOO_LARGE : Request body larger than \(limit) bytes")
        #expect(r.json?["error"]?["status"]?.stringValue == "INVALID_ARGUMENT")
    }

    @Test("the transport and the web layer render the same 413")
    func sameRendering() {
        let r = WebApp.payloadTooLarge(limit: 10)
        #expect(r.status == 413)
        #expect(String(decoding: r.body, as: UTF8.self) == #"{"error":{"code":413,"message":"PAYLOAD_TOO_LARGE : Request body larger than 10 bytes","errors":[{"message":"PAYLOAD_TOO_LARGE : Request body larger than 10 bytes","domain":"global","reason":"invalid"}],"status":"INVALID_ARGUMENT"}}"#)
    }
}
