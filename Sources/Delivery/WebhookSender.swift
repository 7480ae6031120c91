import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
import JSONValue

/// The webhook provider: `POST <url>` with JSON `{"to","body","project","id","channel","language"}`
/// (and `"status_callback"`, the URL to report to, when configured), headers
/// `X-Gatehouse-Timestamp: <unix s>` and `X-Gatehouse-Signature: v1=<hex HMAC-SHA256(secret,
/// timestamp + "." + body)>` (see `WebhookSignature`). 2xx = taken; 4xx except 408/429 =
/// permanent. The gateway reports back with the message's `id` (docs/operations.md "Delivery
/// receipts"), signed the same way.
struct WebhookSender: MessageSender {
    var name = "webhook"
    let url: String
    let secret: String
    var statusCallbackURL: String? = nil
    let timeout: Int
    var clock: any Clock = SystemClock()

    var keepsBody: Bool { false }
    var timeLimit: Millis { Millis(timeout) * 1000 }
    var provider: String { name }

    func payload(_ m: OutboxMessage) -> [UInt8] {
        var fields: [(String, JSON)] = [("to", .string(m.recipient)), ("body", .string(m.body)), ("project", .string(m.projectID)),
                                        ("id", .string(String(m.id))), ("channel", .string(m.channel.rawValue))]
        if let language = m.language { fields.append(("language", .string(language))) }
        if let statusCallbackURL { fields.append(("status_callback", .string(statusCallbackURL))) }
        return JSON.object(fields).bytes
    }

    func send(_ m: OutboxMessage) throws { _ = try deliver(m) }

    func deliver(_ m: OutboxMessage) throws -> ProviderAcceptance? {
        let body = payload(m)
        let timestamp = clock.nowSeconds
        try HTTPOutcome.post(url, headers: [
            "Content-Type: application/json",
            "X-Gatehouse-Timestamp: \(timestamp)",
            "X-Gatehouse-Signature: \(WebhookSignature.sign(secret: secret, timestamp: timestamp, body: body))",
        ], body: body, timeout: timeout, provider: name)
        return ProviderAcceptance(provider: name, messageID: String(m.id))
    }
}
