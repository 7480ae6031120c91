#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM/SIGINT handling: blocked in every thread, received by `wait()` with sigwait(2).
enum Signals {
    static func blockTermination() {
        var set = sigset_t()
        sigemptyset(&set)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&set, s) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Blocks until SIGTERM, SIGINT or SIGHUP (SIGCHLD too when `child` is set and has exited,
    /// or for any child when `anyChild`).
    @discardableResult
    static func wait(child: pid_t? = nil, anyChild: Bool = false) -> Int32 {
        var set = sigset_t()
        sigemptyset(&set)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&set, s) }
        while true {
            var sig: Int32 = 0
            sigwait(&set, &sig)
            if sig == SIGCHLD {
                if anyChild { return sig }
                guard let child else { continue }
                var status: Int32 = 0
                if waitpid(child, &status, WNOHANG) == child { return sig }
                continue
            }
            return sig
        }
    }
}
