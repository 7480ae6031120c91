import AuthEngine
#if canImport(Glibc)
import Glibc
#endif

/// A program run for one message (the command SMS provider, the sendmail transport): `input` on
/// its standard input, standard output to /dev/null, standard error kept (first 4 KB), killed
/// after `timeout` seconds. It gets default signal handling and no inherited descriptors beyond
/// its three standard ones. `label` starts every error message.
struct ChildProcess {
    let label: String
    let path: String
    let arguments: [String]
    /// "NAME=value" entries, or nil for this process's own environment.
    let environment: [String]?
    let timeout: Int

    /// How the program ended.
    struct Outcome {
        var timedOut = false
        var exited = false
        var code: Int32 = 0
        var signal: Int32 = 0
        var stderr = ""
    }

    func run(input: [UInt8]) throws -> Outcome {
        var stdinPipe: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0 else { throw DeliveryFailure("\(label): pipe: \(String(cString: strerror(errno)))") }
        guard pipe(&errors) == 0 else {
            close(stdinPipe[0]); close(stdinPipe[1])
            throw DeliveryFailure("\(label): pipe: \(String(cString: strerror(errno)))")
        }
        let pid: pid_t
        do {
            pid = try spawn(stdin: stdinPipe[0], stderr: errors[1])
        } catch {
            for fd in stdinPipe + errors { close(fd) }
            throw error
        }
        close(stdinPipe[0])
        close(errors[1])
        _ = fcntl(errors[0], F_SETFL, fcntl(errors[0], F_GETFL) | O_NONBLOCK)
        defer { close(errors[0]) }

        // The input is written as the program reads it, within the same deadline: a program
        // that never reads (and never exits) cannot hold this thread past `timeout`. A program
        // that exits without reading its input makes the write fail with EPIPE (SIGPIPE is
        // ignored by the responder); that just ends the input.
        var written = 0
        var inputFD: Int32? = stdinPipe[1]
        _ = fcntl(stdinPipe[1], F_SETFL, fcntl(stdinPipe[1], F_GETFL) | O_NONBLOCK)
        defer { if let fd = inputFD { close(fd) } }

        var stderrBytes: [UInt8] = []
        let deadline = SystemClock().now() + Int64(timeout) * 1000
        var status: Int32 = 0
        var outcome = Outcome()
        while true {
            if let fd = inputFD {
                if written < input.count {
                    let n = input.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + written }, input.count - written) }
                    if n > 0 { written += n } else if n < 0 && errno != EAGAIN && errno != EINTR { written = input.count }
                }
                if written >= input.count {
                    close(fd)
                    inputFD = nil
                }
            }
            drain(errors[0], into: &stderrBytes)
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw DeliveryFailure("\(label): waitpid: \(String(cString: strerror(errno)))") }
            if SystemClock().now() >= deadline {
                outcome.timedOut = true
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                break
            }
            usleep(5_000)
        }
        drain(errors[0], into: &stderrBytes)
        outcome.stderr = String(decoding: stderrBytes, as: UTF8.self)
        outcome.exited = (status & 0x7f) == 0
        outcome.code = (status >> 8) & 0xff
        outcome.signal = status & 0x7f
        return outcome
    }

    /// posix_spawn with stdin/stderr wired, stdout to /dev/null, everything else closed.
    func spawn(stdin: Int32, stderr: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        // Nothing else of this process (FastCGI socket, database) leaks into the program.
        for fd in ChildProcess.openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }

        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigmask(&attrs, &none)
        posix_spawnattr_setsigdefault(&attrs, &defaults)
        posix_spawnattr_setflags(&attrs, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let env: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { (argv + (env ?? [])).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = env.map { posix_spawn(&pid, path, &actions, &attrs, argv, $0) } ?? posix_spawn(&pid, path, &actions, &attrs, argv, environ)
        guard rc == 0 else { throw DeliveryFailure("\(label): cannot start \(path): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// The descriptors open in this process (from /proc/self/fd).
    static func openDescriptors() -> [Int32] {
        guard let names = Platform.directoryEntries("/proc/self/fd") else { return [] }
        return names.compactMap { Int32($0) }
    }

    func drain(_ fd: Int32, into out: inout [UInt8]) {
        var buf = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = read(fd, &buf, buf.count)
            guard n > 0 else { return }
            if out.count < 4096 { out += buf.prefix(n) }
        }
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
