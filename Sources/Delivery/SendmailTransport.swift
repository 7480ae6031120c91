import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
import JSONValue

/// The `sendmail` transport: runs `sendmail -t -i` (or `email.command`) with the whole message on
/// stdin; exit status 0 is success, anything else is retried by the outbox worker.
struct SendmailTransport: MessageSender {
    static let defaultCommand = ["/usr/sbin/sendmail", "-t", "-i"]

    let settings: EmailSenderSettings
    let command: [String]
    let timeout: Int

    var keepsBody: Bool { false }
    var timeLimit: Millis { Millis(timeout) * 1000 }

    static func command(_ config: JSON) -> [String] {
        config["command"]?.arrayValue?.compactMap(\.stringValue) ?? defaultCommand
    }

    static func problems(_ config: JSON) -> [String] {
        if let c = config["command"] {
            guard let arr = c.arrayValue, !arr.isEmpty, arr.allSatisfy({ $0.stringValue != nil }) else {
                return ["email.command: expected a non-empty array of strings, e.g. [\"/usr/sbin/sendmail\", \"-t\", \"-i\"]"]
            }
        }
        let exe = command(config)[0]
        guard resolve(exe) != nil else { return ["email.command: '\(exe)' is not an executable file"] }
        return []
    }

    /// The executable's path: as given when it contains `/`, else found on `PATH`.
    static func resolve(_ exe: String) -> String? {
        if exe.contains("/") { return Platform.isExecutableFile(exe) ? exe : nil }
        let path = Platform.environment("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin"
        for dir in path.split(separator: ":") where Platform.isExecutableFile("\(dir)/\(exe)") { return "\(dir)/\(exe)" }
        return nil
    }

    func send(_ m: OutboxMessage) throws {
        guard let exe = SendmailTransport.resolve(command[0]) else { throw PermanentDeliveryError("sendmail: \(command[0]) not found") }
        let child = ChildProcess(label: "sendmail", path: exe, arguments: Array(command.dropFirst()), environment: nil, timeout: timeout)
        let outcome = try child.run(input: settings.mime(for: m).rendered())
        if outcome.timedOut { throw SendmailError(description: "sendmail: \(command[0]) did not finish within \(timeout) s") }
        guard outcome.exited && outcome.code == 0 else {
            let status = outcome.exited ? outcome.code : outcome.signal
            throw SendmailError(description: "sendmail: \(command[0]) exited with \(status): \(outcome.stderr.prefix(300))")
        }
    }
}

/// A failed sendmail run (retried).
struct SendmailError: Error, CustomStringConvertible {
    let description: String
}
