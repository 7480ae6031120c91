#if canImport(Glibc)
import Glibc
#endif

/// File-system helpers of the operator commands, on the C library (the executable does not
/// import FoundationEssentials: see docs/architecture.md, "Start-up and memory").
enum Files {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// `path` made absolute (against the working folder) with `.`, `..` and repeated `/` removed;
    /// symbolic links are kept.
    static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") {
            var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if getcwd(&buf, buf.count) != nil { full = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "/" + path }
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The folder part of `path` ("/a/b" → "/a", "/a" → "/").
    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The target of a symbolic link.
    static func readLink(_ path: String) -> String? {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buf, buf.count - 1)
        guard n > 0 else { return nil }
        buf[n] = 0
        return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Copies a file's bytes to `to` (created or replaced, mode 0644).
    static func copy(_ from: String, to: String) throws {
        let bytes = try Config.readFile(from)
        try write(bytes, to: to)
    }

    /// `exclusive`: a new file only (a key must never replace one), with `mode`.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, exclusive: Bool = false) throws {
        let fd = open(path, O_WRONLY | O_CREAT | (exclusive ? O_EXCL : O_TRUNC) | O_CLOEXEC, mode)
        guard fd >= 0 else { throw ConfigError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw ConfigError("cannot write \(path): \(String(cString: strerror(errno)))") }
            off += n
        }
    }

    static func remove(_ path: String) { unlink(path) }
}
