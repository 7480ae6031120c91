import AuthEngine
import HTTP
import TextCoding

/// The second-factor page with an authenticator app: choosing one (or having only one) shows a
/// code field, nothing is sent; `POST /__/auth/mfa/totp` (CSRF-checked) finishes the pending
/// sign-in of the `__Host-gh_mfa` cookie with the app's code, exactly as a phone's code finishes
/// it: the session starts with the factor (`sign_in_second_factor` `totp`), the cookie is cleared
/// and the browser goes on to the continue URL. Wrong codes spend the pending credential's
/// attempts; when they are spent the credential is gone and the page says the sign-in expired.
extension MFAPage {
    static let totpPurpose = "mfa-totp"

    static func totpFlow(_ ctx: Context) -> TOTPMFA { MFAAPI.totp(ctx) }

    /// The code form for the app `enrollment` (its name in the lead, if it has one; a way back to
    /// the list when there are `several` factors).
    static func totpCodePage(_ ctx: Context, enrollment: MFAEnrollment, several: Bool, error: String? = nil,
                             status: Int = 200) throws -> Response {
        var response = Response.html("", status: status)
        let s = ctx.strings
        var values: [String: TemplateValue] = [
            "csrf": .string(try CSRF.token(ctx, purpose: totpPurpose, response: &response)),
            "enrollmentId": .string(enrollment.enrollmentID),
            "several": .bool(several),
        ]
        if let name = enrollment.displayName, !name.isEmpty {
            values["lead"] = .string((s["mfa.totp.lead_named"] ?? "").replacing("{name}", with: name))
        } else {
            values["lead"] = .string(s["mfa.totp.lead"] ?? "")
        }
        if let error { values["error"] = .string(error) }
        response.body = ctx.app.templates.renderBytes("pages/mfa_totp", ctx: ctx, values: values)
        return response
    }

    /// `POST /__/auth/mfa/totp`: the app's code finishes the pending sign-in.
    static func verifyTOTP(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: totpPurpose, token: f["csrf"])
        guard let p = pending(ctx) else { return try expiredPage(ctx, continueURL: nil) }
        let enrollmentID = f["enrollmentId"]
        let code = f["code"].map { String($0.filter { !$0.isWhitespace && $0 != "-" }) }
        do {
            let done = try totpFlow(ctx).finishSignIn(pendingCredential: p.credential, enrollmentID: enrollmentID, code: code,
                                                      remoteAddress: ctx.request.remoteAddress, issueTokens: false)
            var response = Response.redirect(to: p.continueURL ?? "/__/auth/account")
            try SessionCookie.set(for: done.account, provider: done.firstFactor,
                                  secondFactor: SecondFactor(factor: "totp", identifier: done.enrollment.enrollmentID),
                                  ctx: ctx, response: &response)
            ctx.app.sessionCache.evict(project: ctx.project.id, localID: done.account.localID)
            response.addCookie(clearedCookie())
            return response
        } catch let e as AuthError where isExpiry(e) {
            return try expiredPage(ctx, continueURL: p.continueURL)
        } catch let e as AuthError where PhonePage.handled(e) {
            let enrollments: [MFAEnrollment]
            do { enrollments = try flow(ctx).pendingEnrollments(p.credential) } catch let gone as AuthError where isExpiry(gone) {
                return try expiredPage(ctx, continueURL: p.continueURL)
            }
            guard let app = enrollments.first(where: { $0.enrollmentID == enrollmentID && $0.totp != nil }) else {
                // The factor was removed meanwhile (or never was one): back to the list, in words.
                return try choosePage(ctx, p, enrollments: enrollments, error: message(AuthError(.mfaEnrollmentNotFound), ctx: ctx, status: nil),
                                      status: 400)
            }
            return try totpCodePage(ctx, enrollment: app, several: enrollments.count > 1, error: totpMessage(e, ctx: ctx), status: 400)
        }
    }

    /// The words for an app code's error; the rest as the phone path words them.
    static func totpMessage(_ e: AuthError, ctx: Context) -> String {
        let s = ctx.strings
        switch e.code {
        case .invalidCode: return s["mfa.totp.wrong_code"] ?? ""
        case .missingCode: return s["mfa.totp.lead"] ?? ""
        case .operationNotAllowed: return s["mfa.totp.unavailable"] ?? ""
        default: return message(e, ctx: ctx, status: nil)
        }
    }
}
