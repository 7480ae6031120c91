public import AuthEngine
import HTTP
public import JSONValue

/// Moving accounts in and out: `accounts:batchCreate` (the Admin SDKs' `import_users`),
/// `accounts:query`, and the JSON file `firebase auth:export` writes, which `gatehouse users
/// import` reads and `gatehouse users export` writes (docs/migrating-from-firebase.md).
public enum AccountImportJSON {
    /// One account of a `batchCreate` body or an export file. A field of the wrong type is the
    /// row's error; unknown fields (password hashes among them) are ignored.
    public static func row(_ j: JSON) throws -> ImportedAccount {
        guard case .object = j else { throw AuthError(.invalidArgument, "expected a user object") }
        func text(_ key: String) throws -> String? {
            guard let v = j[key], !v.isNull else { return nil }
            guard let s = v.stringValue else { throw AuthError(.invalidArgument, "\(key) must be a string") }
            return s
        }
        func flag(_ key: String) throws -> Bool {
            guard let v = j[key], !v.isNull else { return false }
            guard let b = v.boolValue else { throw AuthError(.invalidArgument, "\(key) must be true or false") }
            return b
        }
        /// Milliseconds since 1970, as a number or a decimal string (exports write strings).
        func millis(_ key: String) throws -> Millis? {
            guard let v = j[key], !v.isNull else { return nil }
            if let s = v.stringValue, let n = Int64(s), n >= 0 { return n }
            if let n = v.int64Value, n >= 0 { return n }
            throw AuthError(.invalidArgument, "\(key) must be milliseconds since 1970")
        }
        var r = ImportedAccount()
        r.localID = try text("localId")
        r.email = try text("email")
        r.emailVerified = try flag("emailVerified")
        r.phoneNumber = try text("phoneNumber")
        r.displayName = try text("displayName")
        r.photoURL = try text("photoUrl")
        r.disabled = try flag("disabled")
        r.customAttributes = try text("customAttributes")
        r.createdAt = try millis("createdAt")
        r.lastLoginAt = try millis("lastLoginAt") ?? millis("lastSignedInAt")
        if let list = j["mfaInfo"], !list.isNull {
            guard let items = list.arrayValue else { throw AuthError(.invalidArgument, "mfaInfo must be an array") }
            r.mfaEnrollments = try items.map { try AccountsAPI.enrollment($0, field: "mfaInfo") }
        }
        if let list = j["providerUserInfo"], !list.isNull {
            guard let items = list.arrayValue else { throw AuthError(.invalidArgument, "providerUserInfo must be an array") }
            for p in items {
                guard case .object = p, let id = p["providerId"]?.stringValue else { throw AuthError(.invalidArgument, "providerUserInfo: providerId is required") }
                if id == "phone" || id == "password" { continue }
                r.federatedProviders.append(ProviderInfo(providerID: id, rawID: p["rawId"]?.stringValue ?? "", email: p["email"]?.stringValue,
                                                         displayName: p["displayName"]?.stringValue, photoURL: p["photoUrl"]?.stringValue))
            }
        }
        return r
    }

    /// An account in the export file's shape (`firebase auth:export`'s keys and order, times as
    /// millisecond strings), plus its second factors (`mfaInfo`), which that format leaves out.
    public static func exported(_ a: Account) -> JSON {
        .obj(("localId", a.localID), ("email", a.email), ("emailVerified", a.emailVerified), ("displayName", a.displayName),
             ("photoUrl", a.photoURL), ("lastSignedInAt", a.lastLoginAt.map { String($0) }), ("createdAt", String(a.createdAt)),
             ("phoneNumber", a.phoneNumber), ("disabled", a.disabled), ("customAttributes", a.customAttributes),
             ("providerUserInfo", federated(a)),
             ("mfaInfo", a.mfaEnrollments.isEmpty ? nil : JSON.array(a.mfaEnrollments.map {
                 // A TOTP factor is named, its secret never exported (importing it is refused: the user enrols again).
                 .obj(("mfaEnrollmentId", $0.enrollmentID), ("phoneInfo", $0.phoneNumber), ("totpInfo", $0.totp == nil ? nil : JSON.object([])),
                      ("displayName", $0.displayName), ("enrolledAt", RFC3339.format($0.enrolledAt)))
             })))
    }

    static func federated(_ a: Account) -> JSON? {
        let list = a.providers.filter { $0.providerID != "phone" && $0.providerID != "password" }
        guard !list.isEmpty else { return nil }
        return .array(list.map { .obj(("providerId", $0.providerID), ("rawId", $0.rawID), ("email", $0.email), ("displayName", $0.displayName),
                                      ("photoUrl", $0.photoURL)) })
    }
}

