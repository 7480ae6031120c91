import AuthEngine
import HTTP

/// `accounts:signInWithCustomToken` (legacy `verifyCustomToken`): a token minted by the Admin
/// SDKs' `create_custom_token` with a configured service account signs its uid in.
enum CustomTokenAPI {
    static func signIn(_ ctx: inout Context) throws -> Response {
        try ctx.refuseTenant()
        var flow = CustomTokenSignIn(project: ctx.project, store: ctx.store, tokens: ctx.app.tokens, random: ctx.app.random)
        flow.device = SignInRecording.device(ctx)
        let res = try flow.signIn(token: ctx.string("token"), remoteAddress: ctx.request.remoteAddress)
        SignInRecording.record(ctx, res.tokens)
        return .json(.obj([("kind", "identitytoolkit#VerifyCustomTokenResponse")] + res.tokens.wirePairs + [("isNewUser", res.isNewUser)]),
                     headers: [("Cache-Control", "no-store")])
    }
}
