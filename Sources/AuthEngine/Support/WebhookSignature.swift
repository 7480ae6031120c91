import AuthCrypto

/// The signature Gatehouse puts on webhook deliveries (SMS webhook provider):
/// `X-Gatehouse-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>` with
/// `X-Gatehouse-Timestamp: <unix seconds>`. Receivers recompute it and reject old timestamps.
public enum WebhookSignature {
    public static func sign(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        "v1=" + Hex.encode(Digest.hmacSHA256(key: Array(secret.utf8), data: Array("\(timestamp).".utf8) + body))
    }
}
