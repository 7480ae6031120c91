import AuthEngine

/// The command provider: runs `<command> <E.164 number>` with the SMS text on standard input.
/// Exit 0 = sent; exit 65 (EX_DATAERR: the number or text was refused) = permanent; any other
/// exit, a signal or the timeout (the program is killed) = retried. The program gets a small
/// environment (`PATH`, `LANG`, `GATEHOUSE_PROJECT`, `GATEHOUSE_MESSAGE_ID`), default signal
/// handling and no inherited descriptors beyond its three standard ones.
struct CommandSender: MessageSender {
    let path: String
    let timeout: Int

    var keepsBody: Bool { false }
    var timeLimit: Millis { Millis(timeout) * 1000 }

    func send(_ m: OutboxMessage) throws {
        let child = ChildProcess(label: "command", path: path, arguments: [m.recipient],
                                 environment: ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "GATEHOUSE_PROJECT=\(m.projectID)",
                                               "GATEHOUSE_MESSAGE_ID=\(m.id)"],
                                 timeout: timeout)
        // The text is short (an SMS).
        let outcome = try child.run(input: Array(m.body.utf8))
        let said = String(decoding: Array(outcome.stderr.utf8.prefix(300)), as: UTF8.self).trimmingWhitespace
        let suffix = said.isEmpty ? "" : ": " + said
        if outcome.timedOut { throw DeliveryFailure("command: killed after \(timeout) s" + suffix) }
        if outcome.exited && outcome.code == 0 { return }
        if outcome.exited && outcome.code == 65 { throw PermanentDeliveryError("command: exit 65 (refused)" + suffix) }
        throw DeliveryFailure((outcome.exited ? "command: exit \(outcome.code)" : "command: killed by signal \(outcome.signal)") + suffix)
    }
}
