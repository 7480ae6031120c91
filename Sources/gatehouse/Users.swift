import AuthEngine
import AuthStore
import Delivery
#if canImport(Glibc)
import Glibc
#endif
import JSONValue

/// `gatehouse users …`: account administration on the same store the responder uses. Changes
/// reach running instances within their session-cache lifetime (2 s).
enum Users {
    static let spec = CommandSpec(
        name: "users", abstract: "List, inspect, disable, enable, delete users, revoke their sessions, import or export them.",
        subcommands: [List.spec, Get.spec, Disable.spec, Enable.spec, Delete.spec, Revoke.spec, Import.spec, Export.spec])

    /// The options every `users` command shares.
    struct Target {
        static let options = CommonOptions.options + [OptionSpec(name: "project", help: "Project id (default: the first project).")]
        static let uid = [ArgumentSpec(name: "uid", help: "User id.")]
        let common: CommonOptions
        let project: String?

        init(_ p: ParsedArguments) {
            common = CommonOptions(p)
            project = p.string("project")
        }

        func open() throws -> (store: any AppStore, project: String, admin: AccountAdmin) {
            let config = try common.load()
            let pid = try config.projectID(project)
            if case let .sqlite(path) = config.store, access(path, F_OK) != 0 {
                throw UsersError("no database at \(path) (wrong --data or --config?)")
            }
            let store = try Runtime.open(config.store, migrate: true)
            return (store, pid, AccountAdmin(store: store, clock: SystemClock(), random: SystemRandom(), actor: "cli"))
        }
    }

    struct List: Command {
        static let spec = List.spec("list", "List users in localId order.", options: Target.options + [
            OptionSpec(name: "limit", help: "Users per page (1…1000). Default: 100."),
            OptionSpec(name: "page-token", help: "Continue after a previous page."),
            .flag("json", help: "One JSON object per line."),
        ])
        let target: Target
        let limit: Int
        let pageToken: String?
        let json: Bool

        init(_ p: ParsedArguments) throws {
            target = Target(p)
            limit = try p.int("limit") ?? 100
            pageToken = p.string("page-token")
            json = p.flag("json")
        }

        func run() throws {
            let (_, project, admin) = try target.open()
            let page = try admin.list(project: project, maxResults: limit, pageToken: pageToken)
            if json {
                for a in page.users { print(Users.json(a).serialized()) }
            } else {
                print(Users.row(["UID", "PHONE", "EMAIL", "STATUS", "CREATED", "LAST SIGN-IN"]))
                for a in page.users {
                    print(Users.row([a.localID, a.phoneNumber ?? "-", a.email ?? "-", a.disabled ? "disabled" : "active",
                                     Users.date(a.createdAt), a.lastLoginAt.map(Users.date) ?? "-"]))
                }
            }
            if let next = page.nextPageToken { StandardError.write("more: --page-token \(next)\n") }
        }
    }

    struct Get: Command {
        static let spec = Get.spec("get", "Show one user (by uid, --email or --phone).", options: Target.options + [
            OptionSpec(name: "email", help: "Find by email address."),
            OptionSpec(name: "phone", help: "Find by phone number (E.164)."),
        ], arguments: [ArgumentSpec(name: "uid", help: "User id.", required: false)])
        let target: Target
        let uid: String?
        let email: String?
        let phone: String?

        init(_ p: ParsedArguments) {
            target = Target(p)
            uid = p.string("uid")
            email = p.string("email")
            phone = p.string("phone")
        }

        func run() throws {
            let (store, project, _) = try target.open()
            let found: Account?
            if let uid { found = try store.account(project: project, localID: uid) }
            else if let email { found = try store.account(project: project, email: email.lowercased()) }
            else if let phone { found = try store.account(project: project, phoneNumber: (try? PhoneNumber(parsing: phone).e164) ?? phone) }
            else { throw UsageError("give a uid, --email or --phone") }
            guard let a = found else { throw UsersError("no such user in \(project)") }
            var out = Users.json(a)
            let sessions = try store.activeSessions(project: project, localID: a.localID, now: SystemClock().now())
            if case var .object(pairs) = out { pairs.append(("activeSessions", .number(Double(sessions.count)))); out = .object(pairs) }
            print(out.serialized())
        }
    }

