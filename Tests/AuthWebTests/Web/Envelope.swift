import HTTP
import JSONValue
import Testing

/// Checks that `r` is exactly a firebase-wire.md §1.5 error envelope: HTTP `status`, a JSON body
/// whose only member is `error`, holding `code` (= the HTTP status), `message`, `errors` (one
/// entry: the same message, domain `global`, `reason`) and `status` only for the canonical
/// classes (`canonical`), in that order and nothing else. 401s also name where the credential
/// goes (`location`, `locationType`), as the emulator does.
func expectEnvelope(_ r: Response, _ status: Int, _ message: String, reason: String = "invalid", canonical: String? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(r.status == status, "\(r.text)", sourceLocation: sourceLocation)
    #expect(r.headers.contains { $0.0 == "Content-Type" && $0.1.hasPrefix("application/json") }, sourceLocation: sourceLocation)
    guard let json = r.json, let top = json.objectValue, top.map(\.0) == ["error"], let error = json["error"]?.objectValue else {
        Issue.record("not an error envelope: \(r.text)", sourceLocation: sourceLocation)
        return
    }
    #expect(error.map(\.0) == (canonical == nil ? ["code", "message", "errors"] : ["code", "message", "errors", "status"]),
            sourceLocation: sourceLocation)
    #expect(json["error"]?["code"] == .number(Double(status)), sourceLocation: sourceLocation)
    #expect(json["error"]?["message"]?.stringValue == message, sourceLocation: sourceLocation)
    #expect(json["error"]?["status"]?.stringValue == canonical, sourceLocation: sourceLocation)
    var entry: [(String, JSON)] = [("message", .string(status == 401 ? "Invalid Credentials" : message)), ("domain", .string("global")), ("reason", .string(reason))]
    if status == 401 { entry += [("location", .string("Authorization")), ("locationType", .string("header"))] }
    #expect(json["error"]?["errors"] == .array([.object(entry)]), sourceLocation: sourceLocation)
}

/// `expectEnvelope` for a business error (firebase-wire.md §1.5): 400, reason `invalid`, no `status`.
func expectBusinessError(_ r: Response, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
    expectEnvelope(r, 400, message, sourceLocation: sourceLocation)
}

/// `expectEnvelope` for a 400 `INVALID_ARGUMENT` (schema problems: `status` present).
func expectInvalidArgument(_ r: Response, _ message: String, reason: String = "invalid", sourceLocation: SourceLocation = #_sourceLocation) {
    expectEnvelope(r, 400, message, reason: reason, canonical: "INVALID_ARGUMENT", sourceLocation: sourceLocation)
}
