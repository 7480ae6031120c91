import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
import JSONValue

/// The webhook provider: `POST <url>` with JSON `{"to","body","project","id"}`, headers
/// `X-Gatehouse-Timestamp: <unix s>` and `X-Gatehouse-Signature: v1=<hex HMAC-SHA256(secret,
/// timestamp + "." + body)>` (see `WebhookSignature`). 2xx = sent; 4xx except 408/429 = permanent.
struct WebhookSender: MessageSender {
    let url: String
    let secret: String
    let timeout: Int
    var clock: any Clock = SystemClock()

    var keepsBody: Bool { false }
    var timeLimit: Millis { Millis(timeout) * 1000 }

    func payload(_ m: OutboxMessage) -> [UInt8] {
        JSON.obj(("to", m.recipient), ("body", m.body), ("project", m.projectID), ("id", String(m.id))).bytes
    }

    func send(_ m: OutboxMessage) throws {
        let body = payload(m)
        let timestamp = clock.nowSeconds
        try HTTPOutcome.post(url, headers: [
            "Content-Type: application/json",
            "X-Gatehouse-Timestamp: \(timestamp)",
            "X-Gatehouse-Signature: \(WebhookSignature.sign(secret: secret, timestamp: timestamp, body: body))",
        ], body: body, timeout: timeout, provider: "webhook")
    }
}
