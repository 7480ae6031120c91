import AuthEngine
import HTTP

/// The two steps of the hosted phone page as template values (`pages/phone`, `pages/phone_code`).
extension PhonePage {
    /// Step 1 (`pages/phone`): what the user typed and what went wrong.
    struct NumberStep {
        var continueURL: String
        var region: String
        var number: String
        var error: String? = nil
    }

    static func renderNumber(_ ctx: Context, _ step: NumberStep, status: Int = 200) throws -> Response {
        var response = Response.html("", status: status)
        let lang = ctx.locale
        let templates = ctx.app.templates
        var values: [TemplateField] = []
        values.reserveCapacity(8)
        values.append(TemplateField("csrf", .string(try CSRF.token(ctx, purpose: sendPurpose, response: &response))))
        values.append(TemplateField("continueUrl", .string(step.continueURL)))
        values.append(TemplateField("number", .string(step.number)))
        values.append(TemplateField("needsAppToken", .bool(!ctx.project.devMode)))
        values.append(TemplateField("otherHref", .string("/__/auth/signin" + continueQuery(step.continueURL))))
        // The regions the project offers; the preselected one when listed, else the first. With
        // none (production without `sms_regions` or test numbers) the page has no country list
        // and asks for the number in international form.
        let list = countryOptions(lang: lang, offered: offeredRegions(ctx.project, tables: templates.regions),
                                  tables: templates.regions)
        if list.first != nil {
            values.append(TemplateField("countryOptions", options(list, selectedAt: list.selectAt[step.region] ?? list.firstAt)))
        }
        if let e = step.error { values.append(TemplateField("error", .string(e))) }
        if ctx.project.devMode {
            values.append(TemplateField("devNotice", .string((strings(ctx)["phone.devNotice"] ?? "")
                .replacing("{url}", with: "/emulator/v1/projects/\(ctx.project.id)/verificationCodes"))))
        }
        response.body = templates.renderBytes("pages/phone", lang: lang, fields: values)
        return response
    }

    /// Step 2 for `sessionInfo`; back to step 1 when it names nothing (tampered or purged).
    static func renderCode(_ ctx: Context, sessionInfo: String, continueURL: String, error: AuthError? = nil, info: String? = nil,
                           status: Int = 200) throws -> Response {
        guard let st = try PhoneAPI.flow(ctx).status(sessionInfo: sessionInfo) else {
            var step = NumberStep(continueURL: continueURL, region: defaultRegion(ctx), number: "")
            step.error = message(error ?? AuthError(.invalidSessionInfo), ctx: ctx, status: nil)
            return try renderNumber(ctx, step, status: 400)
        }
        var response = Response.html("", status: status)
        let s = strings(ctx)
        let now = ctx.now
        let wait = max(0, (st.resendAvailableAt - now + 999) / 1000)
        let minutes = max(1, (st.expiresAt - now + 59_999) / 60_000)
        // The number goes between the two halves of the sentence, set apart in the markup.
        let sentence = s["phone.code.lead"] ?? "{number}"
        let lead = sentence.firstRange(of: "{number}").map { (sentence[..<$0.lowerBound], sentence[$0.upperBound...]) }
            ?? (sentence[...], ""[...])
        var values: [String: TemplateValue] = [
            "csrfVerify": .string(try CSRF.token(ctx, purpose: verifyPurpose, response: &response)),
            "csrfSend": .string(try CSRF.token(ctx, purpose: sendPurpose, response: &response)),
            "continueUrl": .string(continueURL),
            "sessionInfo": .string(sessionInfo),
            "phoneNumber": .string(st.phoneNumber),
            "leadBefore": .string(String(lead.0)), "leadAfter": .string(String(lead.1)),
            "needsAppToken": .bool(!ctx.project.devMode),
            "resendWait": .int(wait),
            "restartHref": .string("/__/auth/phone" + continueQuery(continueURL)),
        ]
        if st.state == .pending {
            values["expiresText"] = .string((s["phone.code.expires"] ?? "").replacing("{minutes}", with: String(minutes)))
        }
        if wait > 0 { values["resendWaitText"] = .string((s["phone.code.resendIn"] ?? "").replacing("{seconds}", with: String(wait))) }
        if let error { values["error"] = .string(message(error, ctx: ctx, status: st)) }
        if let info { values["info"] = .string(info) }
        values.merge(deliveryValues(st, strings: s, url: "/__/auth/phone/delivery")) { $1 }
        response.body = ctx.app.templates.renderBytes("pages/phone_code", ctx: ctx, values: values)
        return response
    }


    /// `code` upper-cased when it names a region the number parser knows (two letters with a
    /// calling code; `callingCodes`, read once).
    static func knownRegion(_ code: String, tables: RegionTables) -> String? {
        let c = code.uppercased()
        let known = tables.known.withLock { $0 } ?? {
            let set = Set(callingCodes(tables: tables).map(\.code).filter { $0.count == 2 })
            tables.known.withLock { $0 = set }
            return set
        }()
        return known.contains(c) ? c : nil
    }

    /// A language's usual country.
    private static let usualRegion = ["en": "US", "fr": "FR", "de": "DE", "pt": "BR", "id": "ID", "es": "ES", "it": "IT", "nl": "NL", "ja": "JP"]

