import AuthEngine
import JSONValue

/// `log` and `metrics` (docs/operations.md): how a running responder is watched.
extension Config {
    static let knownLogKeys: Set<String> = ["format", "level", "$comment"]
    static let knownMetricsKeys: Set<String> = ["enabled", "$comment"]

    mutating func applyOperations(_ json: JSON, problems: inout [String]) {
        if let log = json["log"] {
            if case let .object(pairs) = log {
                for (k, _) in pairs where !Config.knownLogKeys.contains(k) { problems.append("log.\(k): unknown key") }
                if let f = str(log, "format", &problems, prefix: "log.") {
                    if let format = Log.Format(rawValue: f) { logFormat = format } else { problems.append("log.format: expected \"text\" or \"json\"") }
                }
                if let l = str(log, "level", &problems, prefix: "log.") { setLogLevel(l, key: "log.level", &problems) }
            } else { problems.append("log: expected an object") }
        }
        if let m = json["metrics"] {
            if case let .object(pairs) = m {
                for (k, _) in pairs where !Config.knownMetricsKeys.contains(k) { problems.append("metrics.\(k): unknown key") }
                if let e = m["enabled"] {
                    if let b = e.boolValue { metricsEnabled = b } else { problems.append("metrics.enabled: expected true or false") }
                }
            } else { problems.append("metrics: expected an object") }
        }
    }

    mutating func setLogLevel(_ l: String, key: String, _ problems: inout [String]) {
        switch l {
        case "debug": logLevel = .debug
        case "info": logLevel = .info
        case "warning": logLevel = .warning
        case "error": logLevel = .error
        default: problems.append("\(key): expected debug, info, warning or error")
        }
    }
}
