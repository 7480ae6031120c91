import AuthEngine
import AuthStore
#if canImport(Glibc)
import Glibc
#endif

extension Runtime {
    /// One housekeeping run on its own connection: the outbox worker's schedule calls it, and
    /// `gatehouse housekeeping` for deployments without a long-running process (CGI) or to purge now.
    @discardableResult
    static func housekeeping(_ location: StoreLocation, retention: Housekeeping.Retention, log: Log) throws -> [PurgeKind: Int] {
        let store = try Runtime.open(location)
        // A short sleep between batches lets the requests' writes take the write lock.
        let run = Housekeeping(store: store, clock: SystemClock(), retention: retention, pause: { usleep(5_000) })
        let deleted = try run.run()
        let counts = PurgeKind.allCases.compactMap { k in deleted[k].flatMap { $0 > 0 ? "\(k.rawValue) \($0)" : nil } }
        if !counts.isEmpty { log.info("housekeeping: deleted " + counts.joined(separator: ", ")) }
        return deleted
    }
}

/// `gatehouse housekeeping`: purge now what the schedule purges every 10 minutes.
struct HousekeepingCommand: Command {
    static let spec = HousekeepingCommand.spec(
        "housekeeping", "Delete expired and old records now (the server does it every 10 minutes); prints the count per table.",
        options: CommonOptions.options)
    let common: CommonOptions
    init(_ p: ParsedArguments) { common = CommonOptions(p) }

    func run() throws {
        let config = try common.load()
        _ = try Runtime.open(config.store, migrate: true)
        let deleted = try Runtime.housekeeping(config.store, retention: config.retention, log: config.log)
        for k in PurgeKind.allCases { print("\(k.rawValue)\t\(deleted[k] ?? 0)") }
    }
}
