import AuthCrypto
import AuthEngine
import HTTP
import JSONValue

/// The hosted passkey sign-in (WebAuthn; the engine's `Passkeys`): `GET /__/auth/passkey
/// [?continueUrl=…]` shows a button; `passkey.js` asks `POST /__/auth/passkey/options` (CSRF) for
/// a fresh challenge (`{publicKey}`: the request options, binary values in standard base64),
/// calls `navigator.credentials.get`, and posts the assertion as an ordinary form (base64url
/// fields) to `POST /__/auth/passkey`, which checks it, starts the session (provider `passkey`)
/// and redirects to the continue URL, or renders the page again with the reason. A user whose
/// project asks for the second factor after a passkey goes on to `/__/auth/mfa` as after an
/// email link (`MFAPage.begin`). The email page offers the same form to the browser's autofill
/// (conditional mediation): `EmailPages.form` renders it with `conditional`.
enum PasskeyPage {
    static let optionsPurpose = "passkey-options"
    static let signInPurpose = "passkey-signin"

    /// `GET /__/auth/passkey[?continueUrl=…]`
    static func show(_ ctx: inout Context) throws -> Response {
        try page(ctx, continueURL: ContinueURL.safe(ctx.request.query("continueUrl"), project: ctx.project))
    }

    /// `POST /__/auth/passkey/options` (CSRF): a new sign-in challenge, as JSON for the script.
    /// A refusal is `{error}` with the page's words for it.
    static func options(_ ctx: inout Context) throws -> Response {
        try CSRF.verify(ctx, purpose: optionsPurpose, token: ctx.request.formField(CSRF.fieldName))
        do {
            let o = try PasskeysAPI.flow(ctx).startSignIn(remoteAddress: ctx.request.remoteAddress)
            return .json(.obj(("publicKey", PasskeysAPI.requestOptions(o))), headers: [("Cache-Control", "no-store")])
        } catch let e as AuthError where PhonePage.handled(e) {
            return jsonError(ctx, e)
        }
    }

    /// `POST /__/auth/passkey`: the assertion (`id`, `rawId`, `type`, `clientDataJSON`,
    /// `authenticatorData`, `signature`, `userHandle`) signs its user in.
    static func signIn(_ ctx: inout Context) throws -> Response {
        let f = PhonePage.fields(ctx)
        try CSRF.verify(ctx, purpose: signInPurpose, token: f["csrf"])
        let back = ContinueURL.safe(f["continueUrl"], project: ctx.project)
        let assertion = Passkeys.AssertionResponse(id: f["id"], rawID: f["rawId"], type: f["type"], clientDataJSON: f["clientDataJSON"],
                                                   authenticatorData: f["authenticatorData"], signature: f["signature"],
                                                   userHandle: f["userHandle"])
        do {
            switch try PasskeysAPI.flow(ctx).finishSignIn(response: assertion, remoteAddress: ctx.request.remoteAddress, issueTokens: false) {
            case let .done(account, _, _):
                var response = Response.redirect(to: back ?? "/__/auth/account")
                try SessionCookie.set(for: account, provider: Passkeys.provider, ctx: ctx, response: &response)
                ctx.app.sessionCache.evict(project: ctx.project.id, localID: account.localID)
                return response
            case let .secondFactor(_, challenge):
                // A project that asks for the second factor after a passkey: no session yet.
                return MFAPage.begin(ctx, challenge: challenge, continueURL: back)
            }
        } catch let e as AuthError where PhonePage.handled(e) {
            // An unknown credential is named back to the browser, which may tell its
            // authenticator to stop offering it (`PublicKeyCredential.signalUnknownCredential`).
            let unknown = e.code == .passkeyCredentialNotFound
                ? f["id"].flatMap { $0.utf8.count <= 2048 ? Base64URL.decode($0) : nil }.map { Base64URL.encode($0) } : nil
            return try page(ctx, continueURL: back, error: message(e, ctx: ctx), unknownCredential: unknown,
                            status: e.code == .tooManyAttempts ? 429 : e.code == .userDisabled ? 403 : 400)
        }
    }

    // MARK: Rendering

    /// The sign-in page: the button and the assertion's form, or why passkeys cannot be used here.
    static func page(_ ctx: Context, continueURL: String?, error: String? = nil, unknownCredential: String? = nil,
                     status: Int = 200) throws -> Response {
        var response = Response.html("", status: status)
        var values: [String: TemplateValue] = [
            "otherHref": .string("/__/auth/signin" + PhonePage.continueQuery(continueURL)),
        ]
        if ctx.project.passkeys.enabled {
            var form = try formValues(ctx, continueURL: continueURL, conditional: false, response: &response)
            if let unknownCredential {
                form["unknownCredential"] = .string(unknownCredential)
                form["rpId"] = .string(ctx.project.passkeyRelyingPartyID)
            }
            values["passkeyForm"] = .object(form)
        } else {
            values["unavailable"] = true
            response.status = 403
        }
        if let error { values["error"] = .string(error) }
        if ctx.project.passkeys.enabled, let id = try AccountPage.identity(ctx),
           try PasskeysAPI.flow(ctx).list(localID: id.account.localID).isEmpty {
            // Signed in another way (nginx asks this location for a passkey) with none to use yet:
            // the way to make one, rather than a loop through the other sign-ins.
            values["noPasskeyHref"] = .string("/__/auth/account#passkeys")
        }
        response.body = ctx.app.templates.renderBytes("pages/passkey", ctx: ctx, values: values)
        return response
    }

    /// What `pages/passkey_form` needs: both CSRF tokens (options and sign-in), the continue
    /// URL, and whether the script starts the browser's autofill request (`conditional`).
    static func formValues(_ ctx: Context, continueURL: String?, conditional: Bool,
                           response: inout Response) throws -> [String: TemplateValue] {
        [
            "optionsCsrf": .string(try CSRF.token(ctx, purpose: optionsPurpose, response: &response)),
            "signInCsrf": .string(try CSRF.token(ctx, purpose: signInPurpose, response: &response)),
            "passkeyContinueUrl": .string(continueURL ?? ""),
            "conditional": .bool(conditional),
        ]
    }

    /// A refusal for the script: `{error: <localized sentence>}`.
    static func jsonError(_ ctx: Context, _ e: AuthError) -> Response {
        let status = switch e.code {
        case .tooManyAttempts: 429
        case .passkeyNotEnabled, .userDisabled: 403
        default: 400
        }
        return .json(.obj(("error", message(e, ctx: ctx))), status: status, headers: [("Cache-Control", "no-store")])
    }

    /// The passkey pages' words for an engine error.
    static func message(_ e: AuthError, ctx: Context) -> String {
        let key = switch e.code {
        case .passkeyCredentialNotFound: "unknown"
        case .invalidAuthenticatorResponse, .invalidCredentialID, .missingAuthenticatorResponse: "refused"
        case .passkeyChallengeTimeout: "timeout"
        case .tooManyAttempts: "tooMany"
        case .userDisabled: "disabled"
        case .passkeyNotEnabled: "unavailable"
        case .passkeyExists: "exists"
        case .credentialAlreadyInUse: "inUse"
        case .passkeyLimitExceeded: "limit"
        case .invalidArgument: "badName"
        case .passkeyEnrollmentNotFound: "gone"
        default: "generic"
        }
        let s = ctx.strings
        return s["passkey.errors." + key] ?? s["passkey.errors.generic"] ?? ""
    }
}
