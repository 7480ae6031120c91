import AuthEngine
import HTTP
import JSONValue

/// `accounts:lookup` (legacy `getAccountInfo`), firebase-wire.md §2.6. Unprivileged callers pass
/// `idToken` and get exactly one user; admins look up by `localId[]`, `email[]`, `phoneNumber[]`,
/// `federatedUserId[{providerId, rawId}]`.
/// `users` is omitted entirely when nothing matched.
enum LookupAPI {
    static func lookup(_ ctx: inout Context) throws -> Response {
        var found: [Account] = []
        if ctx.isAdmin, ctx.string("idToken") == nil {
            for id in ctx.stringArray("localId") { if let a = try ctx.store.account(project: ctx.project.id, localID: id) { found.append(a) } }
            for e in ctx.stringArray("email") { if let a = try ctx.store.account(project: ctx.project.id, email: e.lowercased()) { found.append(a) } }
            for p in ctx.stringArray("phoneNumber") {
                let e164 = (try? PhoneNumber(parsing: p).e164) ?? p
                if let a = try ctx.store.account(project: ctx.project.id, phoneNumber: e164) { found.append(a) }
            }
            for f in ctx.body["federatedUserId"]?.arrayValue ?? [] {
                guard let provider = f["providerId"]?.stringValue, let raw = f["rawId"]?.stringValue, !provider.isEmpty, !raw.isEmpty else { continue }
                if let a = try ctx.store.account(project: ctx.project.id, providerID: provider, rawID: raw) { found.append(a) }
            }
        } else {
            let (account, _) = try ctx.accounts.account(forIDToken: ctx.string("idToken"), project: ctx.project.id)
            found = [account]
        }
        var seen = Set<String>()
        found = found.filter { seen.insert($0.localID).inserted }
        return .json(.obj(("kind", "identitytoolkit#GetAccountInfoResponse"),
                          ("users", found.isEmpty ? nil : JSON.array(try found.map { a in
                              // Passkeys live in their own table: read only where a project has them.
                              let passkeys = ctx.project.passkeys.enabled ? try ctx.store.passkeys(project: ctx.project.id, localID: a.localID) : []
                              return UserInfoJSON.encode(a, privileged: ctx.isAdmin, passkeys: passkeys)
                          }))))
    }
}
