import AuthEngine
import JSONValue

/// `gatehouse audit`: the audit log, newest first (docs/operations.md "Audit log").
enum AuditCommand {
    static let spec = Show.spec

    struct Show: Command {
        static let spec = Show.spec("audit", "Show the audit log, newest first: sign-ins, sign-outs, factor changes, revocations, admin actions, key rotations.",
                                    options: CommonOptions.options + [
                                        OptionSpec(name: "project", help: "Only this project (default: every project)."),
                                        OptionSpec(name: "user", help: "Only this user id."),
                                        OptionSpec(name: "since", help: "Only events at or after this time (RFC 3339, e.g. 2026-11-01T00:00:00Z, or a number of hours ago: 24h)."),
                                        OptionSpec(name: "limit", help: "At most this many events (1…100000). Default: 100."),
                                        .flag("json", help: "One JSON object per line."),
                                    ])
        let common: CommonOptions
        let project: String?
        let user: String?
        let since: Millis?
        let limit: Int
        let json: Bool

        init(_ p: ParsedArguments) throws {
            common = CommonOptions(p)
            project = p.string("project")
            user = p.string("user")
            limit = try p.int("limit") ?? 100
            json = p.flag("json")
            guard (1...100_000).contains(limit) else { throw UsageError("--limit must be 1…100000") }
            if let text = p.string("since") {
                if text.hasSuffix("h"), let hours = Int64(text.dropLast()), (0...876_000).contains(hours) {
                    since = SystemClock().now() - hours * 3_600_000
                } else if let ms = RFC3339.parse(text) {
                    since = ms
                } else {
                    throw UsageError("--since: expected an RFC 3339 time (2026-11-01T00:00:00Z) or hours ago (24h)")
                }
            } else {
                since = nil
            }
        }

        func run() throws {
            let config = try common.load()
            let store = try Runtime.open(config.store, migrate: true)
            let rows = try store.auditEvents(project: project, localID: user, since: since, limit: limit)
            for r in rows {
                let e = r.event
                if json {
                    print(JSON.obj(("time", RFC3339.format(r.at)), ("project", e.projectID), ("event", e.event.rawValue), ("actor", e.actor ?? "user"),
                                   ("subject", e.localID), ("client", e.remoteAddress), ("outcome", e.outcome), ("detail", e.detail)).serialized())
                } else {
                    print([RFC3339.format(r.at, fraction: false), e.projectID, e.event.rawValue, e.actor ?? "user", e.localID ?? "-",
                           e.remoteAddress ?? "-", e.outcome, e.detail ?? ""].joined(separator: "  ").trimmingSpaces)
                }
            }
        }
    }
}
