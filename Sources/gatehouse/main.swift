import AuthEngine
import AuthStore
import AuthWeb
import FastCGI
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import JSONValue

/// A command of the tool, made from its parsed options and run.
protocol Command: SendableMetatype {
    init(_ p: ParsedArguments) throws
    func run() throws
}

extension Command {
    static func spec(_ name: String, _ abstract: String, options: [OptionSpec] = [], arguments: [ArgumentSpec] = []) -> CommandSpec {
        CommandSpec(name: name, abstract: abstract, options: options, arguments: arguments, run: { try Self($0).run() })
    }
}

/// `gatehouse`: the FastCGI responder and its operator commands.
enum Gatehouse {
    static let spec = CommandSpec(
        name: "gatehouse",
        abstract: "Passwordless sign-in for sites behind nginx (FastCGI responder).",
        subcommands: [Serve.spec, Dev.spec, Keys.spec, ConfigCommand.spec, Tokens.spec, AppVerifyCommand.spec, Users.spec, OperatorsCommand.spec, AuditCommand.spec, OutboxCommand.spec, Seed.spec, SMSCommand.spec, APNsCommand.spec, StoreCommand.spec, HousekeepingCommand.spec],
        defaultSubcommand: "serve"
    )

    static func main() -> Never { runCommandLine(spec, version: Runtime.version, arguments: Array(CommandLine.arguments.dropFirst())) }
}

/// `--config` and `--data`, shared by the commands that open the store.
struct CommonOptions {
    static let options = [
        OptionSpec(name: "config", short: "c", help: "Configuration file (JSON). Default: $GATEHOUSE_CONFIG, else the embedded dev default."),
        OptionSpec(name: "data", help: "Data folder (overrides data_dir)."),
    ]
    var config: String?
    var data: String?

    init(_ p: ParsedArguments) {
        config = p.string("config")
        data = p.string("data")
    }

    func load() throws -> Config {
        var (c, problems) = Config.load(path: config)
        if let data { c.dataDir = data }
        guard problems.isEmpty else {
            throw UsageError("configuration \(c.source) has \(problems.count) problem(s):\n  - " + problems.joined(separator: "\n  - "))
        }
        return c
    }
}

/// Runs the FastCGI responder (or CGI mode when started by a CGI server).
struct Serve: Command {
    static let spec = Serve.spec("serve", "Serve FastCGI on a unix socket, host:port, or the socket inherited on fd 0; CGI when started as a CGI program.",
                                 options: CommonOptions.options + [
                                     OptionSpec(name: "socket", help: "Unix socket path to create."),
                                     OptionSpec(name: "listen", help: "host:port to listen on."),
                                     OptionSpec(name: "workers", help: "Worker threads."),
                                     OptionSpec(name: "store", help: "Store URL: sqlite:///path (default: the data folder's file) or postgresql://…"),
                                 ])
    var common: CommonOptions
    var store: String?
    var socket: String?
    var listen: String?
    var workers: Int?

    init(_ p: ParsedArguments) throws {
        common = CommonOptions(p)
        store = p.string("store")
        socket = p.string("socket")
        listen = p.string("listen")
        workers = try p.int("workers")
        if let w = workers, !(1...256).contains(w) { throw UsageError("--workers: expected 1…256") }
    }

    func run() throws {
        var config = try common.load()
        if let store {
            guard StoreLocation.parse(store) != nil else { throw UsageError("--store: expected sqlite:///path, postgresql://… or postgres://…") }
            config.storeURL = store
        }
        if let socket { config.socket = socket }
        if let listen {
            guard config.trustedNetwork || Config.isLoopback(listenAddress: listen) else {
                throw UsageError("--listen \(listen) is not a loopback address; FastCGI must be reachable only by nginx (or set listen.trusted_network)")
            }
            config.listen = listen
        }
        if let workers { config.workers = workers }
        let cgi = getenv("GATEWAY_INTERFACE") != nil && config.socket == nil && config.listen == nil
        if cgi {
            try serveCGI(config)
            return
        }
        Signals.blockTermination()
        let runtime = try Runtime(config: config, metrics: true)
        let outbox = try runtime.makeOutbox()
        let app = try runtime.webApp(outbox: outbox)
        outbox.start()
        let server = try startServer(runtime, app: app)
        let sig = Signals.wait()
        runtime.services.log.info("signal \(sig): stopping; finishing in-flight requests and the message being sent")
        // The outbox finishes its message in hand while the requests drain (both bounded, see
        // OutboxWorker.stop), well within the unit's TimeoutStopSec.
        outbox.requestStop()
        server.stop()
        server.wait()
        outbox.stop()
        runtime.services.log.info("stopped")
    }
}

