import ArgumentParser
import AuthEngine
import AuthStore
import AuthWeb
import FastCGI
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import HTTP

/// `gatehouse`: the FastCGI responder and its operator commands.
struct Gatehouse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "Passwordless sign-in for sites behind nginx (FastCGI responder).",
        version: Runtime.version,
        subcommands: [Serve.self, Dev.self, Keys.self, ConfigCommand.self, Tokens.self, AppVerifyCommand.self, Users.self, Seed.self],
        defaultSubcommand: Serve.self
    )
}

struct CommonOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Configuration file (JSON). Default: $GATEHOUSE_CONFIG, else the embedded dev default.")
    var config: String?

    @Option(name: .long, help: "Data folder (overrides data_dir).")
    var data: String?

    func load() throws -> Config {
        var (c, problems) = Config.load(path: config)
        if let data { c.dataDir = data }
        guard problems.isEmpty else {
            throw ValidationError("configuration \(c.source) has \(problems.count) problem(s):\n  - " + problems.joined(separator: "\n  - "))
        }
        return c
    }
}

/// Runs the FastCGI responder (or CGI mode when started by a CGI server).
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve FastCGI on a unix socket, host:port, or the socket inherited on fd 0; CGI when started as a CGI program.")
    @OptionGroup var common: CommonOptions
    @Option(help: "Unix socket path to create.") var socket: String?
    @Option(help: "host:port to listen on.") var listen: String?
    @Option(help: "Worker threads.") var workers: Int?

    func run() throws {
        var config = try common.load()
        if let socket { config.socket = socket }
        if let listen { config.listen = listen }
        if let workers { config.workers = workers }
        let cgi = getenv("GATEWAY_INTERFACE") != nil && config.socket == nil && config.listen == nil
        if cgi {
            try serveCGI(config)
            return
        }
        Signals.blockTermination()
        let runtime = try Runtime(config: config)
        let outbox = try runtime.startOutbox()
        let server = try startServer(runtime)
        let sig = Signals.wait()
        Log.info("signal \(sig): stopping; finishing in-flight requests")
        server.stop()
        server.wait()
        outbox.stop()
        Log.info("stopped")
    }
}

/// One CGI request: templates are parsed as they are rendered, not all at start; the request is
/// served on the connection the start-up opened (one database open and schema check), configured
/// for one request, and its reads share one read transaction (see `SQLiteConnection.sharedRead`).
func serveCGI(_ config: Config) throws {
    SQLiteConnection.configureForOneRequest()
    try Runtime.makeDirectories(config.dataDir)
    let store = try SQLiteStore(path: config.databasePath, migrate: false)
    try store.db.sharedRead {
        try Runtime.migrateIfBehind(store)
        let runtime = try Runtime(config: config, validateTemplates: false, store: store)
        CGIResponder.serveOne(maxBodyBytes: config.maxBodyBytes, handler: runtime.app.handler(store: store), log: { Log.error($0) })
    }
}

/// CGI mode without the command-line parser, whose start-up costs a fifth of a CGI request: taken
/// only when `gatehouse [serve] [--config F] [--data D]` would serve CGI with a valid
/// configuration. Anything else (other arguments, configuration problems, a socket configured)
/// goes through `Gatehouse.main()`, which handles and reports it as always.
func serveCGIWithoutParser() -> Bool {
    guard getenv("GATEWAY_INTERFACE") != nil,
          let options = cgiOptions(Array(CommandLine.arguments.dropFirst())) else { return false }
    var (config, problems) = Config.load(path: options["config"])
    if let data = options["data"] { config.dataDir = data }
    guard problems.isEmpty, config.socket == nil, config.listen == nil else { return false }
    do { try serveCGI(config) } catch { Gatehouse.exit(withError: error) }
    return true
}

/// `[serve] [--config F|-c F|--config=F] [--data D|--data=D]`, each at most once, as
/// `config`/`data` → value; nil for anything else.
func cgiOptions(_ args: [String]) -> [String: String]? {
    var rest = args[...]
    if rest.first == "serve" { rest = rest.dropFirst() }
    var options: [String: String] = [:]
    while let arg = rest.popFirst() {
        let name: String, value: String?
        if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
            (name, value) = (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
        } else {
            (name, value) = (arg, nil)
        }
        let key: String
        switch name {
        case "--config", "-c": key = "config"
        case "--data": key = "data"
        default: return nil
        }
        guard options[key] == nil, let v = value ?? rest.popFirst(), !v.hasPrefix("-") || value != nil else { return nil }
        options[key] = v
    }
    return options
}

