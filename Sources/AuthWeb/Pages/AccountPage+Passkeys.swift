import AuthEngine
import HTTP
import JSONValue
import TextCoding

/// The account page's passkeys (when the project enables them): the list (name, created, last
/// used) with a rename and a remove form each, and "Add a passkey" — `passkey.js` posts
/// `POST /__/auth/account/passkey` (CSRF; a recent sign-in, as every change of how one signs in)
/// for the creation options (JSON), calls `navigator.credentials.create`, and posts the
/// attestation as a form to `POST /__/auth/account/passkey/verify`, which stores the passkey and
/// comes back here. `POST /__/auth/account/passkey/remove` removes one: the engine ends every
/// passkey sign-in of the user (this browser's among them, perhaps), so this browser gets a new
/// session, as after a second factor's removal. `POST /__/auth/account/passkey/rename` names one.
///
/// After a sign-in by phone or email link, a user with no passkey is offered one at the top of
/// the page ("Add" or "Not now"); "Not now" is remembered in `__Host-gatehouse-passkey-offer`
/// (HttpOnly, Secure, SameSite=Lax, 180 days) through `POST /__/auth/account/passkey/offer`.
extension AccountPage {
    static let passkeyEnrolPurpose = "passkey-enrol"
    static let passkeyVerifyPurpose = "passkey-enrol-verify"
    static let passkeyRenamePurpose = "passkey-rename"
    static let passkeyRemovePurpose = "passkey-remove"
    static let passkeyOfferPurpose = "passkey-offer"
    static let passkeyOfferCookie = "__Host-gatehouse-passkey-offer"
    static let passkeyOfferDismissed = "dismissed"
    static let passkeyOfferSeconds = 180 * 24 * 3600

    static func passkeyFlow(_ ctx: Context) -> Passkeys { PasskeysAPI.flow(ctx) }

    /// What `?passkey=` says after a change, in the page's words.
    static func passkeyNotice(_ ctx: Context) -> String? {
        let s = ctx.strings
        switch ctx.request.query("passkey") {
        case "added": return s["passkey.account.added"]
        case "renamed": return s["passkey.account.renamed"]
        case "removed": return s["passkey.account.removed"]
        default: return nil
        }
    }

    /// `/__/auth/signin?continueUrl=<this page>`: where a sign-in too old for a change goes.
    static func passkeySignInAgainHref(_ ctx: Context) -> String {
        "/__/auth/signin?continueUrl=" + PercentEncoding.encode(ctx.origin + "/__/auth/account#passkeys")
    }