/// One CGI request: templates are parsed as they are rendered, not all at start; the request is
/// served on the connection the start-up opened (one database open and schema check), configured
/// for one request, and its reads share one read transaction (see `SQLiteConnection.sharedRead`).
func serveCGI(_ config: Config) throws {
    guard case let .sqlite(path) = config.store else {
        // A PostgreSQL store: one connection for the one request (docs/scaling.md "CGI").
        let store = try Runtime.open(config.store, migrate: true)
        let app = try Runtime(config: config, store: store, deleteExpiredKeys: false).webApp(oneRequest: true)
        CGIResponder.serveOne(maxBodyBytes: app.settings.maxBodyBytes, tooLarge: WebApp.payloadTooLarge(limit:),
                              routeBodyLimit: { [app] in app.bodyLimit(method: $0, path: $1) },
                              handler: app.handler(store: store), log: { [log = config.log] in log.error($0) })
        return
    }
    SQLiteConnection.configureForOneRequest()
    try Runtime.makeDirectories(config.dataDir)
    let store = try SQLStore(path: path, migrate: false)
    guard let sqlite = store.sqlite else { throw ConfigError("CGI: the SQLite store has no SQLite connection") }
    try sqlite.sharedRead {
        try Runtime.migrateIfBehind(store)
        let app = try Runtime(config: config, store: store, deleteExpiredKeys: false).webApp(oneRequest: true)
        CGIResponder.serveOne(maxBodyBytes: app.settings.maxBodyBytes, tooLarge: WebApp.payloadTooLarge(limit:),
                              routeBodyLimit: { [app] in app.bodyLimit(method: $0, path: $1) },
                              handler: app.handler(store: store), log: { [log = config.log] in log.error($0) })
    }
}

/// Opens the socket and starts workers (one store connection each, opened on first use).
func startServer(_ runtime: Runtime, app: WebApp, socketOverride: String? = nil, socketMode: mode_t? = nil) throws -> FastCGIServer {
    let c = runtime.config
    let address: ListenAddress
    if let s = socketOverride ?? c.socket { address = .unix(path: s, mode: socketMode ?? c.socketMode) }
    else if let l = c.listen { address = .tcp(l) }
    else if !CGIResponder.stdinIsNotASocket { address = .inherited }
    else { throw UsageError("nowhere to listen: set listen.socket or listen.tcp (or start under spawn-fcgi / systemd socket activation)") }
    let server = FastCGIServer(options: .init(address: address, workers: c.workers, maxBodyBytes: app.settings.maxBodyBytes,
                                              tooLarge: { WebApp.payloadTooLarge(limit: $0) },
                                              routeBodyLimit: { [app] in app.bodyLimit(method: $0, path: $1) }),
                               log: { [log = runtime.services.log] in log.error($0) })
    try server.open()
    try server.start { _ in
        // Each worker opens its own connection on its first request, on its own thread: an idle
        // worker holds no connection (the start-up already opened, migrated and checked the
        // database). A failed open answers 502 and is tried again on the next request.
        var handler: ((Request) -> Response)?
        return { request in
            if let handler { return handler(request) }
            let opened = app.handler(store: try runtime.openStore())
            handler = opened
            return opened(request)
        }
    }
    runtime.services.log.info("gatehouse \(Runtime.version) (\(c.mode.rawValue) mode) serving on \(address) with \(c.workers) workers; store \(c.store.display)")
    return server
}

Gatehouse.main()
