public import HTTP
public import JSONValue

/// The Identity Toolkit error envelope (firebase-wire.md §1.5):
/// `{"error":{"code":N,"message":M,"errors":[{"message":M,"domain":"global","reason":R}],"status"?:S}}`.
public enum ErrorEnvelope {
    public static func json(code: Int, message: String, reason: String = "invalid", status: String? = nil) -> JSON {
        .obj(("error", JSON.obj(
            ("code", code),
            ("message", message),
            ("errors", JSON.array([.obj(("message", message), ("domain", "global"), ("reason", reason))])),
            ("status", status)
        )))
    }

    public static func response(code: Int, message: String, reason: String = "invalid", status: String? = nil,
                                headers: [(String, String)] = []) -> Response {
        .json(json(code: code, message: message, reason: reason, status: status), status: code, headers: headers)
    }
}
