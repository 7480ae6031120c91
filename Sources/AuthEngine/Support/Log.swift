#if canImport(Glibc)
import Glibc
#endif

/// Minimal structured logging to stderr (journald/nginx-friendly). Never pass secrets.
public enum Log {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var label: String { ["debug", "info", "warning", "error"][rawValue] }
    }

    nonisolated(unsafe) public static var level: Level = .info
    private static let lock = Lock()

    public static func write(_ level: Level, _ message: @autoclosure () -> String, requestID: String? = nil) {
        guard level >= Log.level else { return }
        let line = "gatehouse[\(getpid())] \(level.label)" + (requestID.map { " [\($0)]" } ?? "") + ": " + message() + "\n"
        lock.withLock { _ = line.withCString { fputs($0, stderr) } }
    }

    public static func debug(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.debug, m(), requestID: requestID) }
    public static func info(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.info, m(), requestID: requestID) }
    public static func warning(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.warning, m(), requestID: requestID) }
    public static func error(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.error, m(), requestID: requestID) }
}
