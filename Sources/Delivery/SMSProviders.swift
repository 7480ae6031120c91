public import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
public import JSONValue

/// SMS providers, chosen by the configuration's `sms.provider` (docs/configuration-phone.md):
/// `dev` (the dev outbox), `twilio` (any Twilio-compatible Messages API), `webhook` (signed JSON
/// POST), `command` (a local program).
public enum SMSProviders {
    /// The phone channels' sender: the provider of `sms`, and behind it `sms.secondary` with a
    /// circuit breaker on the first (`ProviderChain`). Every phone channel (SMS, WhatsApp, voice)
    /// goes through it.
    public static func make(_ config: JSON, log: Log = Log(), telemetry: Telemetry = .off) throws -> any MessageSender {
        let found = problems(config)
        guard found.isEmpty else { throw PermanentDeliveryError(found.joined(separator: "; ")) }
        let primary = try single(config, log: log)
        guard let second = config["secondary"] else { return primary.sender }
        let secondary = try single(second, log: log)
        return ProviderChain(primary: primary, secondary: secondary,
                             breaker: CircuitBreaker(name: primary.name, log: log, telemetry: telemetry))
    }

    /// The configured name of a provider section: `name`, else its kind.
    static func name(_ config: JSON) -> String {
        config["name"]?.stringValue ?? config["provider"]?.stringValue ?? "dev"
    }

    static func single(_ config: JSON, log: Log) throws -> (name: String, sender: any MessageSender) {
        let timeout = Int(config["timeout_seconds"]?.int64Value ?? 10)
        let name = name(config)
        let callback = config["status_callback_url"]?.stringValue
        switch config["provider"]?.stringValue ?? "dev" {
        case "twilio":
            var sids: [String: String] = [:]
            if case let .object(pairs)? = config["whatsapp_content_sids"] { for (k, v) in pairs { sids[k] = v.stringValue } }
            return (name, TwilioSender(name: name, baseURL: trimmedBase(config["base_url"]?.stringValue ?? TwilioSender.defaultBaseURL),
                                       accountSID: config["account_sid"]?.stringValue ?? "", authToken: config["auth_token"]?.stringValue ?? "",
                                       from: config["from"]?.stringValue, messagingServiceSID: config["messaging_service_sid"]?.stringValue,
                                       whatsappFrom: config["whatsapp_from"]?.stringValue,
                                       whatsappContentSID: config["whatsapp_content_sid"]?.stringValue, whatsappContentSIDs: sids,
                                       voiceFrom: config["voice_from"]?.stringValue, statusCallbackURL: callback, timeout: timeout))
        case "webhook":
            return (name, WebhookSender(name: name, url: config["url"]?.stringValue ?? "", secret: config["secret"]?.stringValue ?? "",
                                        statusCallbackURL: callback, timeout: timeout))
        case "command":
            let path = config["command"]?.stringValue ?? ""
            if access(path, X_OK) != 0 { log.warning("sms.command: \(path) is not an executable file; SMS deliveries will fail until it is") }
            return (name, CommandSender(name: name, path: path, timeout: timeout))
        default:
            return (name, DevSender(log: log, name: name))
        }
    }

    /// What the callback endpoints need of each provider that reports back: its name, kind, the
    /// secret that signs its reports (Twilio's auth token, the webhook's secret) and the URL
    /// they are sent to (Twilio signs it). The primary first.
    public static func receiptSources(_ config: JSON) -> [ReceiptSource] {
        var out: [ReceiptSource] = []
        for section in [config, config["secondary"]].compactMap({ $0 }) {
            let kind = section["provider"]?.stringValue ?? "dev"
            let secret = kind == "twilio" ? section["auth_token"]?.stringValue : kind == "webhook" ? section["secret"]?.stringValue : nil
            guard let secret, let url = section["status_callback_url"]?.stringValue else { continue }
            out.append(ReceiptSource(name: name(section), kind: kind, secret: secret, callbackURL: url))
        }
        return out
    }

    static let keys: [String: Set<String>] = [
        "dev": ["name"],
        "twilio": ["account_sid", "auth_token", "from", "messaging_service_sid", "base_url", "timeout_seconds", "name",
                   "status_callback_url", "whatsapp_from", "whatsapp_content_sid", "whatsapp_content_sids", "voice_from"],
        "webhook": ["url", "secret", "timeout_seconds", "name", "status_callback_url"],
        "command": ["command", "timeout_seconds", "name"],
    ]

    /// Every problem in the `sms` section (for `gatehouse config check`), each naming its key.
    public static func problems(_ config: JSON) -> [String] {
        var out = problems(config, prefix: "sms.")
        if let second = config["secondary"] {
            out += problems(second, prefix: "sms.secondary.")
            if name(second) == name(config) { out.append("sms.secondary.name: the two providers need different names (receipts name them)") }
        }
        return out
    }

