import AuthEngine
import HTTP
import JSONValue

/// Email-link wire endpoints (firebase-wire.md §2.3–§2.5, §2.7 `oobCode`, §2.16, §2.18).
enum EmailLinkAPI {
    /// `accounts:sendOobCode` (legacy `getOobConfirmationCode`), user and admin variants.
    static func sendOobCode(_ ctx: inout Context) throws -> Response {
        try ctx.selectTargetProject()
        try ctx.refuseTenant()
        var req = OobSendRequest(requestType: try requestType(ctx.body["requestType"]), email: ctx.string("email"),
                                 apiKey: ctx.linkAPIKey, origin: ctx.origin, lang: ctx.locale, remoteAddress: ctx.request.remoteAddress)
        req.idToken = ctx.string("idToken")
        req.returnOobLink = ctx.bool("returnOobLink")
        req.isAdmin = ctx.isAdmin
        req.settings = actionCodeSettings(ctx)
        req.appToken = ctx.nonEmpty("captchaResp") ?? ctx.nonEmpty("recaptchaToken")
        req.tokenApp = PhoneSignIn.tokenApp(PhoneAPI.appID(ctx), project: ctx.project)
        // Gatehouse's own field (docs/clients.md): a short code beside the link, bound to this
        // secret. Firebase's requests do not carry it, and the answer is the same either way.
        req.codeBinding = ctx.string(codeBindingField)
        let result = try ctx.emailLinks.send(req) { EmailMessages.compose($0, templates: ctx.app.templates) }
        if result.emailed { ctx.app.outboxNotifier() }
        return .json(.obj(("kind", "identitytoolkit#GetOobConfirmationCodeResponse"), ("email", result.email),
                          ("oobCode", req.returnOobLink ? result.oobCode : nil), ("oobLink", req.returnOobLink ? result.oobLink : nil)))
    }

    /// `accounts:signInWithEmailLink` (legacy `emailLinkSignin`), §2.4.
    static func signInWithEmailLink(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        let res = try ctx.emailLinks.signIn(email: ctx.string("email"), oobCode: ctx.string("oobCode"), idToken: ctx.string("idToken"),
                                            remoteAddress: ctx.request.remoteAddress)
        return emailSignInAnswer(ctx, res)
    }

    /// The request field naming the secret a short code is bound to (Gatehouse's own).
    static let codeBindingField = "emailCodeBinding"

    /// `accounts:signInWithEmailCode` (Gatehouse's own, docs/clients.md): the short code beside
    /// a link, with the secret its request named; answers as `signInWithEmailLink` does.
    static func signInWithEmailCode(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        guard let binding = ctx.nonEmpty(codeBindingField) else {
            throw AuthError(.invalidArgument, "\(codeBindingField) is required: the secret given with accounts:sendOobCode.")
        }
        let res = try ctx.emailLinks.signIn(email: ctx.string("email"), code: ctx.string("code"), binding: binding,
                                            idToken: ctx.string("idToken"), remoteAddress: ctx.request.remoteAddress)
        return emailSignInAnswer(ctx, res)
    }

    /// The answer of an email sign-in, by link or by code (§2.4).
    static func emailSignInAnswer(_ ctx: Context, _ res: EmailLinkSignInResult) -> Response {
        var pairs: [(String, (any JSONConvertible)?)] = [("kind", "identitytoolkit#EmailLinkSigninResponse")]
        SignInRecording.record(ctx, res.tokens, signIn: ctx.string("idToken").map(\.isEmpty) ?? true)
        pairs += res.tokens?.wirePairs ?? []
        if let challenge = res.challenge {
            // A second factor must follow: no tokens, the pending credential and the hints (§2.17).
            pairs += [("mfaPendingCredential", challenge.pendingCredential), ("mfaInfo", MFAAPI.hints(challenge.enrollments))]
        }
        pairs += [("email", res.account.email), ("localId", res.account.localID), ("isNewUser", res.isNewUser)]
        return .json(.obj(pairs))
    }

