import AuthEngine
import JSONValue

/// SMS providers, chosen by the configuration's `sms.provider` (docs/configuration.md).
public enum SMSProviders {
    public static func make(_ config: JSON) throws -> MessageSender {
        switch config["provider"]?.stringValue ?? "dev" {
        case "dev": return DevSender()
        case let other: throw PermanentDeliveryError("sms.provider: unknown provider '\(other)'")
        }
    }

    /// Every problem in the `sms` section (for `gatehouse config check`).
    public static func problems(_ config: JSON) -> [String] {
        do { _ = try make(config); return [] } catch { return ["\(error)"] }
    }
}
