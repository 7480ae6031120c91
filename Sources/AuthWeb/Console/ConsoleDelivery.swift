import AuthEngine
import HTTP
import TextCoding

/// The console's Delivery and abuse page (docs/console.md "Delivery and abuse"):
/// `GET /__/auth/console/delivery?status=&before=` and its actions, `POST` with `action`
/// `retry`/`discard` (an outbox message, `id`) or `release` (an SMS pumping hold, `key`).
/// - the outbox's pending, failed (pending after a failed attempt) and dead messages of the
///   project, newest first, 50 a page (`before`: the last id shown), recipients redacted; or
///   the sent ones (`status=sent`); each with the provider that took it, what that provider
///   last reported (docs/operations.md "Delivery receipts") and its error code;
/// - the last day's messages by channel, provider and country, as the providers reported them;
/// - the SMS pumping holds in force;
/// - the SMS sent per destination country per day over 30 days (a chart of the top countries
///   and a table).
/// Each action is one `DeliveryOperations` call (the change and its audit row, the operator as
/// actor, in one transaction); a retried message wakes the outbox worker.
enum ConsoleDelivery {
    static let pageSize = 50
    /// Countries drawn and tabled on their own; the rest are summed as "Other".
    static let topRegions = 6

    enum Filter: String, CaseIterable { case all, pending, failed, dead, sent }

