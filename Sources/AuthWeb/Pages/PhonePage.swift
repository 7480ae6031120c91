import AuthEngine
import HTTP
import TextCoding

/// The hosted phone sign-in page (`GET|POST /__/auth/phone`, `POST /__/auth/phone/verify`) and the
/// sign-in chooser (`GET /__/auth/signin`): firebase-wire.md §4, gatehouse.md "Phone sign-in".
/// Works without JavaScript in dev mode; outside dev mode the forms carry an app token from the
/// proof of work (`pow.js`), added by `phone.js` just before submitting.
enum PhonePage {
    /// CSRF purposes: the number form and "send again" share one; the code form has its own.
    static let sendPurpose = "phone-send"
    static let verifyPurpose = "phone-verify"
    /// The reentrancy key of codes requested from the hosted page.
    static let appID = "web"

    /// A small chooser: phone or email (and a passkey, when the project has them), carrying
    /// `continueUrl` along.
    static func chooser(_ ctx: inout Context) throws -> Response {
        let q = continueQuery(ctx.request.query("continueUrl"))
        var values: [String: TemplateValue] = ["phoneHref": .string("/__/auth/phone" + q), "emailHref": .string("/__/auth/email" + q)]
        if ctx.project.passkeys.enabled {
            values["passkeyHref"] = .string("/__/auth/passkey" + continueQuery(ContinueURL.safe(ctx.request.query("continueUrl"), project: ctx.project)))
        }
        return .html(ctx.app.templates.render("pages/signin", ctx: ctx, values: values))
    }

    /// Step 1: country and number.
    static func show(_ ctx: inout Context) throws -> Response {
        try renderNumber(ctx, NumberStep(continueURL: ctx.request.query("continueUrl") ?? "", region: defaultRegion(ctx), number: ""))
    }

    /// Sends the code (or, with `resend`, a new one) and renders step 2.
    static func start(_ ctx: inout Context) throws -> Response {
        let f = fields(ctx)
        try CSRF.verify(ctx, purpose: sendPurpose, token: f["csrf"])
        let continueURL = f["continueUrl"] ?? ""
        let flow = PhoneAPI.flow(ctx)
        if let old = f["resend"] {
            // "Send a new code" (a text), "Send by WhatsApp" or "Call me".
            let channel = f["channel"].flatMap(PhoneChannel.init(rawValue:)) ?? .sms
            do {
                let r = try flow.resend(sessionInfo: old, appToken: f["appToken"], remoteAddress: ctx.request.remoteAddress,
                                        channel: channel, language: ctx.locale, composeSMS: SMSText.composer(ctx))
                if r.smsQueued { ctx.app.outboxNotifier() }
                let info = strings(ctx)[channel == .sms ? "phone.code.resent" : "phone.code.resentBy." + channel.rawValue]
                return try renderCode(ctx, sessionInfo: r.sessionInfo, continueURL: continueURL, info: info)
            } catch let e as AuthError where handled(e) {
                return try renderCode(ctx, sessionInfo: old, continueURL: continueURL, error: e, status: 400)
            }
        }
        var step = NumberStep(continueURL: continueURL, region: f["region"].flatMap { knownRegion($0, tables: ctx.app.templates.regions) } ?? defaultRegion(ctx),
                              number: String((f["phoneNumber"] ?? "").prefix(64)))
        do {
            let r = try flow.sendCode(.init(phoneNumber: f["phoneNumber"], defaultRegion: step.region, appToken: f["appToken"],
                                            apiKey: nil, appID: appID, remoteAddress: ctx.request.remoteAddress,
                                            language: ctx.locale, composeSMS: SMSText.composer(ctx)))
            if r.smsQueued { ctx.app.outboxNotifier() }
            return try renderCode(ctx, sessionInfo: r.sessionInfo, continueURL: continueURL)
        } catch let e as AuthError where handled(e) {
            step.error = message(e, ctx: ctx, status: nil)
            return try renderNumber(ctx, step, status: 400)
        }
    }

