import AuthCrypto
import AuthEngine
import HTTP
import JSONValue

/// Account management for the Admin SDKs and signed-in users (firebase-wire.md §2.7–§2.9,
/// §2.12, §2.13, §2.18). Admin calls are authenticated by the route guards.
enum AccountsAPI {
    /// Admin create, `POST …/projects/{p}/accounts` → `localId`.
    static func create(_ ctx: inout Context) throws -> Response {
        let a = try ctx.accountAdmin.create(project: ctx.project.id, try changes(ctx, disabledKey: "disabled"))
        return .json(.obj(("kind", "identitytoolkit#SignupNewUserResponse"), ("localId", a.localID), ("email", a.email),
                          ("displayName", a.displayName)))
    }

    /// `accounts:update`: an `oobCode` applies an email action; admins update by `localId`;
    /// users update their own profile with an `idToken`.
    static func update(_ ctx: inout Context) throws -> Response {
        if ctx.nonEmpty("oobCode") != nil { return try EmailLinkAPI.applyOobCode(&ctx) }
        if ctx.bodyHas("deletePasskey") { return try deletePasskeys(&ctx) }
        let c = try changes(ctx, disabledKey: "disableUser")
        let account: Account
        if ctx.isAdmin, ctx.bodyHas("localId") || !ctx.bodyHas("idToken") {
            account = try ctx.accountAdmin.update(project: ctx.project.id, c)
        } else {
            guard ctx.bodyHas("idToken") else { throw AuthError(.invalidReqType, "Unsupported request parameters.") }
            account = try ctx.accountProfile.update(idToken: ctx.string("idToken"), project: ctx.project.id, c)
        }
        return .json(.obj(
            ("kind", "identitytoolkit#SetAccountInfoResponse"),
            ("localId", account.localID),
            ("email", account.email),
            ("emailVerified", account.email == nil ? nil : account.emailVerified),
            ("displayName", account.displayName),
            ("photoUrl", account.photoURL),
            ("providerUserInfo", JSON.array(account.providers.map(UserInfoJSON.provider)))
        ))
    }

    /// `accounts:update` with `deletePasskey: [credentialId]` (Firebase's preview): the user's own
    /// passkeys, with a recent sign-in; the sign-ins a passkey made end, and the caller goes on
    /// in new tokens.
    static func deletePasskeys(_ ctx: inout Context) throws -> Response {
        guard let list = ctx.body["deletePasskey"]?.arrayValue else { throw AuthError(.invalidArgument, "deletePasskey must be a list.") }
        let ids = try list.map { v -> String in
            guard let id = v.stringValue, !id.isEmpty else { throw AuthError(.invalidCredentialID) }
            // The wire may name one in either alphabet; the store keys base64url.
            guard let bytes = Base64URL.decode(id), !bytes.isEmpty else { throw AuthError(.invalidCredentialID) }
            return Base64URL.encode(bytes)
        }
        guard ids.count <= 64 else { throw AuthError(.invalidArgument, "Too many passkeys named.") }
        let flow = PasskeysAPI.flow(ctx)
        try flow.requireEnabled()
        let (account, token) = try ctx.accounts.account(forIDToken: ctx.string("idToken"), project: ctx.project.id)
        let updated = try flow.remove(account: account, proof: SignInProof(token), credentialIDs: ids, remoteAddress: ctx.request.remoteAddress)
        ctx.app.sessionCache.evict(project: ctx.project.id, localID: updated.localID)
        let tokens = try ctx.signInTokens.issue(for: updated, provider: token.signInProvider, authTime: token.authTime, secondFactor: token.secondFactor)
        SignInRecording.record(ctx, tokens, signIn: false)
        return .json(.obj([
            ("kind", "identitytoolkit#SetAccountInfoResponse"),
            ("localId", updated.localID),
            ("email", updated.email),
            ("displayName", updated.displayName),
            ("providerUserInfo", JSON.array(updated.providers.map(UserInfoJSON.provider))),
            ("passkeyInfo", PasskeysAPI.info(try flow.list(localID: updated.localID)) ?? JSON.array([])),
        ] + tokens.wirePairs))
    }

    /// `accounts:delete`: admins by `localId`, users with their `idToken`.
    static func delete(_ ctx: inout Context) throws -> Response {
        if ctx.isAdmin, ctx.bodyHas("localId") || !ctx.bodyHas("idToken") {
            guard let id = ctx.nonEmpty("localId") else { throw AuthError(.missingLocalID) }
            try ctx.accountAdmin.delete(project: ctx.project.id, localID: id)
        } else {
            try ctx.accountProfile.delete(idToken: ctx.string("idToken"), project: ctx.project.id)
        }
        return .json(.obj(("kind", "identitytoolkit#DeleteAccountResponse")))
    }

    /// `accounts:batchDelete` `{localIds[≤1000], force}` → `{errors?}`.
    static func batchDelete(_ ctx: inout Context) throws -> Response {
        let errors = try ctx.accountAdmin.batchDelete(project: ctx.project.id, localIDs: ctx.stringArray("localIds"), force: ctx.bool("force"))
        let list: JSON? = errors.isEmpty ? nil : .array(errors.map { .obj(("index", $0.index), ("localId", $0.localID), ("message", $0.message)) })
        return .json(.obj(("errors", list)))
    }

