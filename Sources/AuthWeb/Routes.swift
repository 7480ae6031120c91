import AuthEngine
import HTTP

/// One route: its guards, whether it renders pages or wire JSON, and its handler.
struct Route {
    enum Kind { case api, page }
    let kind: Kind
    let guards: Guards
    let handler: (inout Context) throws -> Response
}

/// THE route table: every path Gatehouse answers, with its guards, on one screen.
enum RouteTable {
    static let itk = "/identitytoolkit.googleapis.com/v1"
    static let legacy = "/www.googleapis.com/identitytoolkit/v3/relyingparty"

    static func build() -> Router<Route> {
        var r = Router<Route>()
        func api(_ m: String, _ p: String, _ g: Guards, _ h: @escaping (inout Context) throws -> Response) {
            r.add(m, p, Route(kind: .api, guards: g, handler: h))
        }
        func page(_ m: String, _ p: String, _ g: Guards, _ h: @escaping (inout Context) throws -> Response) {
            r.add(m, p, Route(kind: .page, guards: g, handler: h))
        }

        // Health and discovery
        api("GET", "/", [], HealthAPI.root)
        api("GET", "/__/auth/health", [], HealthAPI.health)

        // Public keys (firebase-wire.md §3.5)
        api("GET", "/.well-known/jwks.json", [], KeysAPI.jwks)
        api("GET", "/.well-known/openid-configuration", [], KeysAPI.openIDConfiguration)
        api("GET", "/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com", [], KeysAPI.x509)
        api("GET", "/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com", [], KeysAPI.jwks)
        api("GET", "\(legacy)/publicKeys", [], KeysAPI.x509)
        api("GET", "\(itk)/sessionCookiePublicKeys", [], KeysAPI.jwks)

        return r
    }
}
