import AuthEngine
import AuthStore

/// `gatehouse sms holds …`: the SMS destinations held by pumping protection (docs/security.md
/// "SMS pumping").
enum SMSCommand {
    static let spec = CommandSpec(name: "sms", abstract: "SMS delivery tools.", subcommands: [holds])
    static let holds = CommandSpec(name: "holds", abstract: "List or release SMS destinations held by pumping protection.",
                                   subcommands: [List.spec, Release.spec])

    struct List: Command {
        static let spec = List.spec("list", "List the held prefixes and regions (project, kind, key, when, and the rate that held it).",
                                    options: CommonOptions.options + [OptionSpec(name: "project", help: "Only this project (default: every project).")])
        let common: CommonOptions
        let project: String?
        init(_ p: ParsedArguments) { common = CommonOptions(p); project = p.string("project") }

        func run() throws {
            let config = try common.load()
            let pid = try project.map { try config.projectID($0) }
            let store = try Runtime(config: config).openStore()
            let holds = try SMSPumpingGuard.activeHolds(store: store, project: pid, at: SystemClock().now())
            if holds.isEmpty { print("no SMS destination is held"); return }
            for h in holds {
                let until = h.expiresAt.map { "until \($0 / 1000)" } ?? "until released"
                print("\(h.projectID)  \(h.kind.rawValue)  \(h.key)  held at \(h.heldAt / 1000) (\(h.recentCount) SMS in the last hour, "
                      + "\(h.baselineCount) in the 24 hours before)  \(until)")
            }
        }
    }

    struct Release: Command {
        static let spec = Release.spec("release", "Release a held prefix (+3712012) or region (LV); it is not held again automatically for 24 hours.",
                                       options: CommonOptions.options + [OptionSpec(name: "project", help: "Project id (default: the first project).")],
                                       arguments: [ArgumentSpec(name: "prefix", help: "The held prefix, or region code, as `sms holds list` shows it.")])
        let common: CommonOptions
        let project: String?
        let key: String
        init(_ p: ParsedArguments) throws { common = CommonOptions(p); project = p.string("project"); key = try p.required("prefix") }

        func run() throws {
            let config = try common.load()
            let pid = try config.projectID(project)
            let store = try Runtime(config: config).openStore()
            guard try DeliveryOperations(store: store, clock: SystemClock(), actor: "cli").releaseHold(key, project: pid) else {
                print("no hold of \(key) in project \(pid)")
                throw ExitStatus(1)
            }
            config.log.warning("SMS pumping: \(key) of project \(pid) released by the operator")
            print("released \(key) in project \(pid)")
        }
    }
}
