@testable import FastCGI
import Glibc

/// `CGIParams` read from `entries` laid out as libfcgi and the C runtime hand them over: an
/// array of `NAME=value` C strings ending in a null pointer.
func cgiParams(_ entries: [String]) -> CGIParams { withEnvp(entries) { CGIParams(envp: $0) } }

/// Calls `body` with `entries` as an `envp` array.
func withEnvp<T>(_ entries: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> T) -> T {
    var pointers: [UnsafeMutablePointer<CChar>?] = entries.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress) }
}