    /// The passkeys section of the account page, and the offer above it when it is due:
    /// (`passkeys`, `passkeyOffer`).
    static func passkeyValues(_ ctx: Context, _ id: SessionIdentity, error: String?,
                              response: inout Response) throws -> (section: TemplateValue, offer: TemplateValue?) {
        let s = ctx.strings
        let passkeys = try passkeyFlow(ctx).list(localID: id.account.localID)
        let renameCSRF = try CSRF.token(ctx, purpose: passkeyRenamePurpose, response: &response)
        let removeCSRF = try CSRF.token(ctx, purpose: passkeyRemovePurpose, response: &response)
        let items: [TemplateValue] = passkeys.enumerated().map { i, p in
            let label = p.name ?? (s["passkey.account.unnamed"] ?? "")
            return .object([
                "credentialId": .string(p.credentialID), "index": .string(String(i)),
                "label": .string(label), "passkeyName": .string(p.name ?? ""),
                "created": .string((s["passkey.account.created_on"] ?? "").replacing("{date}", with: display(p.createdAt / 1000))),
                "lastUsed": .string(p.lastUsedAt.map { (s["passkey.account.used_on"] ?? "").replacing("{date}", with: display($0 / 1000)) }
                    ?? (s["passkey.account.never_used"] ?? "")),
                "renameCsrf": .string(renameCSRF), "removeCsrf": .string(removeCSRF),
            ])
        }
        var section: [String: TemplateValue] = [
            "passkeyItems": .list(items), "passkeyNone": .bool(items.isEmpty),
            "verifyCsrf": .string(try CSRF.token(ctx, purpose: passkeyVerifyPurpose, response: &response)),
        ]
        if let notice = passkeyNotice(ctx) { section["passkeyNotice"] = .string(notice) }
        if let error { section["passkeyError"] = .string(error) }
        // Adding one needs a recent sign-in (and the second factor of a user with one): say so
        // up front rather than after the authenticator has made a credential.
        var blocker: AuthError? = nil
        do {
            try SensitiveChange.check(id.account, proof: SignInProof(id), now: ctx.now, recentSeconds: ctx.project.session.recentSignInSeconds)
        } catch let e as AuthError { blocker = e }
        let recent = blocker == nil
        let addCSRF = try CSRF.token(ctx, purpose: passkeyEnrolPurpose, response: &response)
        if let blocker {
            // A user with a second factor whose sign-in did not pass it (a passkey sign-in, when
            // the project lets a passkey skip it) must sign in with it, not just again.
            let key = blocker.detail == SensitiveChange.secondFactorDetail ? "needs_second_factor" : "needs_recent"
            section["passkeyBlocked"] = .string(s["passkey.account." + key] ?? "")
            section["passkeySignInHref"] = .string(passkeySignInAgainHref(ctx))
        } else {
            section["passkeyAdd"] = .object(["addCsrf": .string(addCSRF)])
        }
        // The offer: right after a sign-in by phone or email link, to a user with no passkey
        // who has not said "Not now" in this browser.
        var offer: TemplateValue? = nil
        if recent, passkeys.isEmpty, id.provider == "phone" || id.provider == "password", passkeyNotice(ctx) == nil, error == nil,
           ctx.request.cookies[passkeyOfferCookie] != passkeyOfferDismissed {
            offer = .object([
                "offerAddCsrf": .string(addCSRF),
                "offerCsrf": .string(try CSRF.token(ctx, purpose: passkeyOfferPurpose, response: &response)),
            ])
        }
        return (.object(section), offer)
    }

