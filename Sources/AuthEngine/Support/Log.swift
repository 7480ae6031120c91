#if canImport(Glibc)
import Glibc
#endif
import JSONValue
import Locking

/// Minimal structured logging to stderr (journald/nginx-friendly). Never pass secrets.
public enum Log {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var label: String { ["debug", "info", "warning", "error"][rawValue] }
    }

    /// `text` (the default; journald and a terminal add the time) or `json`: one object per
    /// line, `{"time", "level", "pid", "request_id", "message"}`, for a log pipeline.
    public enum Format: String, Sendable { case text, json }

    nonisolated(unsafe) public static var level: Level = .info
    nonisolated(unsafe) public static var format: Format = .text
    private static let lock = Lock()

    public static func write(_ level: Level, _ message: @autoclosure () -> String, requestID: String? = nil) {
        guard level >= Log.level else { return }
        let line = format == .json ? jsonLine(level, message(), requestID: requestID)
            : "gatehouse[\(getpid())] \(level.label)" + (requestID.map { " [\($0)]" } ?? "") + ": " + message() + "\n"
        lock.withLock { StandardError.write(line) }
    }

    static func jsonLine(_ level: Level, _ message: String, requestID: String?) -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        let time = RFC3339.format(Millis(tv.tv_sec) * 1000 + Millis(tv.tv_usec / 1000))
        return JSON.obj(("time", time), ("level", level.label), ("pid", Int(getpid())), ("request_id", requestID), ("message", message))
            .serialized() + "\n"
    }

    public static func debug(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.debug, m(), requestID: requestID) }
    public static func info(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.info, m(), requestID: requestID) }
    public static func warning(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.warning, m(), requestID: requestID) }
    public static func error(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.error, m(), requestID: requestID) }
}

/// Text to file descriptor 2 as it comes (stderr is unbuffered; `write(2)` directly, so that no
/// thread touches C's `stderr` stream object).
public enum StandardError {
    public static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if n > 0 { offset += n } else if n < 0, errno == EINTR { continue } else { return }
            }
        }
    }
}
