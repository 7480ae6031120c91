import AuthCrypto
import AuthEngine
import HTTP
import JSONValue

/// Public signing keys: JWKS (RFC 7517), OpenID discovery, and the Google-shaped x509 / JWK
/// endpoints of firebase-wire.md §3.5, all with `Cache-Control: public, max-age=3600`.
enum KeysAPI {
    static let cacheControl = ("Cache-Control", "public, max-age=3600")

    static let jsonType = ("Content-Type", "application/json; charset=utf-8")

    /// The serialized key set, built once per set of published keys (`KeyRing.derived`).
    static func jwks(_ ctx: inout Context) throws -> Response {
        let body = try ctx.app.keyRing.derived("jwks", store: ctx.store) { keys in
            let jwks: [JSON] = try keys.map { k in
                .obj(("kty", "RSA"), ("alg", "RS256"), ("use", "sig"), ("kid", k.record.kid),
                     ("n", Base64URL.encode(try k.publicKey.modulus())), ("e", Base64URL.encode(try k.publicKey.exponent())))
            }
            return JSON.obj(("keys", JSON.array(jwks))).bytes
        }
        return Response(status: 200, headers: [jsonType, cacheControl], body: body)
    }

    static func x509(_ ctx: inout Context) throws -> Response {
        let body = try ctx.app.keyRing.derived("x509", store: ctx.store) { keys in
            JSON.object(keys.map { ($0.record.kid, .string($0.record.certificatePEM)) }).bytes
        }
        return Response(status: 200, headers: [jsonType, cacheControl], body: body)
    }

    static func openIDConfiguration(_ ctx: inout Context) throws -> Response {
        let issuer = "https://securetoken.google.com/\(ctx.project.id)"
        return .json(.obj(
            ("issuer", issuer),
            ("jwks_uri", ctx.origin + "/.well-known/jwks.json"),
            ("response_types_supported", ["id_token"]),
            ("subject_types_supported", ["public"]),
            ("id_token_signing_alg_values_supported", ["RS256"]),
            ("claims_supported", ["iss", "aud", "sub", "iat", "exp", "auth_time", "user_id", "email", "email_verified", "phone_number", "firebase"])
        ), headers: [cacheControl])
    }
}

/// `GET /__/auth/health`: version, mode and database status (200, or 503 if the store fails).
enum HealthAPI {
    static func health(_ ctx: inout Context) throws -> Response {
        do {
            let version = try ctx.store.probe()
            let keys = try ctx.app.keyRing.keys(store: ctx.store).count
            return .json(.obj(("status", "ok"), ("version", ctx.app.settings.version), ("mode", ctx.app.settings.devMode ? "dev" : "production"),
                              ("database", JSON.obj(("status", "ok"), ("schemaVersion", version))), ("signingKeys", keys)),
                         headers: [("Cache-Control", "no-store")])
        } catch {
            ctx.app.log.error("health: store failed: \(error)", requestID: ctx.request.logID)
            return .json(.obj(("status", "unavailable"), ("version", ctx.app.settings.version), ("mode", ctx.app.settings.devMode ? "dev" : "production"),
                              ("database", JSON.obj(("status", "error")))), status: 503, headers: [("Cache-Control", "no-store")])
        }
    }

    /// `GET /`: the emulator's readiness probe shape (firebase-wire.md §1.6).
    static func root(_ ctx: inout Context) throws -> Response {
        .json(.obj(("authEmulator", JSON.obj(("ready", true), ("docs", "https://firebase.google.com/docs/emulator-suite"),
                                               ("apiSpec", "/emulator/openapi.json")))))
    }
}
