import AuthEngine
import HTTP

/// The occasional purge of expired sessions, timed by the app (`WebApp.lastSessionPurge`).
enum SessionPurge {
    static let interval: Millis = 3600 * 1000

    /// Deletes expired sessions and old refresh-token records at most once an hour per app.
    static func runIfDue(_ ctx: Context) {
        let now = ctx.now
        let due: Bool = ctx.app.lastSessionPurge.withLock { last in
            guard now - last >= interval || now < last else { return false }
            last = now
            return true
        }
        guard due else { return }
        do { try ctx.store.purgeSessions(now: now, retiredBefore: now - Housekeeping.retiredRefreshTokens) } catch {
            ctx.app.log.warning("session purge failed: \(error)", requestID: ctx.request.logID)
        }
    }
}

extension Context {
    var sessions: Sessions { Sessions(store: store, tokens: app.tokens, random: app.random) }
    var refreshTokens: RefreshTokens { RefreshTokens(store: store, tokens: app.tokens, random: app.random) }
    var accountAdmin: AccountAdmin { AccountAdmin(store: store, clock: app.clock, random: app.random, cache: app.sessionCache) }
    var accountProfile: AccountProfile {
        var f = AccountProfile(store: store, tokens: app.tokens, random: app.random, cache: app.sessionCache,
                               recentSignInSeconds: project.session.recentSignInSeconds)
        f.device = SignInRecording.device(self)
        return f
    }
    /// The session cookie of the request's project, if sent.
    var sessionCookieValue: String? { request.cookie(project.session.cookieName) }

    /// Whether the body has a non-null value for `key`.
    func bodyHas(_ key: String) -> Bool { body[key].map { !$0.isNull } ?? false }
}
