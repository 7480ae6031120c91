import AuthCrypto
import AuthEngine
import HTTP
import JSONValue

/// Passkeys on Firebase's preview wire, Identity Toolkit v2 (docs/passkeys.md):
/// `accounts/passkeyEnrollment:start|finalize` and `accounts/passkeySignIn:start|finalize`.
/// Binary values are sent as standard padded base64 (the iOS preview decodes only that); both
/// alphabets, padded or not, are read (the JS preview sends base64url).
enum PasskeysAPI {
    static func flow(_ ctx: Context) -> Passkeys {
        var f = Passkeys(store: ctx.store, clock: ctx.app.clock, random: ctx.app.random, tokens: ctx.app.tokens, project: ctx.project)
        f.device = SignInRecording.device(ctx)
        return f
    }

    /// `{idToken}` → `{credentialCreationOptions}`.
    static func enrollmentStart(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        let o = try flow(ctx).startEnrolment(idToken: ctx.string("idToken"), remoteAddress: ctx.request.remoteAddress)
        return .json(.obj(("credentialCreationOptions", creationOptions(o))), headers: [("Cache-Control", "no-store")])
    }

    /// `{idToken, name?, authenticatorRegistrationResponse}` → `{localId, idToken, refreshToken}`.
    static func enrollmentFinalize(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        let r = MFAAPI.object(ctx, "authenticatorRegistrationResponse")
        let response = r.map { r in
            Passkeys.RegistrationResponse(id: r["id"]?.stringValue, rawID: r["rawId"]?.stringValue, type: r["type"]?.stringValue,
                                          clientDataJSON: r["response"]?["clientDataJSON"]?.stringValue,
                                          attestationObject: r["response"]?["attestationObject"]?.stringValue)
        }
        let done = try flow(ctx).finishEnrolment(idToken: ctx.string("idToken"), response: response,
                                                 name: ctx.string("name") ?? ctx.string("displayName"), remoteAddress: ctx.request.remoteAddress)
        ctx.app.sessionCache.evict(project: ctx.project.id, localID: done.account.localID)
        SignInRecording.record(ctx, done.tokens, signIn: false)
        return .json(.obj([("localId", done.account.localID)] + (done.tokens?.wirePairs ?? [])))
    }

    /// `{}` → `{credentialRequestOptions}`.
    static func signInStart(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        let o = try flow(ctx).startSignIn(remoteAddress: ctx.request.remoteAddress)
        return .json(.obj(("credentialRequestOptions", requestOptions(o))), headers: [("Cache-Control", "no-store")])
    }

    /// `{authenticatorAuthenticationResponse}` → `{idToken, refreshToken, localId}` (or, for a
    /// project that asks a passkey user for the second factor too, `{mfaPendingCredential, mfaInfo}`).
    static func signInFinalize(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        let done = try flow(ctx).finishSignIn(response: assertion(MFAAPI.object(ctx, "authenticatorAuthenticationResponse")),
                                              remoteAddress: ctx.request.remoteAddress)
        switch done {
        case let .done(account, _, tokens):
            SignInRecording.record(ctx, tokens)
            return .json(.obj((tokens?.wirePairs ?? []) + [("localId", account.localID)]))
        case let .secondFactor(account, challenge):
            return .json(.obj(("localId", account.localID), ("mfaPendingCredential", challenge.pendingCredential),
                              ("mfaInfo", MFAAPI.hints(challenge.enrollments))))
        }
    }

    static func assertion(_ r: JSON?) -> Passkeys.AssertionResponse? {
        r.map { r in
            Passkeys.AssertionResponse(id: r["id"]?.stringValue, rawID: r["rawId"]?.stringValue, type: r["type"]?.stringValue,
                                       clientDataJSON: r["response"]?["clientDataJSON"]?.stringValue,
                                       authenticatorData: r["response"]?["authenticatorData"]?.stringValue,
                                       signature: r["response"]?["signature"]?.stringValue,
                                       userHandle: r["response"]?["userHandle"]?.stringValue)
        }
    }

    static func creationOptions(_ o: Passkeys.CreationOptions) -> JSON {
        .obj(("rp", JSON.obj(("id", o.rpID), ("name", o.rpName))),
             ("user", JSON.obj(("id", Base64URL.encodeStandard(o.userID)), ("name", o.userName), ("displayName", o.userDisplayName))),
             ("challenge", Base64URL.encodeStandard(o.challenge)),
             ("pubKeyCredParams", JSON.array(Passkeys.algorithms.map { JSON.obj(("type", "public-key"), ("alg", $0)) })),
             ("timeout", o.timeoutMillis),
             ("attestation", o.attestation),
             ("authenticatorSelection", JSON.obj(("residentKey", "required"), ("requireResidentKey", true), ("userVerification", "required"))),
             ("excludeCredentials", o.excludeCredentials.isEmpty ? nil
                : JSON.array(o.excludeCredentials.map { JSON.obj(("type", "public-key"), ("id", standard($0))) })))
    }

    static func requestOptions(_ o: Passkeys.RequestOptions) -> JSON {
        .obj(("challenge", Base64URL.encodeStandard(o.challenge)), ("rpId", o.rpID), ("userVerification", "required"),
             ("timeout", o.timeoutMillis))
    }

    /// A stored base64url id as standard padded base64.
    static func standard(_ id: String) -> String { Base64URL.decode(id).map(Base64URL.encodeStandard) ?? id }

    /// `passkeyInfo[]` of `accounts:lookup`.
    static func info(_ passkeys: [PasskeyRecord]) -> JSON? {
        passkeys.isEmpty ? nil : .array(passkeys.map { p in .obj(("credentialId", p.credentialID), ("name", p.name)) })
    }
}
