#if canImport(Glibc)
import Glibc
#endif

/// What each worker is serving, kept where a fatal-signal handler can read it: a trap (an
/// overflow, a failed unwrap) ends the whole process, and the supervisor restarts it, but the
/// log must say which request did it. The table is allocated once, before any worker starts;
/// the handler only reads it and calls `write(2)`, which is async-signal-safe.
enum InFlight {
    static let slotSize = 256
    static let maxSlots = 256
    /// Per slot: one length byte, then up to 255 bytes of "request-id METHOD /path".
    nonisolated(unsafe) static var table: UnsafeMutablePointer<UInt8>?
    nonisolated(unsafe) static var threads: UnsafeMutablePointer<pthread_t>?

    /// Allocates the table and installs the handler (once per process; later calls do nothing).
    static func install() {
        guard table == nil else { return }
        let t = UnsafeMutablePointer<UInt8>.allocate(capacity: slotSize * maxSlots)
        t.initialize(repeating: 0, count: slotSize * maxSlots)
        let th = UnsafeMutablePointer<pthread_t>.allocate(capacity: maxSlots)
        th.initialize(repeating: 0, count: maxSlots)
        table = t
        threads = th
        // Replaces the runtime's backtracer in development builds too: handed on to, it could
        // keep a dying responder alive for many seconds (it runs a helper process), during which
        // the supervisor cannot start the next one.
        for sig in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in InFlight.report(sig) }
            action.sa_flags = Int32(truncatingIfNeeded: SA_RESETHAND)
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
        }
    }

    /// Records the request `slot`'s thread is about to serve.
    static func begin(slot: Int, requestID: String, method: String, path: String) {
        guard let table, let threads, slot >= 0, slot < maxSlots else { return }
        threads[slot] = pthread_self()
        let base = table + slot * slotSize
        var n = 0
        func append(_ part: String) {
            for b in part.utf8 where n < slotSize - 1 {
                base[1 + n] = b >= 0x20 && b < 0x7F ? b : UInt8(ascii: "?")
                n += 1
            }
        }
        append(requestID); append(" "); append(method); append(" "); append(path)
        base[0] = UInt8(truncatingIfNeeded: n)
    }

    static func end(slot: Int) {
        guard let table, slot >= 0, slot < maxSlots else { return }
        table[slot * slotSize] = 0
    }

    /// The handler: one line per request in flight, the faulting thread's marked, then the
    /// signal's default action (the process ends and the supervisor restarts it).
    static func report(_ sig: Int32) {
        put("gatehouse: fatal signal ")
        putNumber(Int(sig))
        put(" (a trap in a request handler ends the process; the supervisor restarts it)\n")
        if let table, let threads {
            let me = pthread_self()
            for slot in 0..<maxSlots {
                let base = table + slot * slotSize
                let n = Int(base[0])
                guard n > 0 else { continue }
                put(pthread_equal(threads[slot], me) != 0 ? "gatehouse: serving (this thread): " : "gatehouse: in flight: ")
                _ = write(2, base + 1, n)
                put("\n")
            }
        }
        signal(sig, SIG_DFL)
        raise(sig)
    }

    private static func put(_ s: StaticString) {
        _ = s.withUTF8Buffer { write(2, $0.baseAddress, $0.count) }
    }

    private static func putNumber(_ v: Int) {
        var digits: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        var n = max(0, min(v, 9999)), count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat { d[3 - count] = UInt8(0x30 + n % 10); n /= 10; count += 1 } while n > 0 && count < 4
            _ = write(2, d.baseAddress.map { $0 + (4 - count) }, count)
        }
    }
}