/// The admin endpoints of the move.
enum AccountImportAPI {
    /// `POST …/projects/{p}/accounts:batchCreate`: `{users, allowOverwrite}` → `{error: [{index, message}]}`.
    static func batchCreate(_ ctx: inout Context) throws -> Response {
        guard let users = ctx.body["users"]?.arrayValue, !users.isEmpty else { throw AuthError(.missingUserAccount) }
        if ctx.body["hashAlgorithm"] != nil || users.contains(where: { $0["passwordHash"] != nil || $0["rawPassword"] != nil }) {
            // Accepted and dropped: there is no password sign-in to use them (the address signs in by email link).
            ctx.app.log.info("accounts:batchCreate: password hashes ignored (no password sign-in)", requestID: ctx.request.logID)
        }
        var rows: [ImportedAccount] = []
        var failures: [AccountAdmin.ImportFailure] = []
        var positions: [Int] = []
        for (i, u) in users.enumerated() {
            do {
                rows.append(try AccountImportJSON.row(u))
                positions.append(i)
            } catch let e as AuthError {
                failures.append(.init(index: i, message: e.detail ?? e.message))
            }
        }
        if !rows.isEmpty {
            let written = try ctx.accountAdmin.importAccounts(project: ctx.project.id, rows, allowOverwrite: ctx.body["allowOverwrite"]?.boolValue ?? false)
            failures += written.map { .init(index: positions[$0.index], message: $0.message) }
        }
        failures.sort { $0.index < $1.index }
        return .json(.obj(("kind", "identitytoolkit#UploadAccountResponse"),
                          ("error", JSON.array(failures.map { .obj(("index", $0.index), ("message", $0.message)) }))))
    }

    /// `POST …/projects/{p}/accounts:query`: the count (`returnUserInfo: false`), accounts by
    /// `expression` (`email`, `phoneNumber`, `userId`, any of them), or a page of every account by
    /// uid (`limit` ≤ 500, `offset`, `order`).
    static func query(_ ctx: inout Context) throws -> Response {
        let project = ctx.project.id
        let store = ctx.store
        if ctx.body["returnUserInfo"]?.boolValue == false {
            return .json(.obj(("recordsCount", String(try store.countAccounts(project: project)))))
        }
        if let sortBy = ctx.string("sortBy"), sortBy != "USER_ID", sortBy != "SORT_BY_FIELD_UNSPECIFIED" {
            throw AuthError(.invalidArgument, "sortBy: only USER_ID is supported")
        }
        let order = ctx.string("order") ?? "ASC"
        guard ["ASC", "DESC", "ORDER_UNSPECIFIED"].contains(order) else { throw AuthError(.invalidArgument, "order must be ASC or DESC") }
        let limit = try number(ctx.body["limit"], "limit", default: 500, range: 1...500)
        let offset = try number(ctx.body["offset"], "offset", default: 0, range: 0...1_000_000)
        var found: [Account] = []
        if let expressions = ctx.body["expression"]?.arrayValue, !expressions.isEmpty {
            guard expressions.count <= 100 else { throw AuthError(.invalidArgument, "expression: at most 100 terms") }
            for e in expressions {
                var hits: [Account?] = []
                if let email = e["email"]?.stringValue { hits.append(try store.account(project: project, email: email.lowercased())) }
                if let phone = e["phoneNumber"]?.stringValue { hits.append(try store.account(project: project, phoneNumber: phone)) }
                if let uid = e["userId"]?.stringValue { hits.append(try store.account(project: project, localID: uid)) }
                for case let a? in hits where !found.contains(where: { $0.localID == a.localID }) { found.append(a) }
            }
            found.sort { $0.localID.utf8.lexicographicallyPrecedes($1.localID.utf8) }
            if order == "DESC" { found.reverse() }
            found = Array(found.dropFirst(offset).prefix(limit))
        } else if order == "DESC" {
            // Read from the end: the store lists by uid ascending, so the whole project is read
            // (bounded: a larger project is paged ascending).
            let total = try store.countAccounts(project: project)
            guard total <= 100_000 else { throw AuthError(.invalidArgument, "order DESC is limited to projects of 100000 accounts; use ASC") }
            found = Array(try store.listAccounts(project: project, after: nil, limit: total).reversed().dropFirst(offset).prefix(limit))
        } else {
            var after: String?
            var skip = offset
            while skip > 0 {
                let page = try store.listAccounts(project: project, after: after, limit: min(skip, 1000))
                guard let last = page.last else { break }
                skip -= page.count
                after = last.localID
            }
            found = skip > 0 ? [] : try store.listAccounts(project: project, after: after, limit: limit)
        }
        return .json(.obj(("recordsCount", String(found.count)),
                          ("userInfo", JSON.array(found.map { UserInfoJSON.encode($0, privileged: true) }))))
    }

    static func number(_ v: JSON?, _ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let v, !v.isNull else { return value }
        let n: Int64? = v.int64Value ?? v.stringValue.flatMap { Int64($0) }
        guard let n, n >= Int64(range.lowerBound), n <= Int64(range.upperBound), let value = Int(exactly: n) else {
            throw AuthError(.invalidArgument, "\(name) must be an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }
}