    static func problems(_ config: JSON, prefix: String) -> [String] {
        let section = String(prefix.dropLast())
        guard case let .object(pairs) = config else { return ["\(section): expected an object"] }
        guard let provider = config["provider"].map({ $0.stringValue }) ?? "dev" else { return ["\(prefix)provider: expected a string"] }
        guard let allowed = keys[provider] else {
            return ["\(prefix)provider: unknown provider '\(provider)' (expected dev, twilio, webhook or command)"]
        }
        var out: [String] = []
        for (k, _) in pairs where k != "provider" && k != "$comment" && !allowed.contains(k) && !(k == "secondary" && prefix == "sms.") {
            out.append("\(prefix)\(k): unknown key for provider '\(provider)'")
        }
        func required(_ key: String) -> String? {
            guard let v = config[key] else { out.append("\(prefix)\(key): required by provider '\(provider)'"); return nil }
            guard let s = v.stringValue, !s.isEmpty else { out.append("\(prefix)\(key): expected a non-empty string"); return nil }
            return s
        }
        func optionalString(_ key: String) -> String? {
            guard let v = config[key] else { return nil }
            guard let s = v.stringValue, !s.isEmpty else { out.append("\(prefix)\(key): expected a non-empty string"); return nil }
            return s
        }
        if let t = config["timeout_seconds"], !(t.int64Value.map { (1...120).contains($0) } ?? false) {
            out.append("\(prefix)timeout_seconds: expected an integer in 1…120")
        }
        switch provider {
        case "twilio":
            _ = required("account_sid")
            _ = required("auth_token")
            let from = optionalString("from"), service = optionalString("messaging_service_sid")
            if from == nil && service == nil && config["from"] == nil && config["messaging_service_sid"] == nil {
                out.append("\(prefix)from: required by provider 'twilio' (or sms.messaging_service_sid)")
            }
            if from != nil && service != nil { out.append("\(prefix)from: give either from or messaging_service_sid, not both") }
            if let base = optionalString("base_url"), !isHTTPURL(base) { out.append("\(prefix)base_url: expected an http(s) URL") }
        case "webhook":
            if let url = required("url"), !isHTTPURL(url) { out.append("\(prefix)url: expected an http(s) URL") }
            if let secret = required("secret"), secret.utf8.count < 16 { out.append("\(prefix)secret: expected at least 16 characters") }
        case "command":
            // Only the shape: the program may be installed after the configuration is checked
            // (a missing program makes deliveries fail and be retried, and is logged at start).
            if let path = required("command"), !path.hasPrefix("/") { out.append("\(prefix)command: expected an absolute path") }
        default:
            break
        }
        if let name = optionalString("name"), !(name.utf8.count <= 32 && name.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D })) {
            out.append("\(prefix)name: expected 1 to 32 of a-z, 0-9 and -")
        }
        if let url = optionalString("status_callback_url") {
            if !isHTTPURL(url) || url.contains("?") || url.contains("#") { out.append("\(prefix)status_callback_url: expected an http(s) URL without query or fragment") }
            if provider != "twilio" && provider != "webhook" { out.append("\(prefix)status_callback_url: only the twilio and webhook providers report back") }
        }
        _ = optionalString("whatsapp_from")
        _ = optionalString("voice_from")
        _ = optionalString("whatsapp_content_sid")
        if config["whatsapp_from"] != nil, config["whatsapp_content_sid"] == nil, config["whatsapp_content_sids"] == nil {
            out.append("\(prefix)whatsapp_content_sid: required with whatsapp_from (WhatsApp takes an approved template for codes, no free text)")
        }
        if let sids = config["whatsapp_content_sids"] {
            if case let .object(pairs) = sids, pairs.allSatisfy({ $0.1.stringValue.map { !$0.isEmpty } ?? false }) {} else {
                out.append("\(prefix)whatsapp_content_sids: expected an object of language → content SID")
            }
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
    /// POSTs `body` with `headers` to `url` and classifies the answer: a 2xx answer is returned;
    /// permanent 4xx are `PermanentDeliveryError`; 5xx, 408, 429 and failures to connect are
    /// `DeliveryFailure` (the provider did not take the message: retried, maybe elsewhere); a
    /// timeout or a connection lost once the request may have gone is `UncertainDelivery` (it may
    /// have taken it: retried there only).
    @discardableResult
    static func post(_ url: String, headers: [String], body: [UInt8], timeout: Int, provider: String) throws -> Curl.Response {
        let response: Curl.Response
        do {
            response = try Curl().http(method: "POST", url: url, headers: headers, body: body, timeout: timeout)
        } catch let e as CurlError {
            if notTaken(e) { throw DeliveryFailure("\(provider): \(e)", provider: provider) }
            throw UncertainDelivery(provider: provider, underlying: "\(provider): \(e)")
        }
        try check(response, provider: provider)
        return response
    }

    /// libcurl's errors that come before a request could reach the provider: resolving the host,
    /// connecting (refused, unreachable), the TLS handshake, and a loader or setup failure (-1).
    static let beforeRequest: Set<Int> = [-1, 1, 2, 3, 5, 6, 7, 35, 51, 58, 60, 77]

    /// Whether the provider provably did not take the request: it failed before the request
    /// could be sent, or nothing of it was written (a connection that timed out opening, to a
    /// host that drops what is sent to it, fails with the same code as an answer that never
    /// came, and only the bytes written tell them apart). Anything else (a timeout or a
    /// connection lost once the request was written, even in part) may have reached it.
    static func notTaken(_ e: CurlError) -> Bool {
        beforeRequest.contains(e.code) || e.requestBytes == 0
    }

    static func check(_ r: Curl.Response, provider: String) throws {
        if (200..<300).contains(r.status) { return }
        let detail = "\(provider): HTTP \(r.status) " + String(r.text.prefix(300))
        if (400..<500).contains(r.status) && r.status != 408 && r.status != 429 { throw PermanentDeliveryError(detail, provider: provider) }
        throw DeliveryFailure(detail, provider: provider)
    }
}

/// A failure worth retrying (network error, 5xx, 429, non-zero exit) that the provider did not
/// take the message in: another provider may send it.
public struct DeliveryFailure: Error, CustomStringConvertible {
    public let description: String
    /// The configured name of the provider that failed (metrics), when the sender knows it.
    public let provider: String?
    public init(_ d: String, provider: String? = nil) { description = d; self.provider = provider }
}
