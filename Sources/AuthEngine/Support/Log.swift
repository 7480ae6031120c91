#if canImport(Glibc)
import Glibc
#endif
import JSONValue
import Locking

/// Minimal structured logging to stderr (journald/nginx-friendly). Never pass secrets. One per
/// process, made by the composition root from the configuration (`log.level`, `log.format`) and
/// held by `AuthServices`; the parts that log are given it.
public struct Log: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var label: String { ["debug", "info", "warning", "error"][rawValue] }
    }

    /// `text` (the default; journald and a terminal add the time) or `json`: one object per
    /// line, `{"time", "level", "pid", "request_id", "message"}`, for a log pipeline.
    public enum Format: String, Sendable { case text, json }

    public let level: Level
    public let format: Format
    /// Lines from every thread, one at a time.
    private static let lock = Lock()

    public init(level: Level = .info, format: Format = .text) {
        self.level = level
        self.format = format
    }

    public func write(_ level: Level, _ message: @autoclosure () -> String, requestID: String? = nil) {
        guard level >= self.level else { return }
        let line = format == .json ? Log.jsonLine(level, message(), requestID: requestID)
            : "gatehouse[\(getpid())] \(level.label)" + (requestID.map { " [\($0)]" } ?? "") + ": " + message() + "\n"
        Log.lock.withLock { StandardError.write(line) }
    }

    static func jsonLine(_ level: Level, _ message: String, requestID: String?) -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        let time = RFC3339.format(Millis(tv.tv_sec) * 1000 + Millis(tv.tv_usec / 1000))
        return JSON.obj(("time", time), ("level", level.label), ("pid", Int(getpid())), ("request_id", requestID), ("message", message))
            .serialized() + "\n"
    }

    public func debug(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.debug, m(), requestID: requestID) }
    public func info(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.info, m(), requestID: requestID) }
    public func warning(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.warning, m(), requestID: requestID) }
    public func error(_ m: @autoclosure () -> String, requestID: String? = nil) { write(.error, m(), requestID: requestID) }
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
