import AuthEngine
@testable import AuthWeb
import HTTP
import JSONValue
import Testing

/// The §1.5 envelope byte for byte for one error of each class: clients split `message` at the
/// first colon and some compare `errors[0]`, so member names, order and presence all matter.
@Suite("Error envelopes")
struct ErrorEnvelopeTests {
    static let itk = WebClient.itk

    @Test("a business error: 400, reason invalid, no status")
    func business() throws {
        let r = try WebClient().post(Self.itk + "/accounts:signInWithPhoneNumber", json: "{}")
        #expect(r.status == 400)
        #expect(r.text == #"{"error":{"code":400,"message":"MISSING_SESSION_INFO","errors":[{"message":"MISSING_SESSION_INFO","domain":"global","reason":"invalid"}]}}"#)
        #expect(r.headers.contains { $0 == ("Content-Type", "application/json; charset=utf-8") })
    }

    @Test("a business error with detail keeps CODE : detail in both messages")
    func businessDetail() throws {
        let r = try WebClient().post(Self.itk + "/accounts:sendVerificationCode", json: "{\"phoneNumber\": \"+1 650\"}")
        #expect(r.text == #"{"error":{"code":400,"message":"INVALID_PHONE_NUMBER : TOO_SHORT","errors":[{"message":"INVALID_PHONE_NUMBER : TOO_SHORT","domain":"global","reason":"invalid"}]}}"#)
    }

    @Test("INVALID_ARGUMENT carries its status")
    func invalidArgument() throws {
        let r = try WebClient().post(Self.itk + "/accounts:signInWithPhoneNumber", json: "{\"operation\": \"X\"}")
        #expect(r.status == 400)
        #expect(r.text == #"{"error":{"code":400,"message":"INVALID_ARGUMENT : Invalid value at 'operation' (TYPE_ENUM), \"X\"","errors":[{"message":"INVALID_ARGUMENT : Invalid value at 'operation' (TYPE_ENUM), \"X\"","domain":"global","reason":"invalid"}],"status":"INVALID_ARGUMENT"}}"#)
    }

    @Test("a parse error: 400, reason parseError, status INVALID_ARGUMENT")
    func parseError() throws {
        let r = try WebClient().post(Self.itk + "/accounts:lookup", json: "[]")
        #expect(r.text == #"{"error":{"code":400,"message":"Invalid JSON payload received. Expected a JSON object at the top level.","errors":[{"message":"Invalid JSON payload received. Expected a JSON object at the top level.","domain":"global","reason":"parseError"}],"status":"INVALID_ARGUMENT"}}"#)
    }

    @Test("401, 403, 404, 405 and 501 each with their reason and status")
    func transportClasses() throws {
        let c = try WebClient()
        let unauthenticated = c.post(Self.itk + "/projects/prod/accounts:lookup", json: "{}", key: nil, headers: ["authorization": "Bearer x"])
        #expect(unauthenticated.status == 401)
        #expect(unauthenticated.text == #"{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.","errors":[{"message":"Invalid Credentials","domain":"global","reason":"authError","location":"Authorization","locationType":"header"}],"status":"UNAUTHENTICATED"}}"#)
        let forbidden = c.post(Self.itk + "/accounts:lookup", json: "{}", key: nil)
        #expect(forbidden.status == 403)
        #expect(forbidden.text == #"{"error":{"code":403,"message":"The request is missing a valid API key.","errors":[{"message":"The request is missing a valid API key.","domain":"global","reason":"forbidden"}],"status":"PERMISSION_DENIED"}}"#)
        let notFound = c.request("GET", "/nothing")
        #expect(notFound.status == 404)
        #expect(notFound.text == #"{"error":{"code":404,"message":"Not Found","errors":[{"message":"Not Found","domain":"global","reason":"notFound"}],"status":"NOT_FOUND"}}"#)
        let method = c.request("PATCH", "/__/auth/health")
        #expect(method.status == 405)
        #expect(method.text == #"{"error":{"code":405,"message":"Method PATCH not allowed; use GET","errors":[{"message":"Method PATCH not allowed; use GET","domain":"global","reason":"methodNotAllowed"}],"status":"INVALID_ARGUMENT"}}"#)
        let unimplemented = c.post(Self.itk + "/accounts:createAuthUri", json: "{\"providerId\": \"apple.com\"}")
        #expect(unimplemented.status == 501)
        #expect(unimplemented.text == #"{"error":{"code":501,"message":"NOT_IMPLEMENTED : Sign-in with identity providers is not supported.","errors":[{"message":"NOT_IMPLEMENTED : Sign-in with identity providers is not supported.","domain":"global","reason":"unimplemented"}],"status":"UNIMPLEMENTED"}}"#)
    }

    @Test("the message splits at its first colon into the code clients switch on")
    func clientSplit() throws {
        let c = try WebClient()
        let responses = [
            c.post(Self.itk + "/accounts:sendVerificationCode", json: "{}"),
            c.post(Self.itk + "/accounts:update", json: "{}"),
            c.post(Self.itk + "/accounts:signUp", json: "{\"email\": \"a@example.com\"}"),
        ]
        let codes = responses.map { r in
            (r.errorMessage ?? "").split(separator: ":", maxSplits: 1).first.map { String($0).trimmingSpaces } ?? ""
        }
        #expect(codes == ["INVALID_PHONE_NUMBER", "INVALID_REQ_TYPE", "OPERATION_NOT_ALLOWED"])
    }
}
