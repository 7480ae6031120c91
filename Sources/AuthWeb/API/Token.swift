import AuthEngine
import HTTP
import JSONValue

/// Secure Token refresh (firebase-wire.md §2.10) and session cookies (§2.11).
enum TokenAPI {
    /// `POST /securetoken.googleapis.com/v1/token`, JSON or form body, snake_case response.
    static func refresh(_ ctx: inout Context) throws -> Response {
        let r = try ctx.refreshTokens.refresh(grantType: ctx.string("grantType"), refreshToken: ctx.string("refreshToken"),
                                              project: ctx.project.id, graceSeconds: ctx.project.session.refreshReuseGraceSeconds,
                                              idleTimeoutSeconds: ctx.project.session.refreshIdleTimeoutSeconds,
                                              lifetimeSeconds: ctx.project.session.refreshLifetimeSeconds)
        return .json(.obj(
            ("access_token", r.idToken),
            ("expires_in", String(r.expiresIn)),
            ("token_type", "Bearer"),
            ("refresh_token", r.refreshToken),
            ("id_token", r.idToken),
            ("user_id", r.localID),
            ("project_id", ctx.project.projectNumber)
        ), headers: [("Cache-Control", "no-store")])
    }

    /// `POST /v1/projects/{p}:createSessionCookie` (admin): `{sessionCookie}`.
    static func createSessionCookie(_ ctx: inout Context) throws -> Response {
        let cookie = try ctx.sessions.createSessionCookie(idToken: ctx.string("idToken"), validDuration: ctx.string("validDuration"),
                                                          project: ctx.project.id)
        return .json(.obj(("sessionCookie", cookie)), headers: [("Cache-Control", "no-store")])
    }
}
