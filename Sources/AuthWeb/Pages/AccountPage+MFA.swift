import AuthEngine
import HTTP
import TextCoding

/// The account page's second factors (gatehouse.md "Second factor"): the list (obfuscated
/// numbers, authenticator apps, names) with a remove button each, and the enrolment of a phone —
/// `GET /__/auth/account?enrol=1[&continueUrl=…]` (number form), `POST /__/auth/account/mfa`
/// (sends the code, code form), `POST /__/auth/account/mfa/verify` (adds the phone; the session
/// starts again with it as its second factor). `POST /__/auth/account/mfa/remove` withdraws a
/// factor; the engine revokes every earlier session, so the page starts a new one. Every form is
/// CSRF-checked; the engine's rules are those of the wire (`PhoneMFA`, entry points taking the
/// account and the session's first factor). An authenticator app's enrolment is in
/// `AccountPage+TOTP.swift`.
extension AccountPage {
    static let enrolPurpose = "mfa-enrol"
    static let enrolVerifyPurpose = "mfa-enrol-verify"
    static let removePurpose = "mfa-remove"

    static func mfaFlow(_ ctx: Context) -> PhoneMFA { MFAAPI.flow(ctx) }

    /// The signed-in user of the request, or nil.
    static func identity(_ ctx: Context) throws -> SessionIdentity? {
        try ctx.sessions.authorize(cookie: ctx.sessionCookieValue, project: ctx.project.id, cache: ctx.app.sessionCache).identity
    }

    /// Which enrolment a page is for: `?enrol=1` (a phone, what nginx's step-up asks for) or
    /// `?enrol=totp`; each has its own words where a phone's would be wrong.
    enum FactorKind {
        case phone, totp
        var enrolQuery: String { self == .phone ? "1" : "totp" }
        var stringsPrefix: String { self == .phone ? "account.mfa." : "account.totp." }
    }

    /// `/__/auth/signin?continueUrl=<this page's enrolment, with its own continueUrl>`.
    static func signInAgainHref(_ ctx: Context, continueURL: String?, kind: FactorKind = .phone) -> String {
        var here = ctx.origin + "/__/auth/account?enrol=" + kind.enrolQuery
        if let c = continueURL { here += "&continueUrl=" + PercentEncoding.encode(c) }
        return "/__/auth/signin?continueUrl=" + PercentEncoding.encode(here)
    }

    /// The factor list for the account page.
    static func factorValues(_ ctx: Context, _ id: SessionIdentity, continueURL: String?,
                             response: inout Response) throws -> TemplateValue {
        let s = ctx.strings
        let csrf = try CSRF.token(ctx, purpose: removePurpose, response: &response)
        let factors: [TemplateValue] = id.account.mfaEnrollments.map { e in
            // An authenticator app has no number to show: its kind stands in its place (or in
            // the name's, when it has none), never anything of its secret.
            let app = s["account.totp.kind"] ?? ""
            var factor: [String: TemplateValue] = [
                "id": .string(e.enrollmentID), "phone": .string(e.obfuscatedPhone),
                "name": .string(e.displayName ?? (e.totp == nil ? (s["mfa.unnamed"] ?? "") : app)),
                "added": .string((s["account.mfa.added_on"] ?? "").replacing("{date}", with: display(e.enrolledAt / 1000))),
                "csrf": .string(csrf),
            ]
            if e.totp != nil, e.displayName != nil { factor["app"] = .string(app) }
            return .object(factor)
        }
        let back = continueURL.map { "&continueUrl=" + PercentEncoding.encode($0) } ?? ""
        var values: [String: TemplateValue] = [
            "factors": .list(factors), "none": .bool(factors.isEmpty),
            "addHref": .string("/__/auth/account?enrol=1" + back),
        ]
        if ctx.project.totp.enabled {
            values["addTOTPHref"] = .string("/__/auth/account?enrol=totp" + back)
            values["noneText"] = .string(s["account.totp.none"] ?? "")
        } else {
            values["noneText"] = .string(s["account.mfa.none"] ?? "")
        }
        if ctx.request.query("enrolled") == "1" { values["notice"] = .string(s["account.mfa.added"] ?? "") }
        if ctx.request.query("enrolled") == "totp" { values["notice"] = .string(s["account.totp.added"] ?? "") }
        if ctx.request.query("removed") == "1" { values["notice"] = .string(s["account.mfa.removed"] ?? "") }
        return .object(values)
    }