    struct Disable: Command {
        static let spec = Disable.spec("disable", "Disable a user: sign-ins, refreshes and sessions are refused.", options: Target.options, arguments: Target.uid)
        let target: Target
        let uid: String
        init(_ p: ParsedArguments) throws { (target, uid) = (Target(p), try p.required("uid")) }
        func run() throws { try Users.setDisabled(true, uid: uid, target: target) }
    }

    struct Enable: Command {
        static let spec = Enable.spec("enable", "Enable a disabled user.", options: Target.options, arguments: Target.uid)
        let target: Target
        let uid: String
        init(_ p: ParsedArguments) throws { (target, uid) = (Target(p), try p.required("uid")) }
        func run() throws { try Users.setDisabled(false, uid: uid, target: target) }
    }

    struct Delete: Command {
        static let spec = Delete.spec("delete", "Delete a user with its refresh tokens and sessions.", options: Target.options, arguments: Target.uid)
        let target: Target
        let uid: String
        init(_ p: ParsedArguments) throws { (target, uid) = (Target(p), try p.required("uid")) }
        func run() throws {
            let (_, project, admin) = try target.open()
            try Users.wire { try admin.delete(project: project, localID: uid) }
            print("deleted \(uid)")
        }
    }

    struct Revoke: Command {
        static let spec = Revoke.spec("revoke", "Sign a user out everywhere: revoke every session and refresh token issued so far.", options: Target.options, arguments: Target.uid)
        let target: Target
        let uid: String
        init(_ p: ParsedArguments) throws { (target, uid) = (Target(p), try p.required("uid")) }
        func run() throws {
            let (_, project, admin) = try target.open()
            let a = try Users.wire { try admin.revoke(project: project, localID: uid) }
            print("revoked every session and refresh token of \(uid) issued before \(Users.date(a.validSince * 1000))")
        }
    }

    static func setDisabled(_ disabled: Bool, uid: String, target: Target) throws {
        let (_, project, admin) = try target.open()
        var c = AccountChanges()
        c.localID = uid
        c.disabled = disabled
        _ = try wire { try admin.update(project: project, c) }
        print("\(disabled ? "disabled" : "enabled") \(uid)")
    }

    /// Engine errors as command-line errors.
    static func wire<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as AuthError {
            throw UsersError(e.code == .userNotFound ? "no such user" : e.message)
        }
    }

    static func json(_ a: Account) -> JSON {
        .obj(("localId", a.localID), ("phoneNumber", a.phoneNumber), ("email", a.email),
             ("emailVerified", a.email == nil ? nil : a.emailVerified), ("displayName", a.displayName), ("disabled", a.disabled),
             ("anonymous", a.anonymous ? true : nil), ("createdAt", date(a.createdAt)), ("lastLoginAt", a.lastLoginAt.map(date)),
             ("validSince", a.validSince > 0 ? date(a.validSince * 1000) : nil), ("customAttributes", a.customAttributes),
             ("providers", JSON.array(a.providers.map { .string($0.providerID) })))
    }

    /// RFC 3339 in UTC to the second ("2026-11-22T04:05:06Z").
    static func date(_ ms: Millis) -> String { RFC3339.format(ms, fraction: false) }

    static func row(_ cols: [String]) -> String {
        let widths = [28, 16, 28, 8, 20, 20]
        return zip(cols, widths).map { c, w in c.count >= w ? c + " " : c + String(repeating: " ", count: w - c.count + 1) }
            .joined().trimmingSpaces
    }
}

/// A failure of a `users` command (printed as `Error: …`, exit status 1).
struct UsersError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        guard let first = firstIndex(where: { $0 != " " && $0 != "\t" }), let last = lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return String(self[first...last])
    }
}
