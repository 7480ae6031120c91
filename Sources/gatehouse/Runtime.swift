import AuthEngine
import AuthStore
import AuthWeb
import Delivery
#if canImport(Glibc)
import Glibc
#endif

/// The composition root: configuration → the store, the engine's services (`AuthServices`),
/// and, for the commands that serve, the outbox worker and the web app. Every command starts here.
struct Runtime {
    static let version = "0.1.0"

    let config: Config
    let services: AuthServices

    /// Migrates the database and makes sure a signing key exists before anything uses them.
    /// `store`: the connection to do that on (CGI serves on it); else one opened for that.
    /// `deleteExpiredKeys`: also delete signing keys whose publication ended (a write
    /// transaction); CGI leaves that to the next rotation or start of any other command.
    /// `metrics`: a long-running responder (`serve`, `dev`) records metrics when the configuration
    /// allows; CGI mode and the other commands record none.
    init(config: Config, store: (any AppStore)? = nil, deleteExpiredKeys: Bool = true, metrics: Bool = false) throws {
        var config = config
        // Dev mode makes its TOTP key on first start (production names its file: `config check`).
        if let problem = config.loadTOTPKey(create: true).first { throw ConfigError(problem) }
        self.config = config
        // The data folder holds the SQLite file; a PostgreSQL deployment (a CGI program among
        // them, whose working folder may not be writable) needs none.
        if case .sqlite = config.store { try Runtime.makeDirectories(config.dataDir) }
        services = AuthServices(telemetry: metrics && config.metricsEnabled ? Telemetry(enabled: true) : .off,
                               log: config.log)
        let keyStore = try store ?? Runtime.open(config.store, migrate: true)
        try services.keyRing.ensureKey(store: keyStore, random: services.random, deleteExpired: deleteExpiredKeys)
    }

    /// The web app over these services. Every template is parsed now so a broken one fails at
    /// start, and the routes' literal paths are indexed, except with `oneRequest` (CGI mode, where
    /// each request is a new process: it parses only what it renders and walks the route table
    /// once). `outbox`: the worker a committed message wakes (none in CGI mode).
    /// `/__/auth/metrics` is answered when the services record metrics.
    func webApp(oneRequest: Bool = false, outbox: OutboxWorkers? = nil) throws -> WebApp {
        let templates = try Templates(directory: try Runtime.resourcesDirectory(config), log: services.log)
        if !oneRequest { try templates.validateAll() }
        var settings = WebSettings(projects: config.projects, devMode: config.mode == .dev, publicOrigin: config.publicOrigin,
                                   adminToken: config.adminToken, version: Runtime.version)
        settings.maxBodyBytes = config.maxBodyBytes
        settings.maxImportBodyBytes = config.maxImportBodyBytes
        settings.receiptSources = SMSProviders.receiptSources(config.sms)
        var exposition: (@Sendable () -> [UInt8])?
        if let registry = services.telemetry.registry { exposition = { registry.exposition() } }
        var notify: @Sendable () -> Void = {}
        if let outbox { notify = { outbox.wake() } }
        return WebApp(settings: settings, services: services, templates: templates, outboxNotifier: notify,
                      externalVerifier: SiteVerifier(), metricsExposition: exposition, indexRoutes: !oneRequest)
    }

    /// Applies the migrations the database lacks; a current schema costs one read.
    static func migrateIfBehind(_ store: SQLStore) throws {
        try Schema.migrate(store.db, now: SystemClock().now())
    }