    /// Why this session may not enrol now (a localized sentence, in the words of the factor
    /// `kind`, and whether signing in again helps); nil when it may.
    static func enrolBlocker(_ ctx: Context, _ id: SessionIdentity, kind: FactorKind = .phone) -> (text: String, signInAgain: Bool)? {
        let s = ctx.strings
        let p = kind.stringsPrefix
        if let refusal = mfaFlow(ctx).enrolmentRefusal(id.account, firstFactor: id.provider) {
            return refusal.code == .unverifiedEmail ? (s[p + "needs_email"] ?? "", true) : (s[p + "needs_provider"] ?? "", true)
        }
        if (try? SensitiveChange.check(id.account, proof: SignInProof(id), now: ctx.now,
                                       recentSeconds: ctx.project.session.recentSignInSeconds)) == nil {
            return (s[p + "needs_recent"] ?? "", true)
        }
        return nil
    }

    /// The enrolment's first step: the number form, or why it cannot be used now.
    static func enrolPage(_ ctx: Context, _ id: SessionIdentity, continueURL: String?, number: String = "", name: String = "",
                          error: String? = nil, status: Int = 200) throws -> Response {
        var response = Response.html("", status: status)
        var values: [String: TemplateValue] = [
            "continueUrl": .string(continueURL ?? ""),
            "cancelHref": .string(continueURL == nil ? "/__/auth/account" : "/__/auth/account?continueUrl=" + PercentEncoding.encode(continueURL ?? "")),
            "needsAppToken": .bool(!ctx.project.devMode),
        ]
        if ctx.project.totp.enabled {
            // nginx's step-up sends a user without a factor here; an app is the other way.
            values["totpHref"] = .string("/__/auth/account?enrol=totp"
                + (continueURL.map { "&continueUrl=" + PercentEncoding.encode($0) } ?? ""))
        }
        if let blocker = enrolBlocker(ctx, id) {
            values["blocked"] = .string(blocker.text)
            if blocker.signInAgain { values["signInHref"] = .string(signInAgainHref(ctx, continueURL: continueURL)) }
        } else {
            values["numberStep"] = .object([
                "csrf": .string(try CSRF.token(ctx, purpose: enrolPurpose, response: &response)),
                "number": .string(number), "name": .string(name),
            ])
            if ctx.project.devMode {
                values["devNotice"] = .string((ctx.strings["phone.devNotice"] ?? "")
                    .replacing("{url}", with: "/emulator/v1/projects/\(ctx.project.id)/verificationCodes"))
            }
        }
        if let error { values["error"] = .string(error) }
        response.body = ctx.app.templates.renderBytes("pages/account_enrol", ctx: ctx, values: values)
        return response
    }

    /// The enrolment's second step: the code sent to the new number.
    static func enrolCodePage(_ ctx: Context, sessionInfo: String, name: String, continueURL: String?, error: AuthError? = nil,
                              status: Int = 200) throws -> Response {
        guard let st = try PhoneAPI.flow(ctx).status(sessionInfo: sessionInfo), try identity(ctx) != nil else {
            return .redirect(to: "/__/auth/account")
        }
        var response = Response.html("", status: status)
        var values: [String: TemplateValue] = [
            "continueUrl": .string(continueURL ?? ""),
            "cancelHref": .string("/__/auth/account"),
            "needsAppToken": .bool(!ctx.project.devMode),
            "codeStep": .object([
                "csrf": .string(try CSRF.token(ctx, purpose: enrolVerifyPurpose, response: &response)),
                "sessionInfo": .string(sessionInfo), "name": .string(name),
                "lead": TemplateValue(PhonePage.around(ctx.strings["phone.code.lead"], number: st.phoneNumber)),
            ]),
        ]
        if let error { values["error"] = .string(enrolMessage(error, ctx: ctx, status: st)) }
        response.body = ctx.app.templates.renderBytes("pages/account_enrol", ctx: ctx, values: values)
        return response
    }

