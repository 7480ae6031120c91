public import AuthEngine
import JSONValue
import TextCoding

/// `siteverify` over HTTPS for reCAPTCHA v2/v3 (developers.google.com/recaptcha/docs/verify),
/// hCaptcha (docs.hcaptcha.com/#verify-the-user-response-server-side) and Cloudflare Turnstile
/// (developers.cloudflare.com/turnstile/get-started/server-side-validation): all three take a
/// form-encoded `secret`, `response`, `remoteip` and answer JSON with `success`, `hostname`,
/// `error-codes` (and for reCAPTCHA v3 `score`, `action`). One libcurl handle per call.
public struct SiteVerifier: ExternalVerifying {
    public var timeoutSeconds: Int

    public init(timeoutSeconds: Int = 8) { self.timeoutSeconds = timeoutSeconds }

    public func siteverify(url: String, secret: String, response: String, remoteAddress: String?, siteKey: String?) throws -> ExternalVerdict {
        var fields = [("secret", secret), ("response", response)]
        if let remoteAddress, !remoteAddress.isEmpty { fields.append(("remoteip", remoteAddress)) }
        if let siteKey, !siteKey.isEmpty { fields.append(("sitekey", siteKey)) }
        let body = PercentEncoding.query(fields)
        let curl = try Curl()
        let reply = try curl.http(method: "POST", url: url, headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"],
                                  body: Array(body.utf8), timeout: timeoutSeconds)
        guard reply.status == 200 else { throw PortError("siteverify", "HTTP \(reply.status) from \(url)") }
        return try SiteVerifier.verdict(reply.body)
    }

    /// Reads the verifier's JSON answer; anything but `success: true` is a refusal.
    public static func verdict(_ body: [UInt8]) throws -> ExternalVerdict {
        let json: JSON
        do { json = try JSONParser(maxDepth: 8).parse(body) } catch {
            throw PortError("siteverify", "answer is not JSON: \(error)")
        }
        return ExternalVerdict(success: json["success"]?.boolValue == true, hostname: json["hostname"]?.stringValue,
                               score: json["score"]?.doubleValue, action: json["action"]?.stringValue,
                               errorCodes: (json["error-codes"]?.arrayValue ?? []).compactMap(\.stringValue))
    }
}