    /// The region preselected in the country list, from the most preferred `Accept-Language` tag
    /// that says something: its region (`pt-BR` → BR), else its language's usual country (`fr` → FR);
    /// else the page locale's usual country.
    static func defaultRegion(_ ctx: Context) -> String {
        let header = ctx.request.header("accept-language") ?? ""
        let tables = ctx.app.templates.regions
        if header.utf8.allSatisfy({ $0 < 0x80 }) {
            if let region = asciiRegion(header, tables: tables) { return region }
            return usualRegion[ctx.locale] ?? "US"
        }
        for part in header.split(separator: ",") {
            let tag = Locales.trimmed(part.split(separator: ";").first ?? "")
            let subtags = tag.split(whereSeparator: { $0 == "-" || $0 == "_" })
            if let region = subtags.dropFirst().first(where: { $0.count == 2 }).flatMap({ knownRegion(String($0), tables: tables) }) { return region }
            if let first = subtags.first, let region = usualRegion[first.lowercased()] { return region }
        }
        return usualRegion[ctx.locale] ?? "US"
    }

    /// `defaultRegion`'s reading of an all-ASCII `Accept-Language` header, over its bytes (the
    /// same answers: in ASCII a byte is a character).
    static func asciiRegion(_ header: String, tables: RegionTables) -> String? {
        var header = header
        return header.withUTF8 { u -> String? in
            var start = 0
            while start < u.count {
                let end = u[start...].firstIndex(of: UInt8(ascii: ",")) ?? u.count
                defer { start = end + 1 }
                var tagEnd = u[start..<end].firstIndex(of: UInt8(ascii: ";")) ?? end
                var tagStart = start
                while tagStart < tagEnd, u[tagStart] == 0x20 || u[tagStart] == 0x09 { tagStart += 1 }
                while tagEnd > tagStart, u[tagEnd - 1] == 0x20 || u[tagEnd - 1] == 0x09 { tagEnd -= 1 }
                // Subtags split on `-` and `_`, empty ones skipped.
                var first: Range<Int>?
                var i = tagStart
                while i < tagEnd {
                    while i < tagEnd, u[i] == UInt8(ascii: "-") || u[i] == UInt8(ascii: "_") { i += 1 }
                    guard i < tagEnd else { break }
                    var j = i
                    while j < tagEnd, u[j] != UInt8(ascii: "-"), u[j] != UInt8(ascii: "_") { j += 1 }
                    if first == nil {
                        first = i..<j
                    } else if j - i == 2 {
                        if let region = knownRegion(String(decoding: u[i..<j], as: UTF8.self), tables: tables) { return region }
                        break
                    }
                    i = j
                }
                if let f = first {
                    let lower = String(unsafeUninitializedCapacity: f.count) { out in
                        for (k, c) in u[f].enumerated() { out[k] = c &- 0x41 < 26 ? c | 0x20 : c }
                        return f.count
                    }
                    if let region = usualRegion[lower] { return region }
                }
            }
            return nil
        }
    }
}

extension PhonePage {
    /// The code step's channels and delivery, shared by the phone and second-factor pages: the
    /// project's other channels, offered with "send again" (same delay, same budgets); "not
    /// delivered" when the provider said so; and, while the answer may still change, the URL the
    /// page's script asks (`url`, answered by `deliveryAnswer`).
    static func deliveryValues(_ st: PhoneSignIn.Status, strings s: LocaleStrings, url: String) -> [String: TemplateValue] {
        var values: [String: TemplateValue] = [:]
        let others = st.channels.filter { $0 != .sms }.map { c -> TemplateValue in
            .object(["channel": .string(c.rawValue), "label": .string(s["phone.code.by." + c.rawValue] ?? c.rawValue)])
        }
        if !others.isEmpty { values["otherChannels"] = .list(others) }
        if let channel = st.channel {
            values["channel"] = .string(channel.rawValue)
            values["notDeliveredText"] = .string(s["phone.code.notDelivered." + channel.rawValue] ?? "")
            values["fallbackText"] = .string(s["phone.code.fallback"] ?? "")
            for c in PhoneChannel.allCases { values["channelName_" + c.rawValue] = .string(s["phone.code.channel." + c.rawValue] ?? c.rawValue) }
        }
        if st.state == .pending, st.notDelivered { values["notDelivered"] = .bool(true) }
        if st.state == .pending, st.channel != nil, !(st.delivery.map { $0.rank == 2 } ?? false) {
            values["pollDelivery"] = .bool(true)
            values["deliveryURL"] = .string(url)
        }
        return values
    }

    /// What became of the code's message, for the code step's script (`POST`, the code form's
    /// CSRF token of `purpose` and `sessionInfo`): `{"state": queued|sent|delivered|undelivered|failed,
    /// "channel": sms|whatsapp|voice}`; `{}` for a session that names nothing or is over.
    static func deliveryAnswer(_ ctx: Context, purpose: String) throws -> Response {
        let f = fields(ctx)
        try CSRF.verify(ctx, purpose: purpose, token: f["csrf"])
        guard let st = try PhoneAPI.flow(ctx).status(sessionInfo: f["sessionInfo"]), st.state == .pending, let channel = st.channel else {
            return .json(.object([]), headers: [("Cache-Control", "no-store")])
        }
        return .json(.obj(("state", (st.delivery ?? .queued).rawValue), ("channel", channel.rawValue)), headers: [("Cache-Control", "no-store")])
    }
}
