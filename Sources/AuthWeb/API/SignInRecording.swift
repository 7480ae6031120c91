import AuthEngine
import TextCoding

/// The one place the wire's token answers pass on their way out, and where every sign-in (wire
/// or hosted page) meets the new sign-in notice. The device of a sign-in (user agent and coarse
/// network, `SignInDevice`) is given to the flow (`device` of each flow, from `device(_:)`), which
/// writes it with the refresh token in its own transaction; its family keeps it through every
/// refresh, and hosted sessions record theirs as they start. Here, only when the project turns
/// the notice on: `SignInNotice.noteDevice` notes the device and, for one the account has not
/// used before, enqueues the email (`SignInNoticeMail`), as one small write transaction after the
/// flow's. It never fails the sign-in: the tokens are answered whatever happens here (a store
/// error is logged; the notice is then not sent).
enum SignInRecording {
    /// The request's device.
    static func device(_ ctx: Context) -> SignInDevice {
        SignInDevice(userAgent: ctx.request.header("user-agent"), remoteAddress: ctx.request.remoteAddress)
    }

    /// The notice of a wire sign-in that issued `tokens` (nil: the flow issued none, e.g. a
    /// second factor follows). `signIn` is false for tokens that replace the caller's own after a
    /// change (an enrolment, a withdrawal, an update, a link): no new sign-in.
    static func record(_ ctx: Context, _ tokens: IssuedTokens?, signIn: Bool = true) {
        guard let tokens, signIn, ctx.project.signInNotice.enabled else { return }
        let hash = SignInTokens.hash(refreshToken: tokens.refreshToken)
        var mailed = false
        do {
            try ctx.store.transaction {
                guard let token = try ctx.store.refreshToken(hash: hash),
                      let account = try ctx.store.account(project: token.projectID, localID: token.localID) else { return }
                mailed = try notice(ctx, account: account, provider: token.provider, device: device(ctx)) == .mailed
            }
        } catch {
            ctx.app.log.warning("sign-in: could not note the device: \(error)", requestID: ctx.request.logID)
        }
        if mailed { ctx.app.outboxNotifier() }
    }

    /// A hosted page's sign-in (its session already records the device): the notice only.
    static func hostedSignIn(_ ctx: Context, account: Account, provider: String) {
        guard ctx.project.signInNotice.enabled else { return }
        do {
            if try notice(ctx, account: account, provider: provider, device: device(ctx)) == .mailed { ctx.app.outboxNotifier() }
        } catch {
            ctx.app.log.warning("sign-in: could not note the device: \(error)", requestID: ctx.request.logID)
        }
    }

    static func notice(_ ctx: Context, account: Account, provider: String, device: SignInDevice) throws -> SignInNotice.Outcome {
        let flow = SignInNotice(store: ctx.store, clock: ctx.app.clock, random: ctx.app.random, policy: ctx.project.signInNotice)
        let lang = ctx.locale, origin = ctx.origin, templates = ctx.app.templates
        return try flow.noteDevice(account: account, provider: provider, device: device, remoteAddress: ctx.request.remoteAddress) {
            SignInNoticeMail.compose($0, templates: templates, lang: lang, origin: origin)
        }
    }
}

/// The new sign-in notice's email: subject, plain text and HTML from `sessions.notice.mail.*`
/// and the templates `email/sign_in_notice_text` and `email/sign_in_notice_html`: the device as
/// the account page names it, the network prefix, the time, and the sign-out-everywhere link.
enum SignInNoticeMail {
    static func link(origin: String, token: String, lang: String) -> String {
        origin + "/__/auth/signout-everywhere?token=" + PercentEncoding.encode(token) + "&hl=" + PercentEncoding.encode(lang)
    }

    static func compose(_ input: SignInNoticeMessageInput, templates: Templates, lang: String, origin: String) -> OobMessage {
        let strings = templates.locales.strings(for: lang)
        let time = EmailMessages.timestamp(input.at)
        func text(_ key: String) -> String {
            var s = strings["sessions.notice.mail.\(key)"] ?? ""
            for (k, v) in [("{project}", input.projectID), ("{email}", input.recipient), ("{time}", time)] { s = s.replacing(k, with: v) }
            return s
        }
        var m: [String: String] = [:]
        for key in ["heading", "intro", "device", "network", "time", "if_you", "if_not", "button", "fallback", "expiry", "footer"] { m[key] = text(key) }
        let values: [String: TemplateValue] = [
            "m": TemplateValue(m), "link": .string(link(origin: origin, token: input.token, lang: lang)),
            "device": .string(AccountPage.deviceText(input.device.name, strings)),
            "network": .string(input.device.network ?? (strings["sessions.network_unknown"] ?? "")), "time": .string(time),
        ]
        return OobMessage(subject: text("subject"),
                          text: templates.render("email/sign_in_notice_text", lang: lang, values: values),
                          html: templates.render("email/sign_in_notice_html", lang: lang, values: values))
    }
}