    /// `GET accounts:batchGet?maxResults=&nextPageToken=` (users ordered by `localId`).
    static func batchGet(_ ctx: inout Context) throws -> Response {
        var max: Int?
        if let raw = ctx.request.query("maxResults"), !raw.isEmpty {
            guard let n = Int(raw) else { throw AuthError(.invalidArgument, "maxResults must be an integer") }
            max = n
        }
        let page = try ctx.accountAdmin.list(project: ctx.project.id, maxResults: max, pageToken: ctx.request.query("nextPageToken"))
        return .json(.obj(("kind", "identitytoolkit#DownloadAccountResponse"),
                          ("users", JSON.array(page.users.map { UserInfoJSON.encode($0, privileged: true) })),
                          ("nextPageToken", page.nextPageToken)))
    }

    /// `accounts:signUp`: an anonymous account. Admins create accounts with `create`, on the Admin
    /// SDK path (the route guards give admin power nowhere else).
    static func signUp(_ ctx: inout Context) throws -> Response {
        if ctx.bodyHas("localId") { throw AuthError(.unexpectedParameter, "User ID") }
        if ctx.bodyHas("email") || ctx.bodyHas("password") || ctx.bodyHas("idToken") {
            throw AuthError(.operationNotAllowed, "Password sign-in is disabled for this project.")
        }
        let (a, t) = try ctx.accountProfile.signUpAnonymous(project: ctx.project.id, remoteAddress: ctx.request.remoteAddress,
                                                              client: ctx.project.client(ctx.request.remoteAddress))
        SignInRecording.record(ctx, t)
        return .json(.obj([("kind", "identitytoolkit#SignupNewUserResponse"), ("localId", a.localID)] + t.wirePairs),
                     headers: [("Cache-Control", "no-store")])
    }

    /// `GET /v1/projects` (legacy `getProjectConfig`): project number and authorized domains.
    static func projectConfig(_ ctx: inout Context) throws -> Response {
        .json(.obj(("projectId", ctx.project.projectNumber), ("authorizedDomains", ctx.project.authorizedDomains)))
    }

    /// `DELETE /emulator/v1/projects/{p}/accounts` (dev mode only): every account goes.
    static func emulatorDeleteAccounts(_ ctx: inout Context) throws -> Response {
        try ctx.accountAdmin.deleteAll(project: ctx.project.id)
        return .json(.object([]))
    }

    /// The body's account fields as plain values.
    static func changes(_ ctx: Context, disabledKey: String) throws -> AccountChanges {
        var c = AccountChanges()
        c.localID = ctx.string("localId")
        c.email = ctx.string("email")
        c.phoneNumber = ctx.string("phoneNumber")
        c.displayName = ctx.string("displayName")
        c.photoURL = ctx.string("photoUrl")
        c.password = ctx.string("password")
        if ctx.bodyHas("emailVerified") { c.emailVerified = ctx.bool("emailVerified") }
        if ctx.bodyHas(disabledKey) { c.disabled = ctx.bool(disabledKey) }
        if ctx.bodyHas("validSince") {
            guard let s = ctx.string("validSince"), let v = Int64(s) else {
                throw AuthError(.invalidArgument, "validSince must be a number of seconds")
            }
            c.validSince = v
        }
        if ctx.bodyHas("customAttributes") {
            guard let text = ctx.string("customAttributes") else { throw AuthError(.invalidClaims) }
            c.customAttributes = text
        }
        c.deleteAttributes = ctx.stringArray("deleteAttribute")
        c.deleteProviders = ctx.stringArray("deleteProvider")
        if let mfa = ctx.body["mfa"], !mfa.isNull {
            // What the Node.js Admin SDK sends for `multiFactor.enrolledFactors` (an empty or absent
            // list clears them); admins only.
            guard ctx.isAdmin else { throw AuthError(.insufficientPermission) }
            guard case .object = mfa else { throw AuthError(.invalidArgument, "mfa must be an object") }
            let items = mfa["enrollments"]?.arrayValue ?? []
            c.mfaEnrollments = try items.map { try AccountsAPI.enrollment($0, field: "mfa.enrollments") }
        }
        return c
    }

    /// One second factor as the wire gives it (`mfaEnrollmentId`, `phoneInfo`, `displayName`, `enrolledAt`).
    static func enrollment(_ e: JSON, field: String) throws -> AccountChanges.EnrollmentInput {
        guard case .object = e else { throw AuthError(.invalidArgument, "\(field): expected objects") }
        var at: Millis?
        if let text = e["enrolledAt"]?.stringValue {
            guard let ms = RFC3339.parse(text) else { throw AuthError(.invalidArgument, "\(field): invalid enrolledAt") }
            at = ms
        }
        var input = AccountChanges.EnrollmentInput(enrollmentID: e["mfaEnrollmentId"]?.stringValue, phoneNumber: e["phoneInfo"]?.stringValue,
                                                   displayName: e["displayName"]?.stringValue, enrolledAt: at)
        if let t = e["totpInfo"], case .object = t, e["phoneInfo"] == nil { input.keepsTOTP = true }
        return input
    }
}
