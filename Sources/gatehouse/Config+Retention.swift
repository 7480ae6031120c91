import AuthEngine
import JSONValue

/// `retention`: how long housekeeping keeps delivered messages and audit rows (docs/configuration.md).
extension Config {
    static let knownRetentionKeys: Set<String> = ["outbox_hours", "audit_log_days", "$comment"]

    static func retention(_ j: JSON, problems: inout [String]) -> Housekeeping.Retention {
        var r = Housekeeping.Retention()
        guard case let .object(pairs) = j else { problems.append("retention: expected an object"); return r }
        for (k, _) in pairs where !knownRetentionKeys.contains(k) { problems.append("retention.\(k): unknown key") }
        let c = Config()
        c.int(j, "outbox_hours", 0...8760, &problems, prefix: "retention.").map { r.outbox = Millis($0) * 3_600_000 }
        c.int(j, "audit_log_days", 1...3650, &problems, prefix: "retention.").map { r.auditLog = Millis($0) * 86_400_000 }
        return r
    }
}
