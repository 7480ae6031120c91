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

    static let admin = ["content-type": "application/json", "authorization": "Bearer admin-secret"]
    static let importPath = WebClient.itk + "/projects/prod/accounts:batchCreate"

    /// `count` import rows of about 200 bytes each, as a `batchCreate` body.
    static func importBody(_ count: Int) -> String {
        let rows = (0..<count).map { i in
            let n = String(1_000_000 + i).dropFirst()
            return #"{"localId":"imported-\#(n)","email":"user\#(n)@example.com","emailVerified":true,"displayName":"Imported user \#(n) of the old project","photoUrl":"https://img.example.com/\#(n).png","customAttributes":"{\"plan\":\"pro\"}","createdAt":"1690000000000"}"#
        }
        return #"{"users":["# + rows.joined(separator: ",") + "]}"
    }

    @Test("a 1,000-row import of ~200 KB is read under the import's own limit; the same body elsewhere is still 413")
    func importLimit() throws {
        let web = try WebClient()
        let body = Self.importBody(1000)
        #expect(body.utf8.count > 190_000 && body.utf8.count < web.app.settings.maxImportBodyBytes)
        let r = web.request("POST", Self.importPath, body: Array(body.utf8), headers: Self.admin)
        #expect(r.status == 200, "\(r.text.prefix(300))")
        #expect(r.json?["error"] == .array([]), "no row failed")
        #expect(try web.store.account(project: "prod", localID: "imported-000999")?.email == "user000999@example.com")
        // Every other route keeps the one default limit, admin routes included.
        let limit = web.app.settings.maxBodyBytes
        for (path, key) in [(WebClient.itk + "/projects/prod/accounts:lookup", nil), (WebClient.itk + "/projects/prod/accounts", nil),
                            (WebClient.itk + "/accounts:lookup", "key-prod")] as [(String, String?)] {
            let other = web.post(path, json: body, key: key, headers: ["authorization": "Bearer admin-secret"])
            #expect(other.status == 413, "\(path)")
            #expect(other.errorMessage == "PAYLOAD_TOO_LARGE : Request body larger than \(limit) bytes")
        }
    }

    @Test("an import past its own limit is 413 naming that limit")
    func pastImportLimit() throws {
        let web = try WebClient { $0.maxImportBodyBytes = 100_000 }
        let r = web.request("POST", Self.importPath, body: Array(Self.importBody(1000).utf8), headers: Self.admin)
        #expect(r.status == 413)
        #expect(r.errorMessage == "PAYLOAD_TOO_LARGE : Request body larger than 100000 bytes")
        #expect(try web.store.account(project: "prod", localID: "imported-000000") == nil)
    }

    @Test("the limit the transport asks for by method and path: the import's for its route only")
    func routeLimits() throws {
        let web = try WebClient()
        let (normal, large) = (web.app.settings.maxBodyBytes, web.app.settings.maxImportBodyBytes)
        #expect(large == 4 << 20 && normal == 64 << 10)
        #expect(web.app.bodyLimit(method: "POST", path: Self.importPath) == large)
        #expect(web.app.bodyLimit(method: "post", path: WebClient.itk + "/projects/any/accounts:batchCreate") == large)
        #expect(web.app.bodyLimit(method: "GET", path: Self.importPath) == normal)
        #expect(web.app.bodyLimit(method: "POST", path: WebClient.itk + "/projects/prod/accounts:query") == normal)
        #expect(web.app.bodyLimit(method: "POST", path: WebClient.itk + "/accounts:signUp") == normal)
        #expect(web.app.bodyLimit(method: "POST", path: "/nowhere") == normal)
        // Never below the default, whatever is configured.
        let odd = try WebClient { $0.maxBodyBytes = 200_000; $0.maxImportBodyBytes = 100_000 }
        #expect(odd.app.bodyLimit(method: "POST", path: Self.importPath) == 200_000)
    }

    @Test("the transport and the web layer render the same 413")
    func sameRendering() {
        let r = WebApp.payloadTooLarge(limit: 10)
        #expect(r.status == 413)
        #expect(String(decoding: r.body, as: UTF8.self) == #"{"error":{"code":413,"message":"PAYLOAD_TOO_LARGE : Request body larger than 10 bytes","errors":[{"message":"PAYLOAD_TOO_LARGE : Request body larger than 10 bytes","domain":"global","reason":"invalid"}],"status":"INVALID_ARGUMENT"}}"#)
    }
}
