import AuthEngine
import HTTP
import TextCoding

/// The account page's enrolment of an authenticator app (TOTP, when the project's `mfa_totp` is
/// on): `GET /__/auth/account?enrol=totp[&continueUrl=…]` starts one (a fresh secret each time)
/// and shows it three ways — a QR code drawn on the server (`QRCode`), the key in groups of four,
/// and the `otpauth://` URI — with a name and a code field; `POST /__/auth/account/totp/verify`
/// (CSRF-checked) enrols it with the first right code, and the session starts again with it as
/// its second factor, as after a phone's enrolment.
///
/// The engine's `sessionInfo` travels in a hidden field, not in a `__Host-` cookie: it is sealed
/// under the deployment's TOTP key and bound to the user, so the browser can neither read the
/// secret from it nor give it to another account, and it belongs to this one form (a cookie
/// would outlive the form, and two tabs would overwrite each other's). The page that holds the
/// secret is `Cache-Control: no-store`; once enrolled, the secret is shown nowhere again, and a
/// wrong code's answer does not show it either (the app already has it; a new QR code starts
/// over with a new secret).
extension AccountPage {
    static let totpVerifyPurpose = "totp-enrol-verify"

    static func totpFlow(_ ctx: Context) -> TOTPMFA { MFAAPI.totp(ctx) }

    /// The key as an app's manual entry shows it: groups of four, for reading and typing.
    static func grouped(_ key: String) -> String {
        var out = ""
        for (i, c) in key.enumerated() {
            if i > 0 && i % 4 == 0 { out.append(" ") }
            out.append(c)
        }
        return out
    }

    /// The enrolment's page: the new secret and the form, or why there is none (a blocker, or
    /// the engine's refusal), or — after a wrong code — the form alone.
    static func totpEnrolPage(_ ctx: Context, _ id: SessionIdentity, continueURL: String?, name: String = "",
                              retry sessionInfo: String? = nil, error: String? = nil, status: Int = 200) throws -> Response {
        var response = Response.html("", status: status)
        // The secret is on this page: no cache keeps it (applyPageHeaders says the same for every
        // page; this page does not rely on that).
        response.setHeader("Cache-Control", "no-store")
        let s = ctx.strings
        let back = continueURL.map { "&continueUrl=" + PercentEncoding.encode($0) } ?? ""
        var values: [String: TemplateValue] = [
            "continueUrl": .string(continueURL ?? ""),
            "cancelHref": .string(continueURL == nil ? "/__/auth/account" : "/__/auth/account?continueUrl=" + PercentEncoding.encode(continueURL ?? "")),
            "restartHref": .string("/__/auth/account?enrol=totp" + back),
        ]
        if let error { values["error"] = .string(error) }
        if let blocker = enrolBlocker(ctx, id, kind: .totp) {
            values["blocked"] = .string(blocker.text)
            if blocker.signInAgain { values["signInHref"] = .string(signInAgainHref(ctx, continueURL: continueURL, kind: .totp)) }
        } else if let sessionInfo {
            values["form"] = .object([
                "csrf": .string(try CSRF.token(ctx, purpose: totpVerifyPurpose, response: &response)),
                "sessionInfo": .string(sessionInfo), "name": .string(name),
            ])
            values["retry"] = true
        } else {
            let start: TOTPMFA.EnrolmentStart
            do {
                start = try totpFlow(ctx).startEnrolment(account: id.account, proof: SignInProof(id))
            } catch let e as AuthError where PhonePage.handled(e) {
                values["error"] = .string(totpMessage(e, ctx: ctx))
                response.status = e.code == .secondFactorLimitExceeded ? 409 : 400
                response.body = ctx.app.templates.renderBytes("pages/account_totp", ctx: ctx, values: values)
                return response
            }
            if let svg = QRCode.svg(start.uri, label: s["account.totp.qr_label"] ?? "QR code") {
                values["qr"] = .html([ArraySlice(svg.utf8)])
            } else {
                // libqrencode missing on this host: the key and the URI still enrol the app, and
                // the operator is told why the page has no QR code.
                values["qrMissing"] = true
                ctx.app.log.warning("account page: no QR code: \(QRCode.loadError)", requestID: ctx.request.logID)
            }
            values["secret"] = .string(grouped(start.sharedSecretKey))
            values["uri"] = .string(start.uri)
            values["form"] = .object([
                "csrf": .string(try CSRF.token(ctx, purpose: totpVerifyPurpose, response: &response)),
                "sessionInfo": .string(start.sessionInfo), "name": .string(name),
            ])
        }
        response.body = ctx.app.templates.renderBytes("pages/account_totp", ctx: ctx, values: values)
        return response
    }

