import AuthEngine
import HTTP

/// Per-process state of the session feature: the `/__/auth/verify` lookup cache and the
/// clock of the occasional purge of expired sessions.
enum SessionProcess {
    static let cache = SessionCache()
    private static let lock = NSLockLike()
    nonisolated(unsafe) private static var lastPurge: Millis = 0
    static let purgeInterval: Millis = 3600 * 1000

    /// Deletes expired sessions and old refresh-token records at most once an hour per process.
    static func purgeIfDue(_ ctx: Context) {
        let now = ctx.now
        let due: Bool = lock.withLock {
            guard now - lastPurge >= purgeInterval || now < lastPurge else { return false }
            lastPurge = now
            return true
        }
        guard due else { return }
        do { try ctx.store.purgeSessions(now: now, retiredBefore: now - Housekeeping.retiredRefreshTokens) } catch {
            Log.warning("session purge failed: \(error)", requestID: ctx.request.logID)
        }
    }
}

extension Context {
    var sessions: Sessions { Sessions(store: store, tokens: app.tokens, random: app.random) }
    var refreshTokens: RefreshTokens { RefreshTokens(store: store, tokens: app.tokens, random: app.random) }
    var accountAdmin: AccountAdmin { AccountAdmin(store: store, clock: app.clock, random: app.random, cache: SessionProcess.cache) }
    var accountProfile: AccountProfile {
        AccountProfile(store: store, tokens: app.tokens, random: app.random, cache: SessionProcess.cache)
    }
    /// The session cookie of the request's project, if sent.
    var sessionCookieValue: String? { request.cookie(project.session.cookieName) }

    /// Whether the body has a non-null value for `key`.
    func bodyHas(_ key: String) -> Bool { body[key].map { !$0.isNull } ?? false }
}
