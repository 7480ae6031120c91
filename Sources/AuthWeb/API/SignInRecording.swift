import AuthEngine

/// The one place the wire's token answers pass on their way out: the device of the sign-in
/// (user agent and coarse network, `SignInDevice`) goes on the new refresh token, whose family
/// keeps it through every refresh, so the account page can say where each app is signed in.
///
/// It runs after the flow committed, as one small write transaction of its own. It never fails
/// the sign-in: the tokens are issued and answered whatever happens here (a store error is
/// logged, the device is then simply missing from the list).
enum SignInRecording {
    /// The request's device.
    static func device(_ ctx: Context) -> SignInDevice {
        SignInDevice(userAgent: ctx.request.header("user-agent"), remoteAddress: ctx.request.remoteAddress)
    }

    /// Records the device of `tokens` (nil: the flow issued none, e.g. a second factor follows).
    /// `signIn` is false for tokens that replace the caller's own after a change (an enrolment,
    /// a withdrawal, an update): the device is recorded, but it is no new sign-in.
    static func record(_ ctx: Context, _ tokens: IssuedTokens?, signIn: Bool = true) {
        guard let tokens else { return }
        let device = device(ctx)
        let hash = SignInTokens.hash(refreshToken: tokens.refreshToken)
        do {
            try ctx.store.transaction {
                try ctx.store.setRefreshTokenDevice(hash: hash, userAgent: device.userAgent, network: device.network)
            }
        } catch {
            ctx.app.log.warning("sign-in: could not record the device: \(error)", requestID: ctx.request.logID)
        }
    }
}
