import AuthEngine
import CFuzzDriver
#if canImport(Glibc)
import Glibc
#endif

/// One program for every fuzz target. Built with `-sanitize=fuzzer,address` (scripts/fuzz.sh) it
/// runs libFuzzer on the target named by its first argument or by `GATEHOUSE_FUZZ_TARGET` (the
/// variable is what libFuzzer's child processes inherit); built without, it replays the files and
/// folders it is given, which is how a crash is reproduced under the debugger or in a test build:
///
///     gatehouse-fuzz json Fuzz/corpus/json -max_total_time=60      (fuzzing build)
///     gatehouse-fuzz json crash-0123abcd                           (either build)
@main
enum FuzzEntry {
    /// The selected target; set once before any input runs.
    nonisolated(unsafe) static var current: FuzzTarget?

    static func main() {
        var args = CommandLine.arguments
        if args.count > 1, FuzzTargets.named(args[1]) != nil {
            setenv("GATEHOUSE_FUZZ_TARGET", args[1], 1)
            args.remove(at: 1)
        }
        guard let name = getenv("GATEHOUSE_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTargets.named(name) else {
            let names = FuzzTargets.all.map(\.name).joined(separator: " ")
            StandardError.write("usage: gatehouse-fuzz <target> [libFuzzer options | files and folders to replay]\ntargets: \(names)\n")
            exit(args.count > 1 && args[1] == "list" ? 0 : 64)
        }
        current = target
        target.setUp()
        if gh_fuzz_has_driver() != 0 {
            exit(runDriver(args))
        }
        var count = 0
        for path in args.dropFirst() { count += replay(path, target) }
        print("\(target.name): replayed \(count) inputs")
    }

    static func runDriver(_ args: [String]) -> Int32 {
        var cArgs: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) }
        cArgs.append(nil)
        return cArgs.withUnsafeMutableBufferPointer { buf in
            gh_fuzz_run_driver(Int32(args.count), buf.baseAddress) { data, size in
                FuzzEntry.run(data, size)
                return 0
            }
        }
    }

    static func run(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        guard let target = current else { return }
        target.run(UnsafeBufferPointer(start: data, count: size))
    }

    /// Runs every file under `path` (a file or a folder, not recursive); returns how many.
    static func replay(_ path: String, _ target: FuzzTarget) -> Int {
        if let dir = opendir(path) {
            defer { closedir(dir) }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if !name.hasPrefix(".") { names.append(name) }
            }
            var n = 0
            for name in names.sorted() { n += replay(path + "/" + name, target) }
            return n
        }
        guard let bytes = readFile(path) else {
            StandardError.write("cannot read \(path)\n")
            exit(66)
        }
        bytes.withUnsafeBufferPointer { target.run($0) }
        return 1
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n == 0 { break }
            out += chunk.prefix(n)
        }
        return ferror(f) == 0 ? out : nil
    }
}

/// `libFuzzer`'s entry point for builds that use its own `main` (not this package's): the same
/// target selection through `GATEHOUSE_FUZZ_TARGET`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    if FuzzEntry.current == nil, let name = getenv("GATEHOUSE_FUZZ_TARGET").map({ String(cString: $0) }),
       let target = FuzzTargets.named(name) {
        FuzzEntry.current = target
        target.setUp()
    }
    FuzzEntry.run(data, size)
    return 0
}

/// One parser under test: `setUp` once per process, then `run` per input. An input a parser
/// refuses is fine; a crash, a trap or a sanitizer report is a finding.
struct FuzzTarget: Sendable {
    let name: String
    var setUp: @Sendable () -> Void = {}
    let run: @Sendable (UnsafeBufferPointer<UInt8>) -> Void
}

extension UnsafeBufferPointer where Element == UInt8 {
    var string: String { String(decoding: self, as: UTF8.self) }
    var array: [UInt8] { Array(self) }
}
