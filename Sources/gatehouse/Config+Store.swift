import AuthEngine
import AuthStore
#if canImport(Glibc)
import Glibc
#endif
import JSONValue

/// Where the store is (`store.url`, `GATEHOUSE_STORE_URL`, `--store`): the embedded SQLite file
/// (default) or a PostgreSQL database shared by every instance (docs/scaling.md).
enum StoreLocation: Equatable {
    case sqlite(path: String)
    case postgresql(url: String)

    /// `sqlite:///absolute/path` or `sqlite:relative/path`; `postgresql://…` or `postgres://…`
    /// (a libpq URI: user, password, host, port, database, `?sslmode=…`; what it leaves out comes
    /// from libpq's environment and service files). nil for anything else.
    static func parse(_ url: String) -> StoreLocation? {
        if url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") { return .postgresql(url: url) }
        if url.hasPrefix("sqlite://") {
            let path = String(url.dropFirst("sqlite://".count))
            return path.isEmpty ? nil : .sqlite(path: path)
        }
        if url.hasPrefix("sqlite:") {
            let path = String(url.dropFirst("sqlite:".count))
            return path.isEmpty ? nil : .sqlite(path: path)
        }
        return nil
    }

    /// For logs and `config check`: the PostgreSQL password is never shown.
    var display: String {
        switch self {
        case let .sqlite(path): return "sqlite://" + path
        case let .postgresql(url): return StoreLocation.redacted(url)
        }
    }

    static func redacted(_ url: String) -> String {
        guard let scheme = url.firstRange(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let userInfo = url[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }
}

extension Config {
    /// The store in use: `storeURL` when set, else the SQLite file in the data folder.
    var store: StoreLocation {
        if let url = storeURL, let location = StoreLocation.parse(url) {
            if case let .sqlite(path) = location, !path.hasPrefix("/") { return .sqlite(path: dataDir + "/" + path) }
            return location
        }
        return .sqlite(path: databasePath)
    }

    static func storeProblems(_ url: String?) -> [String] {
        guard let url else { return [] }
        return StoreLocation.parse(url) == nil ? ["store.url: expected sqlite:///path, postgresql://… or postgres://…"] : []
    }
}

/// What every command opens: a store with every port, on either backend.
typealias AppStore = GatehouseStore & HousekeepingStore

extension Runtime {
    /// A new connection to the configured store (one per thread), migrated on open for
    /// PostgreSQL only when `migrate` (the start-up migrates once, under the advisory lock).
    static func open(_ location: StoreLocation, migrate: Bool = false) throws -> any AppStore {
        switch location {
        case let .sqlite(path):
            let store = try SQLStore(path: path, migrate: false)
            if migrate { try migrateIfBehind(store) }
            return store
        case let .postgresql(url):
            return try SQLStore(url: url, migrate: migrate, now: SystemClock().now())
        }
    }
}

/// `gatehouse store copy`: moves a deployment between stores (docs/scaling.md "Moving to
/// PostgreSQL").
enum StoreCommand {
    static let spec = CommandSpec(name: "store", abstract: "Store tools.", subcommands: [Copy.spec])

    struct Copy: Command {
        static let spec = Copy.spec("copy", "Copy every table from one store to another (SQLite ↔ PostgreSQL), verified by counts.",
                                    options: [
                                        OptionSpec(name: "from", help: "Source store URL (sqlite:///path or postgresql://…)."),
                                        OptionSpec(name: "to", help: "Target store URL."),
                                        .flag("force", help: "Empty the target's tables first when it holds rows."),
                                    ])
        let from: StoreLocation
        let to: StoreLocation
        let force: Bool

        init(_ p: ParsedArguments) throws {
            guard let f = StoreLocation.parse(try p.required("from")) else { throw UsageError("--from: expected sqlite:///path or postgresql://…") }
            guard let t = StoreLocation.parse(try p.required("to")) else { throw UsageError("--to: expected sqlite:///path or postgresql://…") }
            guard f != t else { throw UsageError("--from and --to are the same store") }
            from = f; to = t; force = p.flag("force")
        }

        static func endpoint(_ l: StoreLocation) throws -> SQLStore {
            switch l {
            case let .sqlite(path): return try SQLStore(path: path)
            case let .postgresql(url): return try SQLStore(url: url, migrate: true, now: SystemClock().now())
            }
        }

        func run() throws {
            if case let .sqlite(path) = from, access(path, F_OK) != 0 { throw UsageError("--from: no database at \(path)") }
            let copy = StoreCopy(from: try Copy.endpoint(from), to: try Copy.endpoint(to))
            let existing = try copy.targetRows()
            if existing > 0 && !force { throw UsageError("the target already holds \(existing) rows; --force empties it first") }
            let counts = try copy.run(replace: existing > 0) { table, rows in print("\(table): \(rows) rows") }
            print("copied \(counts.reduce(0) { $0 + $1.1 }) rows from \(from.display) to \(to.display); every table's count matches")
        }
    }
}
