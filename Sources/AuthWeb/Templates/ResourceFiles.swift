#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading the resource folder (templates, locales, region names) with the C library alone.
enum ResourceFiles {
    /// The whole file, or nil when it cannot be read.
    static func read(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n > 0 { out.append(contentsOf: chunk[0..<n]) }
            if n < chunk.count { return ferror(f) == 0 ? out : nil }
        }
    }

    /// The file as UTF-8 text.
    static func text(_ path: String) -> String? { read(path).map { String(decoding: $0, as: UTF8.self) } }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Names in `path` (without `.` and `..`), sorted; nil when it is not a readable folder.
    static func list(_ path: String) -> [String]? {
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

    /// Relative paths of the files under `path` whose names end in `suffix`, depth first.
    static func walk(_ path: String, suffix: String, prefix: String = "") -> [String] {
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

    /// The folder holding this executable (`/proc/self/exe`), if the system says.
    static var executableDirectory: String? {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { return nil }
        let path = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}