    /// `accounts:createAuthUri`, §2.5.
    static func createAuthUri(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        if ctx.string("providerId") != nil { throw AuthError(.notImplemented, "Sign-in with identity providers is not supported.") }
        let res = try ctx.emailLinks.createAuthUri(identifier: ctx.string("identifier"), continueUri: ctx.string("continueUri"),
                                                   sessionID: ctx.string("sessionId"), remoteAddress: ctx.request.remoteAddress)
        return .json(.obj(("kind", "identitytoolkit#CreateAuthUriResponse"), ("registered", res.registered),
                          ("allProviders", res.allProviders), ("sessionId", res.sessionID), ("signinMethods", res.signinMethods)))
    }

    /// `accounts:resetPassword` with only `oobCode`: inspection (§2.16). The address of an
    /// `EMAIL_SIGNIN` code is withheld. Gatehouse has no passwords to reset.
    static func resetPassword(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        guard let code = ctx.nonEmpty("oobCode") else { throw AuthError(.missingOobCode) }
        if ctx.nonEmpty("newPassword") != nil { throw AuthError(.passwordLoginDisabled) }
        let rec = try ctx.emailLinks.inspect(oobCode: code)
        return .json(.obj(("kind", "identitytoolkit#ResetPasswordResponse"), ("requestType", rec.requestType.rawValue),
                          ("email", rec.requestType == .emailSignIn ? nil : rec.email)))
    }

    /// `accounts:update {oobCode}` for a `VERIFY_EMAIL` code (§2.7): `emailVerified: true`.
    static func applyOobCode(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        let a = try ctx.emailLinks.applyVerifyEmail(oobCode: ctx.string("oobCode"), remoteAddress: ctx.request.remoteAddress)
        var pairs: [(String, (any JSONConvertible)?)] = [
            ("kind", "identitytoolkit#SetAccountInfoResponse"), ("localId", a.localID), ("email", a.email),
            ("emailVerified", a.emailVerified), ("displayName", a.displayName), ("photoUrl", a.photoURL),
            ("providerUserInfo", JSON.array(a.providers.map(UserInfoJSON.provider))),
        ]
        if a.passwordHash != nil { pairs.append(("passwordHash", ctx.isAdmin ? a.passwordHash : "UkVEQUNURUQ=")) }
        return .json(.obj(pairs))
    }

    /// `GET /emulator/v1/projects/{p}/oobCodes` (dev mode): the links the dev outbox holds.
    static func emulatorOobCodes(_ ctx: inout Context) throws -> Response {
        let messages = try ctx.store.messages(project: ctx.project.id, channel: .email, limit: 1000)
        let codes: [JSON] = messages.compactMap { m in
            guard let meta = try? JSONParser().parse(m.metadata), let code = meta["oobCode"]?.stringValue else { return nil }
            return .obj(("email", meta["email"]?.stringValue), ("oobCode", code), ("oobLink", meta["oobLink"]?.stringValue),
                        ("requestType", meta["requestType"]?.stringValue))
        }
        return .json(.obj(("oobCodes", JSON.array(codes))))
    }

    /// `/.well-known/apple-app-site-association`: every registered iOS app may open email links,
    /// and the apps of projects with passkeys may use this domain's passkeys (`webcredentials`).
    static func appleAppSiteAssociation(_ ctx: inout Context) throws -> Response {
        var ids: [String] = [], credentialApps: [String] = []
        for p in ctx.app.settings.projects {
            for app in p.iosApps {
                let id = app.teamID + "." + app.bundleID
                if !ids.contains(id) { ids.append(id) }
                if p.passkeys.enabled, !credentialApps.contains(id) { credentialApps.append(id) }
            }
        }
        let paths = ["/__/auth/links*", "/__/auth/action*"]
        let details: [JSON] = ids.map { id in
            .obj(("appID", id), ("appIDs", [id]), ("paths", paths), ("components", JSON.array(paths.map { JSON.obj(("/", $0)) })))
        }
        return .json(.obj(("applinks", JSON.obj(("apps", JSON.array([])), ("details", JSON.array(details)))),
                          ("webcredentials", credentialApps.isEmpty ? nil : JSON.obj(("apps", credentialApps)))),
                     headers: [("Cache-Control", "public, max-age=3600")])
    }

