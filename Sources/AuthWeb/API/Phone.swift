import AuthEngine
import HTTP
import JSONValue

/// Phone sign-in wire endpoints: `accounts:sendVerificationCode` (firebase-wire.md §2.1),
/// `accounts:signInWithPhoneNumber` (§2.2) and the emulator's `verificationCodes` (§2.18).
enum PhoneAPI {
    static func flow(_ ctx: Context) -> PhoneSignIn {
        var f = PhoneSignIn(store: ctx.store, clock: ctx.app.clock, random: ctx.app.random, tokens: ctx.app.tokens, project: ctx.project)
        f.device = SignInRecording.device(ctx)
        f.messages = TemplateCodeMessages(templates: ctx.app.templates)
        return f
    }

    /// `{phoneNumber, recaptchaToken? | iosReceipt + iosSecret, …}` → `{sessionInfo}`.
    static func sendVerificationCode(_ ctx: inout Context) throws -> Response {
        try rejectTenant(ctx)
        let result = try flow(ctx).sendCode(.init(
            phoneNumber: ctx.string("phoneNumber"), appToken: ctx.nonEmpty("recaptchaToken"),
            iosCredential: PushAPI.credential(ctx.string("iosReceipt"), ctx.string("iosSecret")), apiKey: ctx.apiKey,
            appID: appID(ctx), remoteAddress: ctx.request.remoteAddress, composeSMS: SMSText.composer(ctx)))
        if result.smsQueued { ctx.app.outboxNotifier() }
        return .json(.obj(("sessionInfo", result.sessionInfo)))
    }

    /// `{sessionInfo, code | temporaryProof, phoneNumber; idToken?, operation?}` → tokens, or a
    /// `temporaryProof` when the number belongs to another account.
    static func signInWithPhoneNumber(_ ctx: inout Context) throws -> Response {
        try rejectTenant(ctx)
        let rawOp = ctx.string("operation")
        guard let op = PhoneSignIn.Operation(wire: rawOp) else {
            throw AuthError(.invalidArgument, "Invalid value at 'operation' (TYPE_ENUM), \"\(rawOp ?? "")\"")
        }
        let result = try flow(ctx).signIn(.init(
            sessionInfo: ctx.string("sessionInfo"), code: ctx.string("code"), temporaryProof: ctx.string("temporaryProof"),
            phoneNumber: ctx.string("phoneNumber"), idToken: ctx.nonEmpty("idToken"), operation: op,
            remoteAddress: ctx.request.remoteAddress))
        switch result {
        case let .signedIn(account, tokens, isNew):
            // Linking a number to the caller's account is no new sign-in.
            SignInRecording.record(ctx, tokens, signIn: ctx.nonEmpty("idToken") == nil)
            return .json(.obj((tokens?.wirePairs ?? []) + [
                ("localId", account.localID), ("isNewUser", isNew), ("phoneNumber", account.phoneNumber),
            ]))
        case let .numberInUse(proof, expiresIn, number):
            return .json(.obj(("temporaryProof", proof), ("temporaryProofExpiresIn", String(expiresIn)), ("phoneNumber", number)))
        }
    }

    /// Dev mode: the codes in the dev outbox that can still be used, oldest first, by whatever
    /// channel they went (a session's latest code only: a fallback's new code replaces the old).
    static func emulatorVerificationCodes(_ ctx: inout Context) throws -> Response {
        let flow = flow(ctx)
        var messages: [OutboxMessage] = []
        for channel in [OutboxMessage.Channel.sms, .whatsapp, .voice] {
            messages += try ctx.store.messages(project: ctx.project.id, channel: channel, limit: 1000)
        }
        var latest: [String: (id: Int64, entry: JSON)] = [:]
        for m in messages {
            guard let meta = try? JSONParser().parse(m.metadata), let session = meta["sessionInfo"]?.stringValue,
                  let code = meta["code"]?.stringValue, let number = meta["phoneNumber"]?.stringValue else { continue }
            if let seen = latest[session], seen.id > m.id { continue }
            latest[session] = (m.id, .obj(("code", code), ("phoneNumber", number), ("sessionInfo", session)))
        }
        var codes: [JSON] = []
        for (session, found) in latest.sorted(by: { $0.value.id < $1.value.id }) {
            // The emulator forgets a code once it signed someone in; so does Gatehouse.
            guard let status = try flow.status(sessionInfo: session), status.state != .used else { continue }
            codes.append(found.entry)
        }
        return .json(.obj(("verificationCodes", JSON.array(codes))))
    }

    /// Phone sign-in is not offered on tenants (firebase-wire.md §1.7).
    static func rejectTenant(_ ctx: Context) throws {
        if let tenant = ctx.nonEmpty("tenantId") {
            throw AuthError(.unsupportedTenantOperation, "Phone sign-in is not available for tenant \(tenant.prefix(64)).")
        }
    }

    /// The calling app, the reentrancy key of a send: bundle id, Android package or Firebase app id.
    static func appID(_ ctx: Context) -> String {
        for h in ["x-ios-bundle-identifier", "x-android-package", "x-firebase-gmpid"] {
            if let v = ctx.request.header(h), !v.isEmpty { return v }
        }
        return ""
    }
}

/// The SMS text: `templates/sms/phone_code.<lang>.mustache` (English when the language has none),
/// rendered with `code` and `minutes`; the engine appends the origin-bound line `@domain #code`.
enum SMSText {
    static func composer(_ ctx: Context) -> (String) -> String {
        composer(templates: ctx.app.templates, lang: ctx.locale, project: ctx.project)
    }

    static func composer(templates: Templates, lang: String, project: ProjectSettings) -> (String) -> String {
        let localized = "sms/phone_code.\(lang)"
        let name = templates.contains(localized) ? localized : "sms/phone_code.en"
        let minutes = max(1, min(project.phone.codeLifetimeSeconds, 600) / 60)
        return { code in
            var text = templates.render(name, lang: lang, values: ["code": .string(code), "minutes": .int(minutes)])
            while text.last?.isNewline == true { text.removeLast() }
            return text
        }
    }
}