    /// `GET /__/auth/console/delivery`
    static func show(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            var response = Response()
            let notice = ctx.request.query("notice").flatMap { ctx.strings["console_ops.delivery.notice.\($0)"] }
            return try page(ctx, op, response: &response, notice: notice)
        }
    }

    /// `POST /__/auth/console/delivery`
    static func act(_ ctx: inout Context) throws -> Response {
        try Console.handle(&ctx) { ctx, op in
            let s = ctx.strings
            let project = Console.project(ctx)
            let action = ctx.request.formField("action") ?? ""
            let target = ctx.request.formField(action == "release" ? "key" : "id") ?? ""
            var response = Response()
            do {
                try ConsoleForm.consume(ctx, purpose: purpose(action, project: project.id, target: target))
            } catch let e as AuthError where e.code == .permissionDenied {
                return try page(ctx, op, response: &response, error: s["console.errors.form"], status: 403)
            }
            let operations = DeliveryOperations(store: ctx.store, clock: ctx.app.clock, actor: op.actor, remoteAddress: ctx.request.remoteAddress)
            let done: Bool
            switch action {
            case "retry", "discard":
                guard let id = Int64(target), id > 0 else { return try page(ctx, op, response: &response, error: s["console.errors.not_found"], status: 404) }
                done = action == "retry" ? try operations.retry(id: id, project: project.id) : try operations.discard(id: id, project: project.id)
                if done, action == "retry" { ctx.app.outboxNotifier() }
            case "release":
                guard !target.isEmpty, target.utf8.count <= 32 else {
                    return try page(ctx, op, response: &response, error: s["console.errors.not_found"], status: 404)
                }
                done = try operations.releaseHold(target, project: project.id)
            default:
                return try page(ctx, op, response: &response, error: s["console.errors.not_found"], status: 400)
            }
            guard done else { return try page(ctx, op, response: &response, error: s["console.errors.not_found"], status: 409) }
            return Console.back(ctx, "/delivery?" + ConsoleUsers.query(ctx, project) + listQuery(ctx), notice: action)
        }
    }

    /// A form token is good for one action on one message or hold of one project.
    static func purpose(_ action: String, project: String, target: String) -> String {
        "delivery|" + action + "|" + project + "|" + target
    }

    /// The list's own query (`&status=…&before=…`), kept across an action.
    static func listQuery(_ ctx: Context) -> String {
        var q = ""
        if let f = (ctx.request.query("status") ?? ctx.request.formField("status")).flatMap(Filter.init(rawValue:)) { q += "&status=" + f.rawValue }
        if let b = (ctx.request.query("before") ?? ctx.request.formField("before")).flatMap({ Int64($0) }), b > 0 { q += "&before=\(b)" }
        return q
    }

    static func page(_ ctx: Context, _ op: Operator, response: inout Response, notice: String? = nil, error: String? = nil,
                     status: Int = 200) throws -> Response {
        let s = ctx.strings
        let project = Console.project(ctx)
        let now = ctx.now
        let filter = (ctx.request.query("status") ?? ctx.request.formField("status")).flatMap(Filter.init(rawValue:)) ?? .all
        let before = (ctx.request.query("before") ?? ctx.request.formField("before")).flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        let statuses: [OutboxMessage.Status] = switch filter {
        case .all: [.pending, .sending, .dead]
        case .pending, .failed: [.pending]
        case .dead: [.dead]
        case .sent: [.sent]
        }
        var messages = try ctx.store.outboxPage(project: project.id, statuses: statuses, failedOnly: filter == .failed, beforeID: before,
                                                limit: pageSize + 1)
        let more = messages.count > pageSize
        if more { messages.removeLast(messages.count - pageSize) }
        let query = ConsoleUsers.query(ctx, project)
        let listBase = Console.base + "/delivery?" + query + "&status=" + filter.rawValue
        var values: [String: TemplateValue] = [
            "filters": .list(Filter.allCases.map { f in
                .object(["value": .string(f.rawValue), "label": .string(s["console_ops.delivery.status_" + f.rawValue] ?? f.rawValue),
                         "selected": .bool(f == filter)])
            }),
            "status": .string(filter.rawValue),
            "before": .string(before.map(String.init) ?? ""),
            "messages": .list(try messages.map { try row($0, ctx: ctx, project: project, now: now, response: &response) }),
            "noMessages": .bool(messages.isEmpty),
        ]
        if before != nil { values["newestHref"] = .string(listBase) }
        if more, let last = messages.last { values["olderHref"] = .string(listBase + "&before=\(last.id)") }

        let holds = try SMSPumpingGuard.activeHolds(store: ctx.store, project: project.id, at: now)
        values["holds"] = .list(try holds.map { h in
            var v: [String: TemplateValue] = [
                "kind": .string(s["console_ops.delivery.hold." + h.kind.rawValue] ?? h.kind.rawValue),
                "key": .string(h.key),
                "since": .string(AccountPage.display(h.heldAt / 1000)), "sinceISO": .string(RFC3339.format(h.heldAt)),
                "until": .string(h.expiresAt.map { AccountPage.display($0 / 1000) } ?? s["console_ops.delivery.hold.until_released"] ?? ""),
                "rate": .string("\(h.recentCount) / \(h.baselineCount)"),
                "releaseLabel": .string((s["console_ops.delivery.hold.release_label"] ?? "{key}").replacing("{key}", with: h.key)),
            ]
            v.merge(try ConsoleForm.fields(ctx, purpose: purpose("release", project: project.id, target: h.key), response: &response)) { $1 }
            return .object(v)
        })
        values["noHolds"] = .bool(holds.isEmpty)

        let (days, regions) = try Activity(store: ctx.store, clock: ctx.app.clock).smsRegions(project: project.id)
        let top = Array(regions.prefix(topRegions))
        let rest = regions.dropFirst(topRegions)
        var shown = top
        if !rest.isEmpty {
            shown.append(Activity.Series(name: s["console_ops.delivery.other"] ?? "Other",
                                         values: days.indices.map { i in rest.reduce(0) { BarChart.saturatingAdd($0, $1.values[i]) } }))
        }
        let labels = days.map { ConsoleActivity.label($0, range: .month) }
        let chart = BarChart(bucketLabels: labels, series: shown.map { BarChart.Series(name: $0.name, values: $0.values) },
                             title: s["console_ops.delivery.regions_chart"] ?? "", emptyText: s["console_ops.delivery.regions_empty"] ?? "",
                             groupingSeparator: ConsoleActivity.separator(ctx.locale))
        values["regionsChart"] = .html([ArraySlice(chart.svg(idPrefix: "chart-regions-").utf8)])
        values["regionColumns"] = .list(shown.map { .string($0.name) })
        values["regionDays"] = .list(days.indices.reversed().compactMap { i -> TemplateValue? in
            let counts = shown.map { $0.values[i] }
            let total = counts.reduce(0, BarChart.saturatingAdd)
            guard total > 0 else { return nil }
            return .object(["day": .string(labels[i]), "counts": .list(counts.map { .string(String($0)) }), "total": .string(String(total))])
        })
        values["regionTotals"] = .list(shown.map { .string(String($0.values.reduce(0, BarChart.saturatingAdd))) })
        values["regionTotal"] = .string(String(shown.reduce(0) { BarChart.saturatingAdd($0, $1.values.reduce(0, BarChart.saturatingAdd)) }))
        values["noRegions"] = .bool(regions.isEmpty)
        let receipts = receiptRows(try ctx.store.deliveryCounts(project: project.id, since: now - 86_400_000), strings: s)
        values["receipts"] = .list(receipts)
        values["noReceipts"] = .bool(receipts.isEmpty)
        if let notice { values["notice"] = .string(notice) }
        if let error { values["error"] = .string(error) }
        return Console.page("delivery", section: "delivery", ctx: ctx, op: op, values: values, response: &response, status: status)
    }

    /// The last day's messages by channel, provider and country: waiting (no provider yet),
    /// sent (taken by a provider, no end reported), each end, and the delivered share of the
    /// ends reported (a message that died unsent counts as failed).
    static func receiptRows(_ counts: [DeliveryCount], strings s: LocaleStrings) -> [TemplateValue] {
        struct Key: Hashable { let channel: OutboxMessage.Channel; let provider: String; let region: String }
        var table: [Key: [DeliveryState: Int]] = [:]
        var order: [Key] = []
        for c in counts where c.channel != .email && c.channel != .push {
            let key = Key(channel: c.channel, provider: c.provider, region: c.region)
            if table[key] == nil { order.append(key) }
            table[key, default: [:]][c.state, default: 0] += c.count
        }
        return order.map { key in
            let n = table[key] ?? [:]
            let ends = (n[.delivered] ?? 0) + (n[.undelivered] ?? 0) + (n[.failed] ?? 0)
            let ratio = ends == 0 ? "–" : String((n[.delivered] ?? 0) * 100 / ends) + " %"
            return .object([
                "channel": .string(s["console_ops.delivery.channel." + key.channel.rawValue] ?? key.channel.rawValue),
                "provider": .string(key.provider.isEmpty ? s["console_ops.delivery.receipts.provider_none"] ?? "" : key.provider),
                "region": .string(key.region.isEmpty ? "–" : key.region),
                "queued": .string(String(n[.queued] ?? 0)), "sent": .string(String(n[.sent] ?? 0)),
                "delivered": .string(String(n[.delivered] ?? 0)), "undelivered": .string(String(n[.undelivered] ?? 0)),
                "failed": .string(String(n[.failed] ?? 0)), "ratio": .string(ratio),
            ])
        }
    }

    static func row(_ m: OutboxMessage, ctx: Context, project: ProjectSettings, now: Millis, response: inout Response) throws -> TemplateValue {
        let s = ctx.strings
        let state = m.status == .pending && m.lastError != nil ? "failed" : m.status.rawValue
        var v: [String: TemplateValue] = [
            "id": .string(String(m.id)),
            "created": .string(AccountPage.display(m.createdAt / 1000)), "createdISO": .string(RFC3339.format(m.createdAt)),
            "channel": .string(s["console_ops.delivery.channel." + m.channel.rawValue] ?? m.channel.rawValue),
            "recipient": .string(redacted(m.recipient, channel: m.channel)),
            "attempts": .string(String(m.attempts)),
            "lastError": ConsoleUsers.text(m.lastError.map { String($0.prefix(300)) }),
            "state": .string(state), "stateLabel": .string(s["console_ops.delivery.status." + state] ?? state),
            "dead": .bool(m.status == .dead),
            "retryLabel": .string((s["console_ops.delivery.retry_label"] ?? "{id}").replacing("{id}", with: String(m.id))),
            "discardLabel": .string((s["console_ops.delivery.discard_label"] ?? "{id}").replacing("{id}", with: String(m.id))),
        ]
        if m.provider != nil || m.delivery != nil {
            var d: [String: TemplateValue] = ["provider": ConsoleUsers.text(m.provider)]
            if let state = m.delivery {
                d["state"] = .string(state.rawValue)
                d["label"] = .string(s["console_ops.delivery.delivery_state." + state.rawValue] ?? state.rawValue)
                d["bad"] = .bool(state == .undelivered || state == .failed)
            }
            if let code = m.deliveryError {
                d["error"] = .string((s["console_ops.delivery.delivery_error"] ?? "{code}").replacing("{code}", with: code))
            }
            v["delivery"] = .object(d)
        }
        if m.status == .pending {
            v["nextAttempt"] = .string(AccountPage.display(max(m.nextAttemptAt, m.createdAt) / 1000))
            v["nextAttemptISO"] = .string(RFC3339.format(m.nextAttemptAt))
            v["retry"] = .object(try ConsoleForm.fields(ctx, purpose: purpose("retry", project: project.id, target: String(m.id)), response: &response))
        }
        if m.status == .pending || m.status == .dead {
            v["discard"] = .object(try ConsoleForm.fields(ctx, purpose: purpose("discard", project: project.id, target: String(m.id)),
                                                          response: &response))
        }
        // A message being sent or sent has no action: its cell stays empty (a card leaves it out).
        v["actions"] = .bool(m.status == .pending || m.status == .dead)
        return .object(v)
    }

    /// A recipient as an operator may see it: a number as `PhoneNumber.description` writes it
    /// (`+33•••••••78`), an email address with its local part cut to its first letter or two
    /// (`ad…@example.com`), a device token to its first 8 characters.
    static func redacted(_ recipient: String, channel: OutboxMessage.Channel) -> String {
        switch channel {
        case .sms, .whatsapp, .voice:
            if let n = try? PhoneNumber(parsing: recipient) { return n.description }
            return MFAEnrollment.obfuscate(recipient)
        case .email:
            guard let at = recipient.lastIndex(of: "@") else { return String(recipient.prefix(2)) + "…" }
            let local = recipient[..<at]
            return String(local.prefix(local.count > 4 ? 2 : 1)) + "…" + recipient[at...]
        case .push:
            return String(recipient.prefix(8)) + "…"
        }
    }
}