    /// `POST /__/auth/phone/delivery`: what became of the code's message (`deliveryAnswer`).
    static func delivery(_ ctx: inout Context) throws -> Response { try deliveryAnswer(ctx, purpose: verifyPurpose) }

    /// Step 2: checks the code, sets the session cookie and redirects (303) to `continueUrl`
    /// when it is safe, else to the account page.
    static func verify(_ ctx: inout Context) throws -> Response {
        let f = fields(ctx)
        try CSRF.verify(ctx, purpose: verifyPurpose, token: f["csrf"])
        let session = f["sessionInfo"]
        let code = f["code"].map { String($0.filter { !$0.isWhitespace && $0 != "-" }) }
        do {
            let result = try PhoneAPI.flow(ctx).signIn(.init(sessionInfo: session, code: code, operation: .signUpOrIn,
                                                             remoteAddress: ctx.request.remoteAddress, issueTokens: false))
            guard case let .signedIn(account, _, _) = result else { throw AuthError(.internalError, "hosted sign-in returned a proof") }
            var response = Response.redirect(to: ContinueURL.safe(f["continueUrl"], project: ctx.project) ?? "/__/auth/account")
            try SessionCookie.set(for: account, provider: "phone", ctx: ctx, response: &response)
            return response
        } catch let e as AuthError where handled(e) {
            return try renderCode(ctx, sessionInfo: session ?? "", continueURL: f["continueUrl"] ?? "", error: e, status: 400)
        }
    }

    /// Errors shown inside the form; anything else goes to the error page.
    static func handled(_ e: AuthError) -> Bool {
        ![.internalError, .permissionDenied, .notFound, .notImplemented].contains(e.code)
    }

    static func fields(_ ctx: Context) -> [String: String] {
        guard ctx.request.contentType == "application/x-www-form-urlencoded" else { return [:] }
        var out: [String: String] = [:]
        for (k, v) in ctx.request.formFields where out[k] == nil && !v.isEmpty { out[k] = v }
        return out
    }

    static func continueQuery(_ continueURL: String?) -> String {
        guard let c = continueURL, !c.isEmpty else { return "" }
        return "?" + PercentEncoding.query([("continueUrl", c)])
    }

    static func strings(_ ctx: Context) -> LocaleStrings { ctx.app.templates.locales.strings(for: ctx.locale) }

    /// A localized message for a flow error, in the words of the page.
    static func message(_ e: AuthError, ctx: Context, status: PhoneSignIn.Status?) -> String {
        let s = strings(ctx)
        func t(_ key: String, _ values: [String: String] = [:]) -> String {
            var text = s["phone.errors." + key] ?? s["phone.errors.generic"] ?? key
            for (k, v) in values { text = text.replacing("{\(k)}", with: v) }
            return text
        }
        switch e.code {
        case .invalidPhoneNumber: return t(e.detail == "TOO_SHORT" ? "tooShort" : e.detail == "TOO_LONG" ? "tooLong" : "invalidNumber")
        case .operationNotAllowed where e.detail?.hasPrefix("This project does not send codes by") == true: return t("channel")
        case .operationNotAllowed: return t("region")
        case .tooManyAttempts where e.detail == PhoneSignIn.resendTooSoon:
            let wait = status.map { max(1, ($0.resendAvailableAt - ctx.now + 999) / 1000) } ?? 60
            return t("resendTooSoon", ["seconds": String(wait)])
        case .tooManyAttempts: return t("tooMany")
        case .missingClientIdentifier: return t("jsRequired")
        case .captchaCheckFailed, .invalidAppCredential, .missingAppCredential: return t("verification")
        case .invalidCode:
            let left = status?.attemptsLeft ?? 0
            return left == 1 ? t("wrongCodeOne") : t("wrongCodeOther", ["n": String(left)])
        case .sessionExpired:
            switch status?.state {
            case .burned?: return t("burned")
            case .expired?: return t("expired")
            default: return t("used")
            }
        case .missingCode: return t("missingCode")
        case .invalidSessionInfo, .missingSessionInfo: return t("restart")
        case .userDisabled: return t("disabled")
        default: return t("generic")
        }
    }
}
