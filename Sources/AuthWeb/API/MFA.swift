import AuthEngine
import HTTP
import JSONValue

/// Phone second factor wire endpoints, Identity Toolkit v2 (firebase-wire.md §2.17):
/// `accounts/mfaEnrollment:start|finalize|withdraw` and `accounts/mfaSignIn:start|finalize`.
enum MFAAPI {
    static func flow(_ ctx: Context) -> PhoneMFA {
        var f = PhoneMFA(store: ctx.store, clock: ctx.app.clock, random: ctx.app.random, tokens: ctx.app.tokens, project: ctx.project)
        f.device = SignInRecording.device(ctx)
        return f
    }

    static func totp(_ ctx: Context) -> TOTPMFA {
        var f = TOTPMFA(store: ctx.store, clock: ctx.app.clock, random: ctx.app.random, tokens: ctx.app.tokens, project: ctx.project)
        f.device = SignInRecording.device(ctx)
        return f
    }

    /// `phoneEnrollmentInfo` / `phoneSignInInfo`: the number (enrolment only), the app
    /// verification (`recaptchaToken`: a Gatehouse app token, or `iosReceipt` + `iosSecret`) and
    /// the calling app.
    static func codeRequest(_ ctx: Context, _ info: JSON?) -> PhoneMFA.CodeRequest {
        let token = info?["recaptchaToken"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let ios = PushAPI.credential(info?["iosReceipt"]?.stringValue, info?["iosSecret"]?.stringValue)
        return PhoneMFA.CodeRequest(phoneNumber: info?["phoneNumber"]?.stringValue, appToken: token, iosCredential: ios, apiKey: ctx.apiKey,
                                    appID: PhoneAPI.appID(ctx), remoteAddress: ctx.request.remoteAddress, infoPresent: info != nil,
                                    composeSMS: SMSText.composer(ctx))
    }

    /// A nested object of the body, nil when absent or not an object.
    static func object(_ ctx: Context, _ key: String) -> JSON? {
        guard let v = ctx.body[key], case .object = v else { return nil }
        return v
    }

    /// `{idToken, phoneEnrollmentInfo{phoneNumber, recaptchaToken…}}` → `{phoneSessionInfo{sessionInfo}}`;
    /// `{idToken, totpEnrollmentInfo{}}` → `{totpSessionInfo{sharedSecretKey, verificationCodeLength,
    /// hashingAlgorithm, periodSec, sessionInfo, finalizeEnrollmentTime}}`.
    static func enrollmentStart(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        if object(ctx, "totpEnrollmentInfo") != nil {
            let t = try totp(ctx).startEnrolment(idToken: ctx.string("idToken"))
            return .json(.obj(("totpSessionInfo", JSON.obj(
                ("sharedSecretKey", t.sharedSecretKey), ("verificationCodeLength", TOTP.digits), ("hashingAlgorithm", TOTP.algorithm),
                ("periodSec", Int(TOTP.periodSeconds)), ("sessionInfo", t.sessionInfo), ("finalizeEnrollmentTime", RFC3339.format(t.finalizeBy))))),
                         headers: [("Cache-Control", "no-store")])
        }
        let result = try flow(ctx).startEnrolment(idToken: ctx.string("idToken"), codeRequest(ctx, object(ctx, "phoneEnrollmentInfo")))
        if result.smsQueued { ctx.app.outboxNotifier() }
        return .json(.obj(("phoneSessionInfo", JSON.obj(("sessionInfo", result.sessionInfo)))))
    }

    /// `{idToken, phoneVerificationInfo{sessionInfo, code}, displayName?}` → `{idToken, refreshToken}`
    /// carrying the new factor as the sign-in's second factor.
    static func enrollmentFinalize(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        if let t = object(ctx, "totpVerificationInfo") {
            let result = try totp(ctx).finishEnrolment(idToken: ctx.string("idToken"), sessionInfo: t["sessionInfo"]?.stringValue,
                                                       code: t["verificationCode"]?.stringValue, displayName: ctx.string("displayName"),
                                                       remoteAddress: ctx.request.remoteAddress)
            ctx.app.sessionCache.evict(project: ctx.project.id, localID: result.account.localID)
            SignInRecording.record(ctx, result.tokens, signIn: false)
            return .json(.obj(result.tokens.wirePairs))
        }
        let info = object(ctx, "phoneVerificationInfo")
        let result = try flow(ctx).finishEnrolment(idToken: ctx.string("idToken"), sessionInfo: info?["sessionInfo"]?.stringValue,
                                                   code: info?["code"]?.stringValue, displayName: ctx.string("displayName"),
                                                   remoteAddress: ctx.request.remoteAddress, infoPresent: info != nil)
        ctx.app.sessionCache.evict(project: ctx.project.id, localID: result.account.localID)
        SignInRecording.record(ctx, result.tokens, signIn: false)
        return .json(.obj(result.tokens.wirePairs))
    }

    /// `{idToken, mfaEnrollmentId}` → `{idToken, refreshToken}`; earlier sessions are revoked.
    static func enrollmentWithdraw(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        let result = try flow(ctx).withdraw(idToken: ctx.string("idToken"), enrollmentID: ctx.string("mfaEnrollmentId"),
                                            remoteAddress: ctx.request.remoteAddress)
        ctx.app.sessionCache.evict(project: ctx.project.id, localID: result.account.localID)
        SignInRecording.record(ctx, result.tokens, signIn: false)
        return .json(.obj(result.tokens.wirePairs))
    }

    /// `{mfaPendingCredential, mfaEnrollmentId, phoneSignInInfo{recaptchaToken…}}` →
    /// `{phoneResponseInfo{sessionInfo}}`; the code goes to the enrolled number.
    static func signInStart(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        let info = object(ctx, "phoneSignInInfo") ?? .object([])  // only the app verification is read from it
        let result = try flow(ctx).startSignIn(pendingCredential: ctx.string("mfaPendingCredential"),
                                               enrollmentID: ctx.string("mfaEnrollmentId"), codeRequest(ctx, info))
        if result.smsQueued { ctx.app.outboxNotifier() }
        return .json(.obj(("phoneResponseInfo", JSON.obj(("sessionInfo", result.sessionInfo)))))
    }

    /// `{mfaPendingCredential, phoneVerificationInfo{sessionInfo, code}}` → `{idToken, refreshToken}`.
    /// TOTP: `{mfaPendingCredential, mfaEnrollmentId, totpVerificationInfo{verificationCode}}`.
    static func signInFinalize(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        if let t = object(ctx, "totpVerificationInfo") {
            let result = try totp(ctx).finishSignIn(pendingCredential: ctx.string("mfaPendingCredential"),
                                                    enrollmentID: ctx.string("mfaEnrollmentId"), code: t["verificationCode"]?.stringValue,
                                                    remoteAddress: ctx.request.remoteAddress)
            SignInRecording.record(ctx, result.tokens)
            return .json(.obj((result.tokens?.wirePairs ?? []) + [("localId", result.account.localID)]))
        }
        let info = object(ctx, "phoneVerificationInfo")
        let result = try flow(ctx).finishSignIn(pendingCredential: ctx.string("mfaPendingCredential"),
                                                sessionInfo: info?["sessionInfo"]?.stringValue, code: info?["code"]?.stringValue,
                                                remoteAddress: ctx.request.remoteAddress, infoPresent: info != nil)
        SignInRecording.record(ctx, result.tokens)
        return .json(.obj((result.tokens?.wirePairs ?? []) + [("localId", result.account.localID)]))
    }

    /// The hints of a first-factor answer: numbers obfuscated, no unobfuscated field; a TOTP
    /// factor as `totpInfo: {}`.
    static func hints(_ enrollments: [MFAEnrollment]) -> JSON {
        .array(enrollments.map { e in
            .obj(("mfaEnrollmentId", e.enrollmentID), ("displayName", e.displayName),
                 ("phoneInfo", e.phoneNumber == nil ? nil : e.obfuscatedPhone), ("totpInfo", e.totp == nil ? nil : JSON.object([])),
                 ("enrolledAt", RFC3339.format(e.enrolledAt)))
        })
    }

    /// The account's own factors (`accounts:lookup`, admin reads): the numbers in full; a TOTP
    /// factor as `totpInfo: {}` (its secret never leaves the store).
    static func info(_ enrollments: [MFAEnrollment]) -> JSON {
        .array(enrollments.map { e in
            .obj(("mfaEnrollmentId", e.enrollmentID), ("displayName", e.displayName), ("phoneInfo", e.phoneNumber),
                 ("totpInfo", e.totp == nil ? nil : JSON.object([])),
                 ("enrolledAt", RFC3339.format(e.enrolledAt)), ("unobfuscatedPhoneInfo", e.phoneNumber))
        })
    }
}
