#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading the resource folder (templates, locales, region names) with the C library alone, or,
/// under `ResourceFiles.embedded`, from the copy compiled into the binary (`EmbeddedResources`,
/// written by the EmbedResources build plugin), which needs no file I/O.
enum ResourceFiles {
    /// The folder name that stands for the embedded copy of `Resources/`.
    static let embedded = "embedded:"

    /// The relative path under the embedded root (`""` for the root itself), or nil.
    private static func embeddedPath(_ path: String) -> Substring? {
        guard path.hasPrefix(embedded) else { return nil }
        var rest = path.dropFirst(embedded.count)
        while rest.first == "/" { rest = rest.dropFirst() }
        return rest
    }

    /// The whole file, or nil when it cannot be read.
    static func read(_ path: String) -> [UInt8]? {
        if let rel = embeddedPath(path) {
            return EmbeddedResources.files[String(rel)].map { s in s.withUTF8Buffer { Array($0) } }
        }
        return try? LocalFile.read(path)
    }

    /// The file as UTF-8 text.
    static func text(_ path: String) -> String? { read(path).map { String(decoding: $0, as: UTF8.self) } }

    static func isDirectory(_ path: String) -> Bool {
        if let rel = embeddedPath(path) {
            let prefix = rel.isEmpty ? "" : rel + "/"
            return EmbeddedResources.files.keys.contains { startsWith($0, prefix) }
        }
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Names in `path` (without `.` and `..`), sorted; nil when it is not a readable folder.
    static func list(_ path: String) -> [String]? {
        if let rel = embeddedPath(path) {
            let prefix = rel.isEmpty ? "" : rel + "/"
            var names = Set<String>()
            for key in EmbeddedResources.files.keys where startsWith(key, prefix) {
                let rest = key.utf8.dropFirst(prefix.utf8.count)
                names.insert(String(Substring(rest.prefix { $0 != UInt8(ascii: "/") })))
            }
            return names.isEmpty ? nil : names.sorted()
        }
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Byte-wise prefix test (no Character comparison).
    private static func startsWith(_ s: String, _ prefix: String) -> Bool {
        s.utf8.count >= prefix.utf8.count && s.utf8.starts(with: prefix.utf8)
    }

    /// Relative paths of the files under `path` whose names end in `suffix`, depth first.
    static func walk(_ path: String, suffix: String, prefix: String = "") -> [String] {
        if let rel = embeddedPath(path) {
            // Every key is a file (sorted by path: the callers use the list as a set).
            let root = (rel.isEmpty ? "" : rel + "/")
            return EmbeddedResources.files.keys.filter { startsWith($0, root) && $0.utf8.reversed().starts(with: suffix.utf8.reversed()) }
                .map { prefix + String(Substring($0.utf8.dropFirst(root.utf8.count))) }.sorted()
        }
        var out: [String] = []
        for name in list(path) ?? [] {
            let full = path + "/" + name
            if isDirectory(full) {
                out += walk(full, suffix: suffix, prefix: prefix + name + "/")
            } else if name.hasSuffix(suffix) {
                out.append(prefix + name)
            }
        }
        return out
    }
}

/// A whole local file read with the C library (no Foundation), for the resource folder and the
/// configuration file.
public enum LocalFile {
    /// Why a file could not be read: the system's message.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The file's bytes.
    public static func read(_ path: String) throws -> [UInt8] {
        guard let f = fopen(path, "rb") else { throw Failure(description: String(cString: strerror(errno))) }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n > 0 { out.append(contentsOf: chunk[0..<n]) }
            if n < chunk.count {
                guard ferror(f) == 0 else { throw Failure(description: String(cString: strerror(errno))) }
                return out
            }
        }
    }
}
