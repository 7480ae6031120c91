import AuthEngine

/// The command provider: runs `<command> <E.164 number>` with the SMS text on standard input.
/// Exit 0 = sent; exit 65 (EX_DATAERR: the number or text was refused) = permanent; any other
/// exit, a signal or the timeout (the program is killed) = retried; after a signal or the timeout
/// the program may have sent it, so a message is retried with this provider only. It carries
/// texts only: its interface has no way to say a message is a call or a WhatsApp template. The
/// program gets a small
/// environment (`PATH`, `LANG`, `GATEHOUSE_PROJECT`, `GATEHOUSE_MESSAGE_ID`), default signal
/// handling and no inherited descriptors beyond its three standard ones.
struct CommandSender: MessageSender {
    var name = "command"
    let path: String
    let timeout: Int

    var provider: String { name }
    func carries(_ channel: OutboxMessage.Channel) -> Bool { channel == .sms }

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
        if outcome.timedOut { throw UncertainDelivery(provider: name, underlying: "\(name): killed after \(timeout) s" + suffix) }
        if outcome.exited && outcome.code == 0 { return }
        if outcome.exited && outcome.code == 65 { throw PermanentDeliveryError("\(name): exit 65 (refused)" + suffix, provider: name) }
        if !outcome.exited { throw UncertainDelivery(provider: name, underlying: "\(name): killed by signal \(outcome.signal)" + suffix) }
        throw DeliveryFailure("\(name): exit \(outcome.code)" + suffix, provider: name)
    }
}