    /// `/.well-known/assetlinks.json`: Android App Links for every registered package with fingerprints.
    static func assetLinks(_ ctx: inout Context) throws -> Response {
        var seen = Set<String>()
        var statements: [JSON] = []
        for p in ctx.app.settings.projects {
            for app in p.androidApps where !app.sha256Fingerprints.isEmpty && seen.insert(app.packageName).inserted {
                // `get_login_creds`: the app may use this domain's passkeys (Credential Manager).
                let relations = p.passkeys.enabled
                    ? ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"]
                    : ["delegate_permission/common.handle_all_urls"]
                statements.append(.obj(("relation", relations),
                                       ("target", JSON.obj(("namespace", "android_app"), ("package_name", app.packageName),
                                                           ("sha256_cert_fingerprints", app.sha256Fingerprints)))))
            }
        }
        return .json(.array(statements), headers: [("Cache-Control", "public, max-age=3600")])
    }

    // MARK: - Request decoding

    /// `requestType` as its name or its integer index (firebase-wire.md §1.3 rule 3).
    static func requestType(_ v: JSON?) throws -> OobRequestType? {
        switch v {
        case nil, .null?: return nil
        case let .string(s)?:
            if let t = OobRequestType(rawValue: s) { return t }
            if let n = Int(s), let t = OobRequestType(index: n) { return t }
        case let .number(n)?:
            if n.rounded() == n, n >= 0, n < 100, let t = OobRequestType(index: Int(n)) { return t }
        default: break
        }
        throw AuthError(.invalidArgument, "Invalid value at 'request_type', \(v?.serialized() ?? "")")
    }

    static func actionCodeSettings(_ ctx: Context) -> ActionCodeSettings {
        var s = ActionCodeSettings()
        s.continueURL = ctx.string("continueUrl")
        s.canHandleCodeInApp = ctx.bool("canHandleCodeInApp")
        s.iosBundleID = ctx.nonEmpty("iOSBundleId") ?? ctx.nonEmpty("iosBundleId")
        s.iosAppStoreID = ctx.nonEmpty("iOSAppStoreId") ?? ctx.nonEmpty("iosAppStoreId")
        s.androidPackageName = ctx.nonEmpty("androidPackageName")
        s.androidInstallApp = ctx.bool("androidInstallApp")
        s.androidMinimumVersion = ctx.nonEmpty("androidMinimumVersion")
        s.linkDomain = ctx.nonEmpty("linkDomain")
        s.dynamicLinkDomain = ctx.nonEmpty("dynamicLinkDomain")
        return s
    }
}

extension Context {
    var emailLinks: EmailLinks {
        var f = EmailLinks(store: store, clock: app.clock, random: app.random, tokens: app.tokens, project: project)
        f.device = SignInRecording.device(self)
        return f
    }

    /// The API key written into links: the caller's, else the project's first (admin calls).
    var linkAPIKey: String { apiKey ?? project.apiKeys.first ?? "fake-api-key" }

    /// A body `targetProjectId` is for admins only (firebase-wire.md §1.2).
    mutating func selectTargetProject() throws {
        guard let target = nonEmpty("targetProjectId") else { return }
        guard isAdmin else { throw AuthError(.insufficientPermission, "Only authenticated requests can specify target_project_id.") }
        guard let p = app.settings.project(id: target) else { throw AuthError(.projectNotFound) }
        project = p
    }

    /// Gatehouse serves no tenants (firebase-wire.md §1.7).
    func refuseTenant() throws {
        if nonEmpty("tenantId") != nil { throw AuthError(.unsupportedTenantOperation) }
    }
}
