#if canImport(Glibc)
import Glibc
#endif

/// The few operating-system look-ups delivery needs, on the C library directly (this target does
/// not import FoundationEssentials, whose tables every process would otherwise relocate at start).
public enum Platform {
    /// The process environment as a dictionary (first value of a repeated name wins).
    public static func environment() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "="), out[String(s[..<eq])] == nil { out[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return out
    }

    public static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// A regular file this process may execute.
    public static func isExecutableFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    /// The names in a folder, without `.` and `..`; nil when it cannot be read.
    public static func directoryEntries(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Seconds since the Unix epoch.
    public static func now() -> Int64 { Int64(time(nil)) }
}
