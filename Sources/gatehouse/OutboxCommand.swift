import AuthEngine

/// `gatehouse outbox deliver`: send what CGI requests queued, once, for hosts where no
/// long-running process may run (cron; docs/cgi.md). A `serve` process does this continuously.
enum OutboxCommand {
    static let spec = CommandSpec(name: "outbox", abstract: "Deliver queued SMS, email and pushes.", subcommands: [Deliver.spec])

    struct Deliver: Command {
        static let spec = Deliver.spec("deliver", "Send every message due now (retries wait for their backoff); prints the count per kind.",
                                       options: CommonOptions.options)
        let common: CommonOptions
        init(_ p: ParsedArguments) { common = CommonOptions(p) }

        func run() throws {
            let runtime = try Runtime(config: try common.load())
            let workers = try runtime.makeOutbox()
            let counts = try workers.all.map { try $0.drain() }
            print("messages\t\(counts.first ?? 0)\npushes\t\(counts.dropFirst().reduce(0, +))")
        }
    }
}
