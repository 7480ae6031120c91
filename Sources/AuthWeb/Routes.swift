import AuthEngine
import HTTP
import JSONValue

/// One route: its guards, whether it renders pages or wire JSON, and its handler; its pattern
/// names it in metrics, and a route that starts or completes a flow says which.
struct Route: Sendable {
    enum Kind { case api, page }
    let kind: Kind
    let guards: Guards
    let handler: @Sendable (inout Context) throws -> Response
    var name = ""
    var flow: FlowStep?
}

/// The flow (`phone`, `email_link`, `mfa`, `app_verification`, `push`) and step a route is.
struct FlowStep: Sendable {
    let flow: String
    let step: String
    init(_ flow: String, _ step: String) { self.flow = flow; self.step = step }
}

/// THE route table: every path Gatehouse answers, with its guards, on one screen.
/// Legacy v3 names (`relyingparty/…`) map to the same handlers as their v1 names.
enum RouteTable {
    static let itk = "/identitytoolkit.googleapis.com/v1"
    static let itk2 = "/identitytoolkit.googleapis.com/v2"
    static let legacy = "/www.googleapis.com/identitytoolkit/v3/relyingparty"
    static let admin = "/identitytoolkit.googleapis.com/v1/projects/{project}"
    static let emulator = "/emulator/v1/projects/{project}"

