import AuthCrypto
import TextCoding

/// A project's TOTP second factor (Firebase's `totpProviderConfig`): off unless enabled, and
/// only where the deployment has a sealing key (the secrets are read back to check codes, so
/// they are sealed, never hashed; the key lives outside the database).
public struct TOTPPolicy: Sendable, Equatable {
    public var enabled = false
    /// Time steps accepted on each side of the current one (Firebase's `adjacentIntervals`, 0…10).
    public var adjacentIntervals = 1
    /// 32 bytes (AES-256-GCM) from the deployment's configuration; nil: TOTP cannot be used.
    public var sealingKey: [UInt8]? = nil
    public init() {}
}

/// RFC 6238 codes as authenticator apps compute them (and the SDKs assume): HMAC-SHA-1, 6
/// digits, 30-second steps, RFC 4226's dynamic truncation.
public enum TOTP {
    public static let digits = 6
    public static let periodSeconds: Int64 = 30
    public static let algorithm = "SHA1"
    /// 160 bits, RFC 4226's recommended secret length (32 base32 characters).
    public static let secretLength = 20

    public static func step(at now: Millis) -> Int64 { now / 1000 / periodSeconds }

    public static func code(secret: [UInt8], step: Int64) -> String {
        var counter = [UInt8](repeating: 0, count: 8)
        for i in 0..<8 { counter[7 - i] = UInt8(truncatingIfNeeded: UInt64(bitPattern: step) >> UInt64(8 * i)) }
        let mac = Digest.hmacSHA1(key: secret, data: counter)
        let offset = Int(mac[19] & 0x0F)
        let binary = (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let value = String(binary % 1_000_000)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The time step within `adjacent` steps of now whose code `given` is, if that step is later
    /// than `lastStep` (a code is accepted once, and never one older than the last accepted).
    /// Every candidate is compared in constant time.
    public static func acceptedStep(_ given: String, secret: [UInt8], now: Millis, adjacent: Int, after lastStep: Int64) -> Int64? {
        guard given.utf8.count == digits, given.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let current = step(at: now)
        var found: Int64?
        for offset in -adjacent...adjacent {
            let s = current + Int64(offset)
            if Digest.constantTimeEqual(code(secret: secret, step: s), given), s > lastStep, found == nil { found = s }
        }
        return found
    }

    /// `otpauth://totp/<issuer>:<account>?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30`
    /// (Google Authenticator's key URI format, which every authenticator app reads).
    public static func uri(secret: [UInt8], account: String, issuer: String) -> String {
        let label = PercentEncoding.encode(issuer) + ":" + PercentEncoding.encode(account)
        return "otpauth://totp/" + label + "?secret=" + Base32.encode(secret) + "&issuer=" + PercentEncoding.encode(issuer)
            + "&algorithm=" + algorithm + "&digits=" + String(digits) + "&period=" + String(periodSeconds)
    }
}
