import AuthEngine
import HTTP
import TextCoding

/// The console's Audit log (docs/console.md "Audit log"): `GET /__/auth/console/audit` with
/// filters `uid`, `actor`, `event` (one of `AuditEventName`), `from` and `to` (UTC, a date or a
/// date and time, as `<input type="datetime-local">` sends it), `all=1` (every project: a key
/// rotation names none). Newest first, 50 a page; `before` (the last id shown) pages on. The
/// time range becomes an id range (`ConsoleStore.auditID(atOrAfter:)`, a bisection over the
/// primary key), so every filter reads an index: the user's trail `audit_log_user`, the others
/// the primary key back from `before`.
enum ConsoleAudit {
    static let pageSize = 50
    static let maxFilter = 200

    /// `GET /__/auth/console/audit`
    static func show(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            let s = ctx.strings
            let project = Console.project(ctx)
            let request = ctx.request
            let q = { (name: String) -> String in String((request.query(name) ?? "").trimmingSpaces.prefix(maxFilter + 1)) }
            let uid = q("uid"), actor = q("actor"), eventRaw = q("event"), fromRaw = q("from"), toRaw = q("to")
            let all = ctx.request.query("all") == "1"
            let event = AuditEventName(rawValue: eventRaw)
            var values: [String: TemplateValue] = [
                "uid": .string(uid), "actor": .string(actor), "from": .string(fromRaw), "to": .string(toRaw), "all": .bool(all),
                "events": .list(AuditEventName.allCases.map { e in .object(["value": .string(e.rawValue), "selected": .bool(e == event)]) }),
            ]
            var status = 200
            var filter = AuditFilter()
            filter.limit = pageSize + 1
            if !all { filter.project = project.id }
            if !uid.isEmpty { filter.localID = uid }
            if !actor.isEmpty { filter.actor = actor }
            if let event { filter.event = event.rawValue }
            if [uid, actor].contains(where: { $0.utf8.count > maxFilter || $0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }) {
                values["error"] = .string(s["console_ops.audit.errors.filter"] ?? "")
                status = 400
            }
            let from = time(fromRaw), to = time(toRaw, end: true)
            if (!fromRaw.isEmpty && from == nil) || (!toRaw.isEmpty && to == nil) {
                values["error"] = .string(s["console_ops.audit.errors.time"] ?? "")
                status = 400
            }
            if let from { filter.fromID = try ctx.store.auditID(atOrAfter: from) }
            if let to { filter.beforeID = try ctx.store.auditID(atOrAfter: to) }
            if let before = ctx.request.query("before").flatMap({ Int64($0) }), before > 0 {
                filter.beforeID = min(filter.beforeID ?? .max, before)
            }
            var rows = status == 200 ? try ctx.store.auditPage(filter) : []
            let more = rows.count > pageSize
            if more { rows.removeLast(rows.count - pageSize) }
            values["rows"] = .list(rows.map { row($0, s) })
            values["empty"] = .bool(rows.isEmpty)
            values["showProject"] = .bool(all)
            var base = Console.base + "/audit?" + ConsoleUsers.query(ctx, project)
            for (k, v) in [("uid", uid), ("actor", actor), ("event", event?.rawValue ?? ""), ("from", fromRaw), ("to", toRaw)] where !v.isEmpty {
                base += "&" + k + "=" + PercentEncoding.encode(v)
            }
            if all { base += "&all=1" }
            if ctx.request.query("before") != nil { values["newestHref"] = .string(base) }
            if more, let last = rows.last { values["olderHref"] = .string(base + "&before=\(last.id)") }
            values["clearHref"] = .string(Console.base + "/audit?" + ConsoleUsers.query(ctx, project))
            var response = Response()
            return Console.page("audit", section: "audit", ctx: ctx, op: op, values: values, response: &response, status: status)
        }
    }

    static func row(_ r: AuditRecord, _ s: LocaleStrings) -> TemplateValue {
        let e = r.event
        return .object([
            "id": .string(String(r.id)),
            "time": .string(AccountPage.display(r.at / 1000)), "timeISO": .string(RFC3339.format(r.at)),
            "event": .string(e.event.rawValue), "project": .string(e.projectID),
            "uid": ConsoleUsers.text(e.localID),
            "actor": .string(e.actor ?? s["console_ops.audit.the_user"] ?? "—"), "byUser": .bool(e.actor == nil),
            "address": ConsoleUsers.text(e.remoteAddress),
            "outcome": .string(e.outcome), "refused": .bool(e.outcome != "ok"),
            "detail": ConsoleUsers.text(e.detail.map { String($0.prefix(300)) }),
        ])
    }

    /// A time of the filter in UTC: `YYYY-MM-DD` (its midnight; with `end`, the next one, so a
    /// day given as "to" is included), `YYYY-MM-DDTHH:MM` or with seconds; nil for anything else.
    static func time(_ raw: String, end: Bool = false) -> Millis? {
        let text = raw.replacing(" ", with: "T")
        switch text.utf8.count {
        case 10: return RFC3339.parse(text + "T00:00:00Z").map { end ? $0 + 86_400_000 : $0 }
        case 16: return RFC3339.parse(text + ":00Z").map { end ? $0 + 60_000 : $0 }
        case 19: return RFC3339.parse(text + "Z").map { end ? $0 + 1_000 : $0 }
        default: return nil
        }
    }
}
