import AuthEngine
import AuthStore
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse operators …`: who may open the operator console (docs/console.md). An operator is
/// an account of the deployment's own project (the first configured one); the console also asks
/// for its second factor (or a passkey) at every visit, so an operator without one cannot get in.
enum OperatorsCommand {
    static let spec = CommandSpec(
        name: "operators", abstract: "Add, remove or list the users who may open the operator console.",
        subcommands: [Add.spec, Remove.spec, List.spec])

    static let options = CommonOptions.options + [
        OptionSpec(name: "project", help: "Project id (default: the first project, the one the console signs in to)."),
    ]
    static let userArgument = [ArgumentSpec(name: "user", help: "The user: its uid, email address or phone number (E.164, +…).")]

    struct Add: Command {
        static let spec = Add.spec("add", "Make a user an operator (audited as operator.add, actor cli).", options: OperatorsCommand.options, arguments: OperatorsCommand.userArgument)
        let common: CommonOptions
        let project: String?
        let user: String
        init(_ p: ParsedArguments) throws { (common, project, user) = (CommonOptions(p), p.string("project"), try p.required("user")) }

        func run() throws {
            let (store, pid, first) = try OperatorsCommand.open(common, project)
            guard let a = try OperatorsCommand.find(user, project: pid, store: store) else {
                throw UsersError("no user \(user) in project \(pid) (give its uid, email address or phone number)")
            }
            let added = try Operators.add(project: pid, localID: a.localID, actor: "cli", store: store, at: SystemClock().now())
            print(added ? "\(OperatorsCommand.name(a)) is now an operator of \(pid)" : "\(OperatorsCommand.name(a)) already is an operator of \(pid)")
            if pid != first {
                StandardError.write("note: the console signs in to \(first); an operator of \(pid) cannot open it\n")
            }
            if a.disabled { StandardError.write("note: \(a.localID) is disabled: it cannot sign in\n") }
            if a.mfaEnrollments.isEmpty, try store.passkeys(project: pid, localID: a.localID).isEmpty {
                StandardError.write("note: \(a.localID) has no second factor or passkey; the console asks for one, so enrol one first\n")
            }
        }
    }

    struct Remove: Command {
        static let spec = Remove.spec("remove", "Stop a user being an operator (audited as operator.remove, actor cli).", options: OperatorsCommand.options, arguments: OperatorsCommand.userArgument)
        let common: CommonOptions
        let project: String?
        let user: String
        init(_ p: ParsedArguments) throws { (common, project, user) = (CommonOptions(p), p.string("project"), try p.required("user")) }

        func run() throws {
            let (store, pid, _) = try OperatorsCommand.open(common, project)
            // An operator row outlives nothing (deleting the account deletes it), but a uid
            // given as such is taken as it is, found or not.
            let uid = try OperatorsCommand.find(user, project: pid, store: store)?.localID ?? user
            let removed = try Operators.remove(project: pid, localID: uid, actor: "cli", store: store, at: SystemClock().now())
            guard removed else { throw UsersError("\(user) is not an operator of \(pid)") }
            // Its console pages are refused from its next request on (nothing is cached).
            print("\(uid) is no longer an operator of \(pid)")
        }
    }

    struct List: Command {
        static let spec = List.spec("list", "List the operators, in the order they were added.", options: OperatorsCommand.options)
        let common: CommonOptions
        let project: String?
        init(_ p: ParsedArguments) { (common, project) = (CommonOptions(p), p.string("project")) }

        func run() throws {
            let (store, pid, _) = try OperatorsCommand.open(common, project)
            print(Users.row(["UID", "PHONE", "EMAIL", "STATUS", "ADDED", "ADDED BY"]))
            for o in try store.operators(project: pid) {
                let a = try store.account(project: pid, localID: o.localID)
                let status = a.map { $0.disabled ? "disabled" : "active" } ?? "deleted"
                print(Users.row([o.localID, a?.phoneNumber ?? "-", a?.email ?? "-", status, Users.date(o.addedAt), o.addedBy]))
            }
        }
    }

    /// The store, the project (`--project` or the first) and the first project's id.
    static func open(_ common: CommonOptions, _ project: String?) throws -> (store: any AppStore, project: String, first: String) {
        let config = try common.load()
        let pid = try config.projectID(project)
        if case let .sqlite(path) = config.store, access(path, F_OK) != 0 {
            throw UsersError("no database at \(path) (wrong --data or --config?)")
        }
        return (try Runtime.open(config.store, migrate: true), pid, config.projects[0].id)
    }

    /// The account a uid, an email address (lower-cased, as accounts keep them) or a phone number
    /// (`+…`, any format libphonenumber reads) names; a uid is tried first, as a uid may hold "@".
    static func find(_ user: String, project: String, store: any AppStore) throws -> Account? {
        guard !user.isEmpty, user.utf8.count <= 320 else { return nil }
        if let a = try store.account(project: project, localID: user) { return a }
        if user.contains("@") { return try store.account(project: project, email: user.lowercased()) }
        if user.hasPrefix("+"), let phone = try? PhoneNumber(parsing: user).e164 { return try store.account(project: project, phoneNumber: phone) }
        return nil
    }

    static func name(_ a: Account) -> String {
        a.localID + (a.email.map { " (\($0))" } ?? a.phoneNumber.map { " (\($0))" } ?? "")
    }
}
