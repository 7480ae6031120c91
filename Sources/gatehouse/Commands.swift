import AuthEngine
import AuthStore
import AuthWeb
import JSONValue

/// Signing-key commands.
enum Keys {
    static let spec = CommandSpec(name: "keys", abstract: "Manage signing keys.", subcommands: [Rotate.spec, List.spec])

    struct Rotate: Command {
        static let spec = Rotate.spec("rotate", "Add a new signing key; older keys stay published for 14 days + 1 hour.", options: CommonOptions.options)
        let common: CommonOptions
        init(_ p: ParsedArguments) { common = CommonOptions(p) }
        func run() throws {
            let runtime = try Runtime(config: try common.load())
            let store = try runtime.openStore()
            let rec = try runtime.services.keyRing.rotate(store: store, random: runtime.services.random, actor: "cli")
            print("new signing key \(rec.kid)")
        }
    }

    struct List: Command {
        static let spec = List.spec("list", "List published signing keys.", options: CommonOptions.options)
        let common: CommonOptions
        init(_ p: ParsedArguments) { common = CommonOptions(p) }
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
enum ConfigCommand {
    static let spec = CommandSpec(name: "config", abstract: "Check the configuration.", subcommands: [Check.spec])

    struct Check: Command {
        static let spec = Check.spec("check", "Report every problem in the configuration; exit 1 if any.",
                                     options: [OptionSpec(name: "config", short: "c", help: "Configuration file (JSON).")])
        let config: String?
        init(_ p: ParsedArguments) { config = p.string("config") }
        func run() throws {
            var (c, problems) = Config.load(path: config)
            do {
                try Templates(directory: try Runtime.resourcesDirectory(c), log: c.log).validateAll()
            } catch {
                problems.append("templates: \(error)")
            }
            problems += Runtime.libraryProblems()
            problems += c.apnsKeyProblems()
            var storeLine = "store \(c.store.display)"
            if problems.isEmpty, case let .postgresql(url) = c.store {
                // Connects (without migrating) and says what it found.
                do {
                    let db = try PostgreSQLConnection(url: url)
                    let version = try Schema.recordedVersion(db)
                    let state = version == 0 ? "empty (the first start creates the schema)"
                        : version < Schema.version ? "schema \(version), the next start migrates to \(Schema.version)"
                        : version == Schema.version ? "schema \(version), current"
                        : "schema \(version), newer than this build (\(Schema.version))"
                    storeLine += ": PostgreSQL \(db.serverVersion / 10000).\(db.serverVersion % 10000), \(state)"
                    if version > Schema.version { problems.append("store: the database's schema is newer than this build") }
                } catch {
                    problems.append("store: \(error)")
                }
            }
            if problems.isEmpty {
                print("configuration \(c.source): OK (\(c.mode.rawValue) mode, \(c.projects.count) project(s): \(c.projects.map(\.id).joined(separator: ", ")); \(storeLine))")
                return
            }
            print("configuration \(c.source): \(problems.count) problem(s)")
            for p in problems { print("  - \(p)") }
            throw ExitStatus(1)
        }
    }
}

/// Token tools for operators and tests.
enum Tokens {
    static let spec = CommandSpec(name: "tokens", abstract: "Token tools.", subcommands: [Mint.spec])

    struct Mint: Command {
        static let spec = Mint.spec("mint", "Print an ID token for a user, signed with the current key.", options: CommonOptions.options + [
            OptionSpec(name: "uid", help: "User id."),
            OptionSpec(name: "project", help: "Project id (default: the first project)."),
            .flag("create", help: "Create the account if it does not exist."),
        ])
        let common: CommonOptions
        let uid: String
        let project: String?
        let create: Bool

        init(_ p: ParsedArguments) throws {
            common = CommonOptions(p)
            uid = try p.required("uid")
            project = p.string("project")
            create = p.flag("create")
        }

        func run() throws {
            let runtime = try Runtime(config: try common.load())
            let store = try runtime.openStore()
            let pid = try runtime.config.projectID(project)
            var account = try store.account(project: pid, localID: uid)
            if account == nil, create {
                let a = Account(projectID: pid, localID: uid, createdAt: SystemClock().now())
                try store.insertAccount(a)
                account = a
            }
            guard let account else { throw UsageError("no user \(uid) in project \(pid)") }
            print(try runtime.services.tokens.mintIDToken(for: account, provider: "custom", store: store))
        }
    }
}
