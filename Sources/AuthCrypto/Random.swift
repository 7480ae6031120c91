import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// The CSPRNG (the kernel's `getrandom(2)`; OpenSSL `RAND_bytes` where the kernel lacks it).
/// Every secret Gatehouse makes comes from here.
///
/// A call costs about the same for 24 bytes as for 256 (a system call), so small requests are
/// served from a per-thread buffer filled 256 bytes at a time. Each byte is
/// handed out once and wiped from the buffer as it is taken; the buffer is wiped when its thread
/// ends. Larger requests are read directly.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { out, n in
            fill(out.baseAddress!, count)
            n = count
        }
    }

    /// Writes `count` random bytes at `out`.
    public static func fill(_ out: UnsafeMutablePointer<UInt8>, _ count: Int) {
        guard count > 0 else { return }
        guard count <= maxBuffered, let pool = threadBuffer() else { return direct(out, count) }
        var used = pool.load(as: Int.self)
        if used + count > bufferSize {
            direct(pool.advanced(by: header).assumingMemoryBound(to: UInt8.self), bufferSize)
            used = 0
        }
        let from = pool.advanced(by: header + used)
        out.update(from: from.assumingMemoryBound(to: UInt8.self), count: count)
        OPENSSL_cleanse(from, count)
        pool.storeBytes(of: used + count, as: Int.self)
    }

    /// A uniformly random integer in `0..<upperBound` (rejection sampling, no modulo bias).
    public static func uniform(_ upperBound: UInt64) -> UInt64 {
        precondition(upperBound > 0)
        let limit = UInt64.max - (UInt64.max % upperBound)
        while true {
            let b = bytes(8)
            let v = b.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if v < limit { return v % upperBound }
        }
    }

    // MARK: - The per-thread buffer

    /// Bytes drawn from the kernel at a time, and the largest request served from them.
    static let bufferSize = 256
    static let maxBuffered = 64
    /// The buffer starts with the count of bytes already taken.
    private static let header = MemoryLayout<Int>.stride

    private static func direct(_ out: UnsafeMutablePointer<UInt8>, _ count: Int) {
        // The kernel's CSPRNG (getrandom(2), blocking only until it is first seeded at boot). It
        // spares a short-lived process (CGI) the ~8 M instructions of instantiating OpenSSL's
        // DRBG for a few bytes. Falls back to RAND_bytes on a kernel without the call.
        var done = 0
        while done < count {
            let n = gh_getrandom(out.advanced(by: done), UInt(count - done))
            if n > 0 { done += Int(n); continue }
            if n < 0 && errno == EINTR { continue }
            // RAND_bytes failing means the process has no entropy source: continuing would be unsafe.
            guard RAND_bytes(out.advanced(by: done), Int32(count - done)) == 1 else {
                preconditionFailure("RAND_bytes failed: \(CryptoError.fromOpenSSL("RAND_bytes"))")
            }
            return
        }
    }

    /// This thread's buffer (made empty on first use); nil if it cannot be made.
    private static func threadBuffer() -> UnsafeMutableRawPointer? {
        if let p = pthread_getspecific(bufferKey) { return p }
        guard let p = malloc(header + bufferSize) else { return nil }
        p.storeBytes(of: bufferSize, as: Int.self)
        guard pthread_setspecific(bufferKey, p) == 0 else { free(p); return nil }
        return p
    }

    /// Wipes and frees a thread's buffer when the thread ends.
    private static let bufferKey: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { p in
            guard let p else { return }
            OPENSSL_cleanse(p, MemoryLayout<Int>.stride + SecureRandom.bufferSize)
            free(p)
        }
        precondition(rc == 0, "pthread_key_create failed")
        return key
    }()
}