    /// `POST /__/auth/account/passkey` (CSRF): the creation options for a new passkey, as JSON for
    /// the script (`{publicKey}`), or `{redirect}` to sign in again, or `{error}`.
    static func startPasskeyEnrolment(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: passkeyEnrolPurpose, token: ctx.request.formField(CSRF.fieldName))
        guard let id = try identity(ctx) else {
            return .json(.obj(("redirect", "/__/auth/account")), status: 401, headers: [("Cache-Control", "no-store")])
        }
        do {
            let o = try passkeyFlow(ctx).startEnrolment(account: id.account, proof: SignInProof(id), remoteAddress: ctx.request.remoteAddress)
            return .json(.obj(("publicKey", PasskeysAPI.creationOptions(o))), headers: [("Cache-Control", "no-store")])
        } catch let e as AuthError where e.code == .credentialTooOld {
            return .json(.obj(("redirect", passkeySignInAgainHref(ctx))), status: 401, headers: [("Cache-Control", "no-store")])
        } catch let e as AuthError where PhonePage.handled(e) {
            return PasskeyPage.jsonError(ctx, e)
        }
    }

    /// `POST /__/auth/account/passkey/verify`: the attestation (`id`, `rawId`, `type`,
    /// `clientDataJSON`, `attestationObject`, optional `name`) adds the passkey.
    static func finishPasskeyEnrolment(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: passkeyVerifyPurpose, token: f["csrf"])
        guard let id = try identity(ctx) else { return .redirect(to: "/__/auth/account") }
        let registration = Passkeys.RegistrationResponse(id: f["id"], rawID: f["rawId"], type: f["type"], clientDataJSON: f["clientDataJSON"],
                                                         attestationObject: f["attestationObject"])
        do {
            let done = try passkeyFlow(ctx).finishEnrolment(account: id.account, proof: SignInProof(id), response: registration,
                                                            name: trimmedName(f["name"]), remoteAddress: ctx.request.remoteAddress,
                                                            issueTokens: false)
            ctx.app.sessionCache.evict(project: ctx.project.id, localID: done.account.localID)
            return .redirect(to: "/__/auth/account?passkey=added&hl=" + PercentEncoding.encode(ctx.locale) + "#passkeys")
        } catch let e as AuthError where e.code == .credentialTooOld {
            return .redirect(to: passkeySignInAgainHref(ctx))
        } catch let e as AuthError where PhonePage.handled(e) {
            return try page(ctx, passkeyError: PasskeyPage.message(e, ctx: ctx), status: e.code == .tooManyAttempts ? 429 : 400)
        }
    }

    /// `POST /__/auth/account/passkey/rename`: `credentialId` takes `name` (none: unnamed).
    static func renamePasskey(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: passkeyRenamePurpose, token: f["csrf"])
        guard let id = try identity(ctx), let credentialID = f["credentialId"] else { return .redirect(to: "/__/auth/account") }
        do {
            try passkeyFlow(ctx).rename(account: id.account, credentialID: credentialID, name: trimmedName(f["name"]), remoteAddress: ctx.request.remoteAddress)
            return .redirect(to: "/__/auth/account?passkey=renamed&hl=" + PercentEncoding.encode(ctx.locale) + "#passkeys")
        } catch let e as AuthError where e.code == .passkeyEnrollmentNotFound {
            return .redirect(to: "/__/auth/account#passkeys")
        } catch let e as AuthError where PhonePage.handled(e) {
            return try page(ctx, passkeyError: PasskeyPage.message(e, ctx: ctx), status: 400)
        }
    }

    /// `POST /__/auth/account/passkey/remove`: removes `credentialId`. The engine ends the
    /// user's passkey sign-ins; this browser gets a new session for the sign-in it had.
    static func removePasskey(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: passkeyRemovePurpose, token: f["csrf"])
        guard let id = try identity(ctx), let credentialID = f["credentialId"] else { return .redirect(to: "/__/auth/account") }
        do {
            let account = try passkeyFlow(ctx).remove(account: id.account, proof: SignInProof(id), credentialIDs: [credentialID],
                                                      remoteAddress: ctx.request.remoteAddress)
            ctx.app.sessionCache.evict(project: ctx.project.id, localID: account.localID)
            var response = Response.redirect(to: "/__/auth/account?passkey=removed&hl=" + PercentEncoding.encode(ctx.locale) + "#passkeys")
            try SessionCookie.set(for: account, provider: id.provider, authTime: id.authTime, secondFactor: id.secondFactor,
                                  ctx: ctx, response: &response)
            return response
        } catch let e as AuthError where e.code == .passkeyEnrollmentNotFound {
            return .redirect(to: "/__/auth/account#passkeys")
        } catch let e as AuthError where e.code == .credentialTooOld {
            // Removing a passkey needs a recent sign-in: sign in again, then back here.
            return .redirect(to: passkeySignInAgainHref(ctx))
        }
    }

    /// A passkey's name as typed, without surrounding white space; nil when nothing is left.
    static func trimmedName(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let start = raw.drop(while: \.isWhitespace)
        let end = start.lastIndex(where: { !$0.isWhitespace }).map { start.index(after: $0) } ?? start.startIndex
        let name = String(start[..<end])
        return name.isEmpty ? nil : name
    }

    /// `POST /__/auth/account/passkey/offer`: "Not now" — the offer is not shown in this browser again.
    static func dismissPasskeyOffer(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: passkeyOfferPurpose, token: ctx.request.formField(CSRF.fieldName))
        var response = Response.redirect(to: "/__/auth/account?hl=" + PercentEncoding.encode(ctx.locale))
        response.addCookie(Cookie(name: passkeyOfferCookie, value: passkeyOfferDismissed, path: "/", maxAge: passkeyOfferSeconds,
                                  secure: true, httpOnly: true, sameSite: .lax))
        return response
    }
}