    /// `POST /__/auth/account/mfa`: sends a code to the number to enrol.
    static func startEnrolment(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: enrolPurpose, token: f["csrf"])
        let back = ContinueURL.safe(f["continueUrl"], project: ctx.project)
        guard let id = try identity(ctx) else { return .redirect(to: "/__/auth/account?enrol=1") }
        let number = String((f["phoneNumber"] ?? "").prefix(64))
        let name = String((f["displayName"] ?? "").prefix(128))
        if enrolBlocker(ctx, id) != nil { return try enrolPage(ctx, id, continueURL: back, status: 403) }
        do {
            let r = try mfaFlow(ctx).startEnrolment(account: id.account, proof: SignInProof(id), PhoneMFA.CodeRequest(
                phoneNumber: f["phoneNumber"], appToken: f["appToken"], appID: PhonePage.appID, remoteAddress: ctx.request.remoteAddress,
                composeSMS: SMSText.composer(ctx)))
            if r.smsQueued { ctx.app.outboxNotifier() }
            return try enrolCodePage(ctx, sessionInfo: r.sessionInfo, name: name, continueURL: back)
        } catch let e as AuthError where PhonePage.handled(e) {
            return try enrolPage(ctx, id, continueURL: back, number: number, name: name, error: enrolMessage(e, ctx: ctx, status: nil),
                                 status: 400)
        }
    }

    /// `POST /__/auth/account/mfa/verify`: the code adds the phone; the session starts again with
    /// it as the second factor, and the browser goes on to `continueUrl` (step-up) or back here.
    static func finishEnrolment(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: enrolVerifyPurpose, token: f["csrf"])
        let back = ContinueURL.safe(f["continueUrl"], project: ctx.project)
        guard let id = try identity(ctx) else { return .redirect(to: "/__/auth/account?enrol=1") }
        let session = f["sessionInfo"] ?? ""
        let name = f["displayName"] ?? ""
        let code = f["code"].map { String($0.filter { !$0.isWhitespace && $0 != "-" }) }
        do {
            let done = try mfaFlow(ctx).finishEnrolment(account: id.account, proof: SignInProof(id), sessionInfo: session, code: code,
                                                        displayName: name, remoteAddress: ctx.request.remoteAddress, issueTokens: false)
            var response = Response.redirect(to: back ?? "/__/auth/account?enrolled=1&hl=" + PercentEncoding.encode(ctx.locale))
            try SessionCookie.set(for: done.account, provider: id.provider, authTime: id.authTime,
                                  secondFactor: SecondFactor(identifier: done.enrollment.enrollmentID), ctx: ctx, response: &response)
            ctx.app.sessionCache.evict(project: ctx.project.id, localID: done.account.localID)
            return response
        } catch let e as AuthError where PhonePage.handled(e) {
            return try enrolCodePage(ctx, sessionInfo: session, name: name, continueURL: back, error: e, status: 400)
        }
    }

    /// `POST /__/auth/account/mfa/remove`: withdraws `enrollmentId`. Every earlier session is
    /// revoked; this browser gets a new one (keeping the second factor it passed, unless that is
    /// the one removed).
    static func removeFactor(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: removePurpose, token: ctx.request.formField(CSRF.fieldName))
        guard let id = try identity(ctx) else { return .redirect(to: "/__/auth/account") }
        let enrollmentID = ctx.request.formField("enrollmentId")
        let kept = id.secondFactor.flatMap { $0.identifier == enrollmentID ? nil : $0 }
        do {
            let done = try mfaFlow(ctx).withdraw(account: id.account, proof: SignInProof(id), enrollmentID: enrollmentID,
                                                 remoteAddress: ctx.request.remoteAddress, issueTokens: false)
            ctx.app.sessionCache.evict(project: ctx.project.id, localID: done.account.localID)
            var response = Response.redirect(to: "/__/auth/account?removed=1&hl=" + PercentEncoding.encode(ctx.locale))
            try SessionCookie.set(for: done.account, provider: id.provider, authTime: id.authTime, secondFactor: kept,
                                  ctx: ctx, response: &response)
            return response
        } catch let e as AuthError where e.code == .mfaEnrollmentNotFound || e.code == .missingMFAEnrollmentID {
            return .redirect(to: "/__/auth/account")
        } catch let e as AuthError where e.code == .credentialTooOld {
            // Removing a factor needs a recent sign-in that passed one: sign in again, then back here.
            return .redirect(to: "/__/auth/signin?continueUrl=" + PercentEncoding.encode(ctx.origin + "/__/auth/account"))
        }
    }

    /// The words for an enrolment error: the second factor's own, else the phone page's.
    static func enrolMessage(_ e: AuthError, ctx: Context, status: PhoneSignIn.Status?) -> String {
        let s = ctx.strings
        switch e.code {
        case .secondFactorExists: return s["account.mfa.exists"] ?? ""
        case .secondFactorLimitExceeded: return s["account.mfa.limit"] ?? ""
        case .unverifiedEmail: return s["account.mfa.needs_email"] ?? ""
        case .unsupportedFirstFactor: return s["account.mfa.needs_provider"] ?? ""
        case .invalidArgument: return s["account.mfa.bad_name"] ?? ""
        default: return PhonePage.message(e, ctx: ctx, status: status)
        }
    }
}