    static func build() -> Router<Route> {
        var r = Router<Route>()
        func api(_ m: String, _ paths: [String], _ g: Guards, _ h: @escaping @Sendable (inout Context) throws -> Response, flow: FlowStep? = nil) {
            for p in paths { r.add(m, p, Route(kind: .api, guards: g, handler: h, name: p, flow: flow)) }
        }
        func page(_ m: String, _ p: String, _ g: Guards, _ h: @escaping @Sendable (inout Context) throws -> Response, flow: FlowStep? = nil) {
            r.add(m, p, Route(kind: .page, guards: g, handler: h, name: p, flow: flow))
        }

        // Health and discovery
        api("GET", ["/"], [], HealthAPI.root)
        api("GET", ["/__/auth/health"], [], HealthAPI.health)

        // Public keys (§3.5)
        api("GET", ["/.well-known/jwks.json", "/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com",
                    "\(itk)/sessionCookiePublicKeys"], [], KeysAPI.jwks)
        api("GET", ["/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com", "\(legacy)/publicKeys"], [], KeysAPI.x509)
        api("GET", ["/.well-known/openid-configuration"], [], KeysAPI.openIDConfiguration)

        // Phone sign-in (§2.1, §2.2)
        api("POST", ["\(itk)/accounts:sendVerificationCode", "\(legacy)/sendVerificationCode"], [.cors, .apiKey, .json], PhoneAPI.sendVerificationCode, flow: .init("phone", "start"))
        api("POST", ["\(itk)/accounts:signInWithPhoneNumber", "\(legacy)/verifyPhoneNumber"], [.cors, .apiKey, .json], PhoneAPI.signInWithPhoneNumber, flow: .init("phone", "complete"))

        // Custom tokens from the Admin SDKs (a service account's RS256 JWT; unsigned in dev mode)
        api("POST", ["\(itk)/accounts:signInWithCustomToken", "\(legacy)/verifyCustomToken"], [.cors, .apiKey, .json], CustomTokenAPI.signIn,
            flow: .init("custom_token", "complete"))

        // Phone second factor, v2 (§2.17)
        api("POST", ["\(itk2)/accounts/mfaEnrollment:start"], [.cors, .apiKey, .json], MFAAPI.enrollmentStart, flow: .init("mfa", "enrol_start"))
        api("POST", ["\(itk2)/accounts/mfaEnrollment:finalize"], [.cors, .apiKey, .json], MFAAPI.enrollmentFinalize, flow: .init("mfa", "enrol_complete"))
        api("POST", ["\(itk2)/accounts/mfaEnrollment:withdraw"], [.cors, .apiKey, .json], MFAAPI.enrollmentWithdraw, flow: .init("mfa", "withdraw"))
        api("POST", ["\(itk2)/accounts/mfaSignIn:start"], [.cors, .apiKey, .json], MFAAPI.signInStart, flow: .init("mfa", "start"))
        api("POST", ["\(itk2)/accounts/mfaSignIn:finalize"], [.cors, .apiKey, .json], MFAAPI.signInFinalize, flow: .init("mfa", "complete"))

        // Passkeys, v2 (Firebase's preview wire; docs/passkeys.md)
        api("POST", ["\(itk2)/accounts/passkeyEnrollment:start"], [.cors, .apiKey, .json], PasskeysAPI.enrollmentStart, flow: .init("passkey", "enrol_start"))
        api("POST", ["\(itk2)/accounts/passkeyEnrollment:finalize"], [.cors, .apiKey, .json], PasskeysAPI.enrollmentFinalize,
            flow: .init("passkey", "enrol_complete"))
        api("POST", ["\(itk2)/accounts/passkeySignIn:start"], [.cors, .apiKey, .json], PasskeysAPI.signInStart, flow: .init("passkey", "start"))
        api("POST", ["\(itk2)/accounts/passkeySignIn:finalize"], [.cors, .apiKey, .json], PasskeysAPI.signInFinalize, flow: .init("passkey", "complete"))

        // App verification (§2.14, §2.15, §4.4)
        api("GET", ["/__/auth/challenge"], [.cors], AppVerificationAPI.challenge, flow: .init("app_verification", "start"))
        api("POST", ["/__/auth/challenge"], [.cors, .json], AppVerificationAPI.solve, flow: .init("app_verification", "complete"))
        api("GET", ["\(itk)/recaptchaParams", "\(legacy)/getRecaptchaParam", "/v1/recaptchaParams"], [.cors, .apiKey], AppVerificationAPI.recaptchaParams)
        api("GET", ["\(itk2)/recaptchaConfig", "/v2/recaptchaConfig"], [.cors, .apiKey], AppVerificationAPI.recaptchaConfig)
        api("POST", ["\(itk)/accounts:verifyIosClient", "\(legacy)/verifyClient"], [.cors, .apiKey, .json], PushAPI.verifyIosClient, flow: .init("push", "start"))

        // Email link (§2.3–§2.5, §2.16)
        api("POST", ["\(itk)/accounts:sendOobCode", "\(legacy)/getOobConfirmationCode"], [.cors, .apiKey, .json], EmailLinkAPI.sendOobCode, flow: .init("email_link", "start"))
        api("POST", ["\(admin)/accounts:sendOobCode"], [.admin, .pathProject, .json], EmailLinkAPI.sendOobCode, flow: .init("email_link", "start"))
        api("POST", ["\(itk)/accounts:signInWithEmailLink", "\(legacy)/emailLinkSignin"], [.cors, .apiKey, .json], EmailLinkAPI.signInWithEmailLink, flow: .init("email_link", "complete"))
        // Gatehouse's own: the short code beside a link (docs/clients.md).
        api("POST", ["\(itk)/accounts:signInWithEmailCode"], [.cors, .apiKey, .json], EmailLinkAPI.signInWithEmailCode,
            flow: .init("email_link", "complete"))
        api("POST", ["\(itk)/accounts:createAuthUri", "\(legacy)/createAuthUri"], [.cors, .apiKey, .json], EmailLinkAPI.createAuthUri)
        api("POST", ["\(itk)/accounts:resetPassword", "\(legacy)/resetPassword"], [.cors, .apiKey, .json], EmailLinkAPI.resetPassword)
        api("GET", ["/.well-known/apple-app-site-association", "/apple-app-site-association"], [], EmailLinkAPI.appleAppSiteAssociation)
        api("GET", ["/.well-known/assetlinks.json"], [], EmailLinkAPI.assetLinks)

        // Tokens and sessions (§2.10, §2.11, §3.4)
        api("POST", ["/securetoken.googleapis.com/v1/token"], [.cors, .apiKey, .json], TokenAPI.refresh)
        api("POST", ["\(admin):createSessionCookie"], [.admin, .pathProject, .json], TokenAPI.createSessionCookie)
        api("GET", ["/__/auth/verify"], [], VerifyAPI.verify)
        // Prometheus exposition (docs/operations.md); nginx answers it only to internal addresses.
        api("GET", ["/__/auth/metrics"], [], MetricsAPI.scrape)

        // Accounts: user-facing (API key + idToken) and admin (Bearer, only under `\(admin)`) (§2.6–§2.9, §2.12, §2.13)
        api("POST", ["\(itk)/accounts:lookup", "\(legacy)/getAccountInfo"], [.cors, .apiKey, .json], LookupAPI.lookup)
        api("POST", ["\(admin)/accounts:lookup"], [.admin, .pathProject, .json], LookupAPI.lookup)
        api("POST", ["\(itk)/accounts:update", "\(legacy)/setAccountInfo"], [.cors, .apiKey, .json], AccountsAPI.update)
        api("POST", ["\(admin)/accounts:update"], [.admin, .pathProject, .json], AccountsAPI.update)
        api("POST", ["\(itk)/accounts:delete", "\(legacy)/deleteAccount"], [.cors, .apiKey, .json], AccountsAPI.delete)
        api("POST", ["\(admin)/accounts:delete"], [.admin, .pathProject, .json], AccountsAPI.delete)
        api("POST", ["\(itk)/accounts:signUp", "\(legacy)/signupNewUser"], [.cors, .apiKey, .json], AccountsAPI.signUp)
        api("POST", ["\(admin)/accounts"], [.admin, .pathProject, .json], AccountsAPI.create)
        api("POST", ["\(admin)/accounts:batchDelete"], [.admin, .pathProject, .json], AccountsAPI.batchDelete)
        api("GET", ["\(admin)/accounts:batchGet"], [.admin, .pathProject], AccountsAPI.batchGet)
        api("POST", ["\(admin)/accounts:batchCreate"], [.admin, .pathProject, .json, .importBody], AccountImportAPI.batchCreate)
        api("POST", ["\(admin)/accounts:query"], [.admin, .pathProject, .json], AccountImportAPI.query)
        api("GET", ["\(itk)/projects", "\(legacy)/getProjectConfig"], [.cors, .apiKey], AccountsAPI.projectConfig)

        // Emulator helpers (§2.18): dev mode only
        api("GET", ["\(emulator)/verificationCodes"], [.devOnly, .pathProject], PhoneAPI.emulatorVerificationCodes)
        api("GET", ["\(emulator)/oobCodes"], [.devOnly, .pathProject], EmailLinkAPI.emulatorOobCodes)
        api("GET", ["\(emulator)/pushNotifications"], [.devOnly, .pathProject], PushAPI.emulatorPushNotifications)
        api("DELETE", ["\(emulator)/accounts"], [.devOnly, .pathProject], AccountsAPI.emulatorDeleteAccounts)

        // Hosted pages (§4): GET renders, POST acts (CSRF-checked in the handler)
        page("GET", "/__/auth/signin", [], PhonePage.chooser)
        page("GET", "/__/auth/phone", [], PhonePage.show)
        page("POST", "/__/auth/phone", [], PhonePage.start, flow: .init("phone", "start"))
        page("POST", "/__/auth/phone/verify", [], PhonePage.verify, flow: .init("phone", "complete"))
        page("POST", "/__/auth/phone/delivery", [], PhonePage.delivery)
        // Providers' delivery receipts: server to server, signed (no browser guard applies).
        api("POST", ["/__/auth/delivery/twilio"], [], DeliveryCallbacksAPI.twilio)
        api("POST", ["/__/auth/delivery/webhook"], [], DeliveryCallbacksAPI.webhook)
        page("GET", "/__/auth/handler", [], VerifyAppPage.handler)
        page("GET", "/__/auth/callback", [], VerifyAppPage.callback)
        page("GET", "/__/auth/email", [], EmailPages.show)
        page("POST", "/__/auth/email", [], EmailPages.start, flow: .init("email_link", "start"))
        page("GET", "/__/auth/email/code", [], EmailPages.showCode)
        page("POST", "/__/auth/email/code", [], EmailPages.code, flow: .init("email_link", "complete"))
        page("GET", "/__/auth/action", [], EmailPages.action)
        page("POST", "/__/auth/action", [], EmailPages.confirm, flow: .init("email_link", "complete"))
        page("GET", "/__/auth/links", [], EmailPages.links)
        page("GET", "/__/auth/account", [], AccountPage.show)
        page("POST", "/__/auth/signout", [], AccountPage.signOut)
        page("GET", "/__/auth/mfa", [], MFAPage.show)
        page("POST", "/__/auth/mfa", [], MFAPage.send, flow: .init("mfa", "start"))
        page("POST", "/__/auth/mfa/verify", [], MFAPage.verify, flow: .init("mfa", "complete"))
        page("POST", "/__/auth/mfa/delivery", [], MFAPage.delivery)
        page("POST", "/__/auth/account/mfa", [], AccountPage.startEnrolment, flow: .init("mfa", "enrol_start"))
        page("POST", "/__/auth/account/mfa/verify", [], AccountPage.finishEnrolment, flow: .init("mfa", "enrol_complete"))
        page("POST", "/__/auth/account/mfa/remove", [], AccountPage.removeFactor, flow: .init("mfa", "withdraw"))
        page("POST", "/__/auth/mfa/totp", [], MFAPage.verifyTOTP, flow: .init("mfa", "complete"))
        page("POST", "/__/auth/account/totp/verify", [], AccountPage.finishTOTPEnrolment, flow: .init("mfa", "enrol_complete"))
        page("GET", "/__/auth/passkey", [], PasskeyPage.show)
        page("POST", "/__/auth/passkey/options", [], PasskeyPage.options, flow: .init("passkey", "start"))
        page("POST", "/__/auth/passkey", [], PasskeyPage.signIn, flow: .init("passkey", "complete"))
        page("POST", "/__/auth/account/passkey", [], AccountPage.startPasskeyEnrolment, flow: .init("passkey", "enrol_start"))
        page("POST", "/__/auth/account/passkey/verify", [], AccountPage.finishPasskeyEnrolment, flow: .init("passkey", "enrol_complete"))
        page("POST", "/__/auth/account/passkey/rename", [], AccountPage.renamePasskey, flow: .init("passkey", "rename"))
        page("POST", "/__/auth/account/passkey/remove", [], AccountPage.removePasskey, flow: .init("passkey", "remove"))
        page("POST", "/__/auth/account/passkey/offer", [], AccountPage.dismissPasskeyOffer)
        // Where you're signed in (AccountPage+Sessions.swift) and the new sign-in notice's link
        page("POST", "/__/auth/account/sessions/revoke", [], AccountPage.revokeSession, flow: .init("sessions", "revoke"))
        page("POST", "/__/auth/account/sessions/revoke-others", [], AccountPage.revokeOtherSessions, flow: .init("sessions", "revoke_others"))
        page("POST", "/__/auth/account/sessions/revoke-all", [], AccountPage.revokeAllSessions, flow: .init("sessions", "revoke_all"))
        page("GET", "/__/auth/signout-everywhere", [], SignOutEverywherePage.show)
        page("POST", "/__/auth/signout-everywhere", [], SignOutEverywherePage.signOut, flow: .init("sign_in_notice", "signout_everywhere"))

        // Operator console (Console/; docs/console.md): every handler goes through Console.handle
        // (session of the deployment's own project, second factor, operator), forms through ConsoleForm.
        // Console: users
        page("GET", "/__/auth/console/users", [], ConsoleUsers.list)
        page("GET", "/__/auth/console/users/{uid}", [], ConsoleUser.show)
        page("POST", "/__/auth/console/users/{uid}", [], ConsoleUser.act)
        // A uid nginx would not pass as one path segment ("/" in it, "." or ".."): in the query.
        page("GET", "/__/auth/console/user", [], ConsoleUser.show)
        page("POST", "/__/auth/console/user", [], ConsoleUser.act)

        // Console: activity, delivery, audit, keys
        page("GET", "/__/auth/console", [], ConsoleActivity.redirect)
        page("GET", "/__/auth/console/", [], ConsoleActivity.show)
        page("GET", "/__/auth/console/delivery", [], ConsoleDelivery.show)
        page("POST", "/__/auth/console/delivery", [], ConsoleDelivery.act)
        page("GET", "/__/auth/console/audit", [], ConsoleAudit.show)
        page("GET", "/__/auth/console/keys", [], ConsoleKeys.show)
        page("POST", "/__/auth/console/keys", [], ConsoleKeys.rotate)


        return r
    }
}
