import Delivery
import JSONValue

/// The configuration file as far as it is read outside the `gatehouse` executable: the JSON
/// parser with the file's limits, and the delivery settings' checks (`sms`, `email`). The keys
/// read by `Config.apply` (gatehouse/Config.swift) are not reached: an executable target cannot
/// be imported by another executable (RELIABILITY.md, "Fuzzing").
enum ConfigTargets {
    static let config = FuzzTarget(name: "config") { data in
        guard let json = try? JSONParser(maxBytes: 1 << 20, maxDepth: 16).parse(data.array) else { return }
        _ = SMSProviders.problems(json["sms"] ?? json)
        _ = EmailTransports.problems(json["email"] ?? json, environment: [:])
    }
}
