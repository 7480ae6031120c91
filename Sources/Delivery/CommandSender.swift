import AuthEngine
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The command provider: runs `<command> <E.164 number>` with the SMS text on standard input.
/// Exit 0 = sent; exit 65 (EX_DATAERR: the number or text was refused) = permanent; any other
/// exit, a signal or the timeout (the program is killed) = retried. The program gets a small
/// environment (`PATH`, `LANG`, `GATEHOUSE_PROJECT`, `GATEHOUSE_MESSAGE_ID`), default signal
/// handling and no inherited descriptors beyond its three standard ones.
struct CommandSender: MessageSender {
    let path: String
    let timeout: Int

    var keepsBody: Bool { false }

    func send(_ m: OutboxMessage) throws {
        var input: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        guard pipe(&input) == 0 else { throw DeliveryFailure("command: pipe: \(String(cString: strerror(errno)))") }
        guard pipe(&errors) == 0 else {
            close(input[0]); close(input[1])
            throw DeliveryFailure("command: pipe: \(String(cString: strerror(errno)))")
        }
        let pid: pid_t
        do {
            pid = try spawn(m, stdin: input[0], stderr: errors[1])
        } catch {
            for fd in input + errors { close(fd) }
            throw error
        }
        close(input[0])
        close(errors[1])
        _ = fcntl(errors[0], F_SETFL, fcntl(errors[0], F_GETFL) | O_NONBLOCK)
        defer { close(errors[0]) }

        // The text is short (an SMS); a program that exits without reading it gets EPIPE, not us.
        var text = Array(m.body.utf8)
        text.withUnsafeMutableBytes { buf in
            var off = 0
            while off < buf.count {
                let n = write(input[1], buf.baseAddress! + off, buf.count - off)
                if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
                off += n
            }
        }
        close(input[1])

        var stderrText: [UInt8] = []
        let deadline = SystemClock().now() + Int64(timeout) * 1000
        var status: Int32 = 0
        var timedOut = false
        while true {
            drain(errors[0], into: &stderrText)
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw DeliveryFailure("command: waitpid: \(String(cString: strerror(errno)))") }
            if SystemClock().now() >= deadline {
                timedOut = true
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                break
            }
            usleep(5_000)
        }
        drain(errors[0], into: &stderrText)
        let said = String(decoding: stderrText.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let suffix = said.isEmpty ? "" : ": " + said
        if timedOut { throw DeliveryFailure("command: killed after \(timeout) s" + suffix) }
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        if exited && code == 0 { return }
        if exited && code == 65 { throw PermanentDeliveryError("command: exit 65 (refused)" + suffix) }
        throw DeliveryFailure((exited ? "command: exit \(code)" : "command: killed by signal \(status & 0x7f)") + suffix)
    }

    /// posix_spawn with stdin/stderr wired, stdout to /dev/null, everything else closed.
    func spawn(_ m: OutboxMessage, stdin: Int32, stderr: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        // Nothing else of this process (FastCGI socket, database) leaks into the program.
        for fd in openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }

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

        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), strdup(m.recipient), nil]
        let environment = ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "GATEHOUSE_PROJECT=\(m.projectID)",
                           "GATEHOUSE_MESSAGE_ID=\(m.id)"]
        let env: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + env).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attrs, argv, env)
        guard rc == 0 else { throw DeliveryFailure("command: cannot start \(path): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// The descriptors open in this process (from /proc/self/fd).
    func openDescriptors() -> [Int32] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
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