/// Opens the socket and starts workers (one store connection each, opened on first use).
func startServer(_ runtime: Runtime, socketOverride: String? = nil, socketMode: mode_t? = nil) throws -> FastCGIServer {
    let c = runtime.config
    let address: ListenAddress
    if let s = socketOverride ?? c.socket { address = .unix(path: s, mode: socketMode ?? c.socketMode) }
    else if let l = c.listen { address = .tcp(l) }
    else if !CGIResponder.stdinIsNotASocket { address = .inherited }
    else { throw ValidationError("nowhere to listen: set listen.socket or listen.tcp (or start under spawn-fcgi / systemd socket activation)") }
    let server = FastCGIServer(options: .init(address: address, workers: c.workers, maxBodyBytes: c.maxBodyBytes), log: { Log.error($0) })
    try server.open()
    try server.start { _ in
        // Each worker opens its own connection on its first request, on its own thread: an idle
        // worker holds no connection (the start-up already opened, migrated and checked the
        // database). A failed open answers 502 and is tried again on the next request.
        var handler: ((Request) -> Response)?
        return { request in
            if handler == nil { handler = runtime.app.handler(store: try runtime.openStore()) }
            return handler!(request)
        }
    }
    Log.info("gatehouse \(Runtime.version) (\(c.mode.rawValue) mode) serving on \(address) with \(c.workers) workers; store \(c.databasePath)")
    return server
}

/// Signing-key commands.
struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage signing keys.", subcommands: [Rotate.self, List.self])

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a new signing key; older keys stay published for 14 days + 1 hour.")
        @OptionGroup var common: CommonOptions
        func run() throws {
            let runtime = try Runtime(config: try common.load())
            let rec = try runtime.app.keyRing.rotate(store: try runtime.openStore(), random: runtime.app.random)
            print("new signing key \(rec.kid)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List published signing keys.")
        @OptionGroup var common: CommonOptions
        func run() throws {
            let runtime = try Runtime(config: try common.load())
            for k in try runtime.openStore().publishedSigningKeys(at: SystemClock().now()) {
                let state = k.retiredAt == nil ? "signing" : "published until \(k.expiresAt.map { String($0 / 1000) } ?? "-")"
                print("\(k.kid)  \(k.algorithm)  created \(k.createdAt / 1000)  \(state)")
            }
        }
    }
}

/// `gatehouse config check`: every problem at once.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "config", abstract: "Check the configuration.", subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Report every problem in the configuration; exit 1 if any.")
        @Option(name: .shortAndLong) var config: String?
        func run() throws {
            var (c, problems) = Config.load(path: config)
            do {
                try Templates(directory: try Runtime.resourcesDirectory(c)).validateAll()
            } catch {
                problems.append("templates: \(error)")
            }
            problems += Runtime.libraryProblems()
            if problems.isEmpty {
                print("configuration \(c.source): OK (\(c.mode.rawValue) mode, \(c.projects.count) project(s): \(c.projects.map(\.id).joined(separator: ", ")))")
                return
            }
            print("configuration \(c.source): \(problems.count) problem(s)")
            for p in problems { print("  - \(p)") }
            throw ExitCode(1)
        }
    }
}

/// Token tools for operators and tests.
struct Tokens: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Token tools.", subcommands: [Mint.self])

    struct Mint: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print an ID token for a user, signed with the current key.")
        @OptionGroup var common: CommonOptions
        @Option(help: "User id.") var uid: String
        @Option(help: "Project id (default: the first project).") var project: String?
        @Flag(help: "Create the account if it does not exist.") var create = false

        func run() throws {
            let runtime = try Runtime(config: try common.load())
            let store = try runtime.openStore()
            let pid = project ?? runtime.config.projects[0].id
            var account = try store.account(project: pid, localID: uid)
            if account == nil, create {
                let a = Account(projectID: pid, localID: uid, createdAt: SystemClock().now())
                try store.insertAccount(a)
                account = a
            }
            guard let account else { throw ValidationError("no user \(uid) in project \(pid)") }
            print(try runtime.app.tokens.mintIDToken(for: account, provider: "custom", store: store))
        }
    }
}

if !serveCGIWithoutParser() { Gatehouse.main() }
