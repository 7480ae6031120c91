import AuthEngine
import HTTP
import TextCoding

/// The console's home page, Activity (docs/console.md "Activity"): `GET /__/auth/console/`
/// (`?range=24h|30d`). Every number comes from the store through `Activity` (sign-ins rolled up
/// from the audit log, the counters of failures and sends); the charts are drawn here as inline
/// SVG (`BarChart`), with hours and days in UTC.
enum ConsoleActivity {
    /// `GET /__/auth/console`: the page lives at the slash.
    static func redirect(_ ctx: inout Context) throws -> Response {
        let query = ctx.request.rawQuery
        var r = Response.redirect(to: Console.base + "/" + (query.isEmpty ? "" : "?" + query))
        r.status = 301
        return r
    }

    /// `GET /__/auth/console/`
    static func show(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            let s = ctx.strings
            let project = Console.project(ctx)
            let range = Activity.Range(rawValue: ctx.request.query("range") ?? "") ?? .day
            let report = try Activity(store: ctx.store, clock: ctx.app.clock).report(project: project.id, range: range)
            let labels = report.bucketStarts.map { label($0, range: range) }
            func name(_ prefix: String, _ key: String) -> String { s["console_ops." + prefix + "." + key] ?? key }
            let charts: [(id: String, caption: String, series: [BarChart.Series], note: String?)] = [
                ("signins", s["console_ops.activity.signins"] ?? "", report.signIns.map { .init(name: name("method", $0.name), values: $0.values) }, nil),
                ("refused-signins", s["console_ops.activity.refused_signins"] ?? "",
                 report.refusedSignIns.map { .init(name: name("method", $0.name), values: $0.values) }, nil),
                ("wrong-codes", s["console_ops.activity.wrong_codes"] ?? "",
                 report.wrongCodes.map { .init(name: name("wrong_code", $0.name), values: $0.values) }, nil),
                ("refusals", s["console_ops.activity.refusals"] ?? "", report.refusals.map { .init(name: $0.name, values: $0.values) },
                 s["console_ops.activity.refusals_note"]),
                ("sms", s["console_ops.activity.sms"] ?? "", [.init(name: s["console_ops.activity.sms_series"] ?? "SMS", values: report.smsSent)], nil),
                ("emails", s["console_ops.activity.emails"] ?? "",
                 [.init(name: s["console_ops.activity.emails_series"] ?? "Emails", values: report.emailsSent)], nil),
            ]
            let base = Console.base + "/?" + ConsoleUsers.query(ctx, project) + "&range="
            let values: [String: TemplateValue] = [
                "is24h": .bool(range == .day), "is30d": .bool(range == .month),
                "href24h": .string(base + Activity.Range.day.rawValue), "href30d": .string(base + Activity.Range.month.rawValue),
                "period": .string(s[range == .day ? "console_ops.activity.per_hour" : "console_ops.activity.per_day"] ?? ""),
                "charts": .list(charts.map { c in
                    let chart = BarChart(bucketLabels: labels, series: c.series, title: c.caption,
                                         emptyText: s["console_ops.empty_chart"] ?? "No data", groupingSeparator: separator(ctx.locale))
                    return .object([
                        "id": .string(c.id), "caption": .string(c.caption), "note": ConsoleUsers.text(c.note),
                        "svg": .html([ArraySlice(chart.svg(idPrefix: "chart-" + c.id + "-").utf8)]),
                        "total": .string(String(c.series.reduce(0) { BarChart.saturatingAdd($0, $1.values.reduce(0, BarChart.saturatingAdd)) })),
                    ])
                }),
            ]
            var response = Response()
            return Console.page("activity", section: "activity", ctx: ctx, op: op, values: values, response: &response)
        }
    }

    /// A bucket's label: its UTC hour (`14:00`) or day (`2026-01-10`).
    static func label(_ start: Millis, range: Activity.Range) -> String {
        let text = RFC3339.format(start, fraction: false)   // 2026-01-10T14:00:00Z
        switch range {
        case .day: return String(text.dropFirst(11).prefix(5))
        case .month: return String(text.prefix(10))
        }
    }

    /// Between groups of three digits, as each language writes them.
    static func separator(_ locale: String) -> String {
        switch locale.prefix(2) {
        case "fr": return "\u{202F}"
        case "de", "id", "pt": return "."
        default: return ","
        }
    }
}