    /// `POST /__/auth/account/totp/verify`: the first right code enrols the app; the session starts
    /// again with it as the second factor, and the browser goes on to `continueUrl` (step-up) or
    /// back to the account page.
    static func finishTOTPEnrolment(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: totpVerifyPurpose, token: f["csrf"])
        let back = ContinueURL.safe(f["continueUrl"], project: ctx.project)
        guard let id = try identity(ctx) else { return .redirect(to: "/__/auth/account?enrol=totp") }
        guard ctx.project.totp.enabled else { return .redirect(to: "/__/auth/account") }
        let session = f["sessionInfo"] ?? ""
        let name = String((f["displayName"] ?? "").prefix(128))
        let code = f["code"].map { String($0.filter { !$0.isWhitespace && $0 != "-" }) }
        do {
            let done = try totpFlow(ctx).finishEnrolment(account: id.account, proof: SignInProof(id), sessionInfo: session, code: code,
                                                         displayName: name, remoteAddress: ctx.request.remoteAddress, issueTokens: false)
            var response = Response.redirect(to: back ?? "/__/auth/account?enrolled=totp&hl=" + PercentEncoding.encode(ctx.locale))
            try SessionCookie.set(for: done.account, provider: id.provider, authTime: id.authTime,
                                  secondFactor: SecondFactor(factor: "totp", identifier: done.enrollment.enrollmentID),
                                  ctx: ctx, response: &response)
            ctx.app.sessionCache.evict(project: ctx.project.id, localID: done.account.localID)
            return response
        } catch let e as AuthError where PhonePage.handled(e) {
            // A session that may no longer enrol gets the blocker, not a code error.
            if enrolBlocker(ctx, id, kind: .totp) != nil { return try totpEnrolPage(ctx, id, continueURL: back, status: 403) }
            // An enrolment that cannot be finished any more starts over (a new secret), in words.
            let over: Set<AuthError.Code> = [.sessionExpired, .invalidSessionInfo, .missingSessionInfo]
            return try totpEnrolPage(ctx, id, continueURL: back, name: name, retry: over.contains(e.code) ? nil : session,
                                     error: totpMessage(e, ctx: ctx), status: 400)
        }
    }

    /// The words for an authenticator enrolment's error.
    static func totpMessage(_ e: AuthError, ctx: Context) -> String {
        let s = ctx.strings
        switch e.code {
        case .invalidCode: return s["account.totp.wrong_code"] ?? ""
        case .missingCode: return s["account.totp.retry_lead"] ?? ""
        case .sessionExpired, .invalidSessionInfo, .missingSessionInfo: return s["account.totp.expired"] ?? ""
        case .secondFactorLimitExceeded: return s["account.totp.limit"] ?? ""
        case .unverifiedEmail: return s["account.totp.needs_email"] ?? ""
        case .unsupportedFirstFactor: return s["account.totp.needs_provider"] ?? ""
        case .credentialTooOld: return s["account.totp.needs_recent"] ?? ""
        case .invalidArgument: return s["account.mfa.bad_name"] ?? ""
        case .operationNotAllowed: return s["account.totp.unavailable"] ?? ""
        default: return PhonePage.message(e, ctx: ctx, status: nil)
        }
    }
}
