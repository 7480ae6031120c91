import AuthEngine
import HTTP
import TextCoding

/// The console's Users list (docs/console.md "Users"): `GET /__/auth/console/users?q=&sort=&after=`.
/// Pages of 50 from `ConsoleStore.accountPage`, each one index range (BENCHMARKS.md "Console"):
/// - no search: newest accounts first (`sort=created`) or most recent sign-in first
///   (`sort=last_sign_in`; accounts that never signed in are not in that order);
/// - a search (`q`): a prefix of one field, the one `in` names (`uid`, `email`, `phone`) or, by
///   default, told by its look: with "@" an email address (lower-cased, as accounts keep them),
///   starting with "+" a phone number (its digits), else a uid; in that field's byte order.
/// The next page starts after the last row shown (`after`: `<ms>.<uid>` in an order, the field's
/// value in a search), so a page is as fast at the millionth account as at the first.
enum ConsoleUsers {
    static let pageSize = 50
    /// Longer than any address, number or uid.
    static let maxQuery = 320

    /// The search a `q` asks for; nil for none; throws for one that cannot be run.
    static func search(_ raw: String, in named: AccountListing.Field? = nil) throws -> (field: AccountListing.Field, prefix: String)? {
        let q = raw.trimmingSpaces
        guard !q.isEmpty else { return nil }
        // Control characters are in no stored value (and PostgreSQL refuses NUL in text).
        guard q.utf8.count <= maxQuery, !q.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            throw AuthError(.invalidArgument, "search")
        }
        let field = named ?? (q.contains("@") ? .email : q.hasPrefix("+") ? .phone : .uid)
        if field == .email { return (.email, q.lowercased()) }
        if field == .phone {
            // "+44 20 7946-0958" → "+442079460958", as numbers are kept (E.164).
            return (.phone, "+" + String(q.dropFirst().filter { $0.isASCII && $0.isNumber }))
        }
        return (.uid, q)
    }

    /// `GET /__/auth/console/users`
    static func list(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            let s = ctx.strings
            let project = Console.project(ctx)
            let q = String((ctx.request.query("q") ?? "").prefix(maxQuery + 1))
            let order = AccountListing.Order(rawValue: ctx.request.query("sort") ?? "") ?? .created
            let named = AccountListing.Field(rawValue: ctx.request.query("in") ?? "")
            var values: [String: TemplateValue] = [
                "q": .string(q), "sortCreated": .bool(order == .created), "sortLastSignIn": .bool(order == .lastSignIn),
                "inAny": .bool(named == nil), "inUid": .bool(named == .uid), "inEmail": .bool(named == .email), "inPhone": .bool(named == .phone),
            ]
            var listing = AccountListing()
            listing.order = order
            listing.limit = pageSize + 1
            var status = 200
            do {
                if let found = try search(q, in: named) {
                    listing.search = found
                    values["searching"] = .string((s["console_users.results"] ?? "{field} starting with “{prefix}”")
                        .replacing("{field}", with: s["console_users.field.\(found.field.rawValue)"] ?? found.field.rawValue)
                        .replacing("{prefix}", with: found.prefix))
                }
            } catch {
                values["error"] = .string(s["console_users.errors.search"] ?? "")
                status = 400
            }
            if status == 200, let after = ctx.request.query("after"), !after.isEmpty {
                if !cursor(after, into: &listing) {
                    values["error"] = .string(s["console_users.errors.cursor"] ?? "")
                }
            }
            var rows = status == 200 ? try ctx.store.accountPage(project: project.id, listing) : []
            let more = rows.count > pageSize
            if more { rows.removeLast(rows.count - pageSize) }
            values["users"] = .list(rows.map { row($0, ctx: ctx, project: project) })
            values["empty"] = .bool(rows.isEmpty)
            var base = "q=" + PercentEncoding.encode(q) + (named.map { "&in=" + $0.rawValue } ?? "") + "&sort=" + order.rawValue + "&"
                + query(ctx, project)
            if listing.afterKey != nil || listing.afterTime != nil { values["firstHref"] = .string(Console.base + "/users?" + base) }
            if more, let last = rows.last {
                base += "&after=" + PercentEncoding.encode(next(after: last, listing))
                values["nextHref"] = .string(Console.base + "/users?" + base)
            }
            if let notice = ctx.request.query("notice"), let text = s["console_users.notice.\(notice)"] { values["notice"] = .string(text) }
            var response = Response()
            return Console.page("users", section: "users", ctx: ctx, op: op, values: values, response: &response, status: status)
        }
    }

    /// Reads `after` into the listing; false when it is not one this page wrote.
    static func cursor(_ after: String, into listing: inout AccountListing) -> Bool {
        guard after.utf8.count <= 400 else { return false }
        if listing.searchField != nil {
            listing.afterKey = after
            return true
        }
        guard let dot = after.firstIndex(of: "."), let t = Millis(after[..<dot]), t >= 0 else { return false }
        let id = String(after[after.index(after: dot)...])
        guard !id.isEmpty else { return false }
        listing.afterTime = t
        listing.afterLocalID = id
        return true
    }

    /// The cursor after `a`: its key in a search, else its time and uid.
    static func next(after a: Account, _ listing: AccountListing) -> String {
        switch listing.searchField {
        case .email?: return a.email ?? ""
        case .phone?: return a.phoneNumber ?? ""
        case .uid?: return a.localID
        case nil: return String(listing.order == .created ? a.createdAt : a.lastLoginAt ?? 0) + "." + a.localID
        }
    }

    static func row(_ a: Account, ctx: Context, project: ProjectSettings) -> TemplateValue {
        .object([
            "uid": .string(a.localID), "href": .string(userURL(a.localID, ctx: ctx, project: project)),
            "email": text(a.email), "phone": text(a.phoneNumber),
            "created": .string(AccountPage.display(a.createdAt / 1000)), "createdISO": .string(RFC3339.format(a.createdAt)),
            "lastSignIn": text(a.lastLoginAt.map { AccountPage.display($0 / 1000) }),
            "lastSignInISO": .string(a.lastLoginAt.map { RFC3339.format($0) } ?? ""),
            "disabled": .bool(a.disabled),
        ])
    }

    /// A text a template shows only when there is one: `{{#x}}` holds for any string, even an
    /// empty one, so an absent text is `false`.
    static func text(_ s: String?) -> TemplateValue {
        guard let s, !s.isEmpty else { return false }
        return .string(s)
    }

    /// `project=…&hl=…`: what every console link carries.
    static func query(_ ctx: Context, _ project: ProjectSettings) -> String {
        "project=" + PercentEncoding.encode(project.id) + "&hl=" + PercentEncoding.encode(ctx.locale)
    }

    /// A user's page. A uid is any text but control characters: one that nginx would read as
    /// more than one path segment (a "/" in it, or "." or "..", which it resolves) goes in the
    /// query instead.
    static func userURL(_ uid: String, ctx: Context, project: ProjectSettings) -> String {
        if uid.contains("/") || uid == "." || uid == ".." {
            return Console.base + "/user?uid=" + PercentEncoding.encode(uid) + "&" + query(ctx, project)
        }
        return Console.base + "/users/" + PercentEncoding.encode(uid) + "?" + query(ctx, project)
    }
}
