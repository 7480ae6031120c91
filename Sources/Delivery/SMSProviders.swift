public import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
public import JSONValue

/// SMS providers, chosen by the configuration's `sms.provider` (docs/configuration-phone.md):
/// `dev` (the dev outbox), `twilio` (any Twilio-compatible Messages API), `webhook` (signed JSON
/// POST), `command` (a local program).
public enum SMSProviders {
    public static func make(_ config: JSON, log: Log = Log()) throws -> any MessageSender {
        let found = problems(config)
        guard found.isEmpty else { throw PermanentDeliveryError(found.joined(separator: "; ")) }
        let timeout = Int(config["timeout_seconds"]?.int64Value ?? 10)
        switch config["provider"]?.stringValue ?? "dev" {
        case "twilio":
            return TwilioSender(baseURL: trimmedBase(config["base_url"]?.stringValue ?? TwilioSender.defaultBaseURL),
                                accountSID: config["account_sid"]!.stringValue!, authToken: config["auth_token"]!.stringValue!,
                                from: config["from"]?.stringValue, messagingServiceSID: config["messaging_service_sid"]?.stringValue,
                                timeout: timeout)
        case "webhook":
            return WebhookSender(url: config["url"]!.stringValue!, secret: config["secret"]!.stringValue!, timeout: timeout)
        case "command":
            let path = config["command"]!.stringValue!
            if access(path, X_OK) != 0 { log.warning("sms.command: \(path) is not an executable file; SMS deliveries will fail until it is") }
            return CommandSender(path: path, timeout: timeout)
        default:
            return DevSender(log: log)
        }
    }

    static let keys: [String: Set<String>] = [
        "dev": [],
        "twilio": ["account_sid", "auth_token", "from", "messaging_service_sid", "base_url", "timeout_seconds"],
        "webhook": ["url", "secret", "timeout_seconds"],
        "command": ["command", "timeout_seconds"],
    ]

    /// Every problem in the `sms` section (for `gatehouse config check`), each naming its key.
    public static func problems(_ config: JSON) -> [String] {
        guard case let .object(pairs) = config else { return ["sms: expected an object"] }
        guard let provider = config["provider"].map({ $0.stringValue }) ?? "dev" else { return ["sms.provider: expected a string"] }
        guard let allowed = keys[provider] else {
            return ["sms.provider: unknown provider '\(provider)' (expected dev, twilio, webhook or command)"]
        }
        var out: [String] = []
        for (k, _) in pairs where k != "provider" && k != "$comment" && !allowed.contains(k) {
            out.append("sms.\(k): unknown key for provider '\(provider)'")
        }
        func required(_ key: String) -> String? {
            guard let v = config[key] else { out.append("sms.\(key): required by provider '\(provider)'"); return nil }
            guard let s = v.stringValue, !s.isEmpty else { out.append("sms.\(key): expected a non-empty string"); return nil }
            return s
        }
        func optionalString(_ key: String) -> String? {
            guard let v = config[key] else { return nil }
            guard let s = v.stringValue, !s.isEmpty else { out.append("sms.\(key): expected a non-empty string"); return nil }
            return s
        }
        if let t = config["timeout_seconds"], !(t.int64Value.map { (1...120).contains($0) } ?? false) {
            out.append("sms.timeout_seconds: expected an integer in 1…120")
        }
        switch provider {
        case "twilio":
            _ = required("account_sid")
            _ = required("auth_token")
            let from = optionalString("from"), service = optionalString("messaging_service_sid")
            if from == nil && service == nil && config["from"] == nil && config["messaging_service_sid"] == nil {
                out.append("sms.from: required by provider 'twilio' (or sms.messaging_service_sid)")
            }
            if from != nil && service != nil { out.append("sms.from: give either from or messaging_service_sid, not both") }
            if let base = optionalString("base_url"), !isHTTPURL(base) { out.append("sms.base_url: expected an http(s) URL") }
        case "webhook":
            if let url = required("url"), !isHTTPURL(url) { out.append("sms.url: expected an http(s) URL") }
            if let secret = required("secret"), secret.utf8.count < 16 { out.append("sms.secret: expected at least 16 characters") }
        case "command":
            // Only the shape: the program may be installed after the configuration is checked
            // (a missing program makes deliveries fail and be retried, and is logged at start).
            if let path = required("command"), !path.hasPrefix("/") { out.append("sms.command: expected an absolute path") }
        default:
            break
        }
        return out
    }

    static func isHTTPURL(_ s: String) -> Bool {
        (s.hasPrefix("https://") || s.hasPrefix("http://")) && s.count > 8 && !s.contains(" ")
    }

    static func trimmedBase(_ s: String) -> String {
        var b = s
        while b.hasSuffix("/") { b.removeLast() }
        return b
    }
}

/// How the HTTP providers read a status: 2xx sent; 4xx other than 408 and 429 will not get better
/// (permanent); everything else is retried by the outbox worker.
enum HTTPOutcome {
    /// POSTs `body` with `headers` to `url` and classifies the answer: network errors and the
    /// statuses below are `DeliveryFailure` (retried), permanent 4xx are `PermanentDeliveryError`.
    static func post(_ url: String, headers: [String], body: [UInt8], timeout: Int, provider: String) throws {
        let response: Curl.Response
        do {
            response = try Curl().http(method: "POST", url: url, headers: headers, body: body, timeout: timeout)
        } catch let e as CurlError {
            throw DeliveryFailure("\(provider): \(e)")
        }
        try check(response, provider: provider)
    }

    static func check(_ r: Curl.Response, provider: String) throws {
        if (200..<300).contains(r.status) { return }
        let detail = "\(provider): HTTP \(r.status) " + String(r.text.prefix(300))
        if (400..<500).contains(r.status) && r.status != 408 && r.status != 429 { throw PermanentDeliveryError(detail) }
        throw DeliveryFailure(detail)
    }
}

/// A failure worth retrying (network error, 5xx, 429, timeout, non-zero exit).
public struct DeliveryFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
