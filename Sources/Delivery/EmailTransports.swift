import AuthEngine
import JSONValue

/// Email transports, chosen by the configuration's `email.transport` (docs/configuration.md).
public enum EmailTransports {
    public static func make(_ config: JSON) throws -> MessageSender {
        switch config["transport"]?.stringValue ?? "dev" {
        case "dev": return DevSender()
        case let other: throw PermanentDeliveryError("email.transport: unknown transport '\(other)'")
        }
    }

    public static func problems(_ config: JSON) -> [String] {
        do { _ = try make(config); return [] } catch { return ["\(error)"] }
    }
}