    /// `mkdir -p` with mode 0755 (an existing folder is fine).
    static func makeDirectories(_ path: String) throws {
        var isDir = stat()
        if stat(path, &isDir) == 0, (isDir.st_mode & S_IFMT) == S_IFDIR { return }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex { try makeDirectories(String(path[..<slash])) }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw ConfigError("cannot create the data folder \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// A connection to the configured store, already migrated by the start-up.
    func openStore() throws -> any AppStore { try Runtime.open(config.store) }

    /// The outbox delivery workers, not yet started (one set per process; leases make several
    /// instances safe).
    func makeOutbox() throws -> OutboxWorkers {
        // Every phone channel goes through the SMS provider (and its secondary, when configured).
        let phone = try SMSProviders.make(config.sms, log: services.log, telemetry: services.telemetry)
        let senders: [OutboxMessage.Channel: any MessageSender] = [.sms: phone, .whatsapp: phone, .voice: phone,
                                                                        .email: try EmailTransports.make(config.email, log: services.log)]
        let location = config.store
        let messages = OutboxWorker(makeStore: { try Runtime.open(location) }, senders: senders, telemetry: services.telemetry, log: services.log,
                                    housekeeping: { [retention = config.retention, log = services.log] in
            try Runtime.housekeeping(location, retention: retention, log: log)
        }, sweeps: [try phoneFallback()])
        let pushes = OutboxWorker(makeStore: { try Runtime.open(location) }, senders: [.push: makePushSender()], telemetry: services.telemetry,
                                  log: services.log)
        return OutboxWorkers(all: [messages, pushes])
    }

    /// The phone codes' automatic fallback, run by the delivery worker after each pass on its
    /// store; its words come from the same templates as the pages'.
    func phoneFallback() throws -> (any OutboxStore) throws -> Void {
        let messages = TemplateCodeMessages(templates: try Templates(directory: try Runtime.resourcesDirectory(config), log: services.log))
        let projects = Dictionary(config.projects.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        guard projects.values.contains(where: { $0.phone.fallbackAfterSeconds > 0 }) else { return { _ in } }
        let services = services
        return { store in
            guard let store = store as? any PhoneFlowStore else { return }
            try PhoneFallback(store: store, clock: services.clock, random: services.random, tokens: services.tokens, messages: messages,
                              project: { projects[$0] }).run()
        }
    }

    /// Dev mode lists pushes (the dev outbox) and sends none; otherwise APNs, with the keys of
    /// every app that has one.
    func makePushSender() -> any MessageSender {
        config.mode == .dev ? DevSender(log: services.log) : APNsSender(apps: config.apnsApps(log: services.log), log: services.log)
    }

    /// libphonenumber and libcurl are loaded on first use, so `config check` looks for them here
    /// rather than letting the first phone number or the first message find one missing.
    static func libraryProblems() -> [String] {
        var problems: [String] = []
        if PhoneNumber.countryCode(forRegion: "US") != 1 {
            problems.append("phone numbers: libphonenumber.so.8 (Debian package libphonenumber8) cannot be loaded")
        }
        do { _ = try Curl() } catch { problems.append("delivery: \(error)") }
        if !QRCode.libraryLoads {
            problems.append("authenticator QR codes: libqrencode.so.4 (Debian package libqrencode4) cannot be loaded; the account page shows the key as text only")
        }
        return problems
    }

    static func resourcesDirectory(_ config: Config) throws -> String {
        if let d = config.templatesDir { return d }
        if let d = Templates.bundledDirectory { return d }
        if let root = projectRoot(), Files.exists(root + "/Sources/AuthWeb/Resources/templates") {
            return root + "/Sources/AuthWeb/Resources"
        }
        for d in ["/usr/local/share/gatehouse", "/usr/share/gatehouse"] where Files.exists(d + "/templates") { return d }
        throw ConfigError("cannot find the templates folder; set templates_dir")
    }

    /// The source checkout this binary was built in (for `public/` and `nginx/`), found by walking
    /// up from the executable; `GATEHOUSE_HOME` overrides.
    static func projectRoot() -> String? {
        if let h = getenv("GATEHOUSE_HOME") { return String(cString: h) }
        let exe = Files.readLink("/proc/self/exe") ?? Files.absolute(CommandLine.arguments[0])
        var dir = Files.parent(exe)
        for _ in 0..<8 {
            if Files.exists(dir + "/public/gatehouse.css"), Files.exists(dir + "/nginx") { return dir }
            dir = Files.parent(dir)
        }
        for d in ["/usr/local/share/gatehouse", "/usr/share/gatehouse"] where Files.exists(d + "/public") { return d }
        return nil
    }
}

/// The delivery workers of a serving process: one for SMS and email, one for silent pushes, so a
/// slow SMS provider or mail server never delays a push an app is waiting for (seconds).
struct OutboxWorkers: Sendable {
    let all: [OutboxWorker]
    func start() { all.forEach { $0.start() } }
    func wake() { all.forEach { $0.wake() } }
    func requestStop() { all.forEach { $0.requestStop() } }
    func stop() { all.forEach { $0.stop() } }
}

struct ConfigError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
