import AuthEngine
import HTTP

/// The app verification page (firebase-wire.md §4.4, gatehouse.md "App verification page"):
/// `GET /__/auth/handler?apiKey=…&authType=verifyApp&ibi=…|apn=…&eventId=…&clientId=…|appId=…[&hl=…]`
/// checks the request against the project's registered apps and renders the page that solves
/// the challenge (`public/pow.js`) and returns to the app; `GET /__/auth/callback` is the small
/// page named inside the app's redirect (iOS never fetches it).
enum VerifyAppPage {
    /// The `firebaseError` a failed or abandoned verification returns to the app.
    static let failureCode = "auth/captcha-check-failed"
    static let failureMessage = "App verification could not be completed."

    static func handler(_ ctx: inout Context) throws -> Response {
        let q = ctx.request
        guard q.query("authType") == AppCallback.authType else { return problemPage(ctx, "unsupportedAuthType") }
        guard let apiKey = q.query("apiKey"), !apiKey.isEmpty, apiKey.utf8.count <= 200,
              let project = ctx.app.settings.project(apiKey: apiKey) else {
            return problemPage(ctx, "invalidAPIKey")
        }
        ctx.project = project
        ctx.apiKey = apiKey
        let callback: AppCallback
        do {
            callback = try AppCallback.resolve(project: project, ibi: q.query("ibi"), apn: q.query("apn"), clientID: q.query("clientId"),
                                               appID: q.query("appId"), eventID: q.query("eventId"))
        } catch {
            return problemPage(ctx, error.rawValue)
        }
        let policy = project.appVerification
        let values: [String: TemplateValue] = [
            "apiKey": .string(apiKey), "eventId": .string(callback.eventID),
            "ibi": .string(q.query("ibi") ?? ""), "apn": .string(q.query("apn") ?? ""),
            "clientId": .string(q.query("clientId") ?? ""), "appId": .string(q.query("appId") ?? ""),
            "provider": .string(policy.provider.rawValue), "siteKey": .string(policy.siteKey ?? ""),
            "external": .bool(policy.provider != .pow),
            "failureURL": .string(callback.failureURL(authority: AppVerificationAPI.authority(ctx.origin), code: failureCode, message: failureMessage)),
        ]
        var response = Response.html(ctx.app.templates.render("pages/verify-app", ctx: ctx, values: values))
        if let csp = contentSecurityPolicy(for: policy.provider) { response.setHeader("Content-Security-Policy", csp) }
        return response
    }

    /// Never fetched by iOS (only its URL matters); a browser that lands here learns the outcome.
    /// The token is not echoed.
    static func callback(_ ctx: inout Context) throws -> Response {
        let failed = ctx.request.query("firebaseError") != nil || ctx.request.query("recaptchaToken") == nil
        return .html(ctx.app.templates.render("pages/verify-callback", ctx: ctx, values: ["failed": .bool(failed)]))
    }

    /// A localized error page that redirects nowhere.
    static func problemPage(_ ctx: Context, _ problem: String) -> Response {
        let strings = ctx.app.templates.locales.strings(for: ctx.locale)
        let message = strings["verify.error." + problem] ?? strings["error.generic"] ?? "Something went wrong."
        return .html(ctx.app.templates.render("pages/verify-error", ctx: ctx, values: ["message": .string(message)]), status: 400)
    }

    /// English detail for the API's `INVALID_ARGUMENT` when the handler parameters are refused.
    static func problemDetail(_ problem: AppCallback.Problem) -> String {
        switch problem {
        case .unsupportedAuthType: return "authType must be verifyApp."
        case .invalidEventID: return "eventId is missing or malformed."
        case .missingApp: return "ibi or apn is required."
        case .unknownApp: return "The app is not registered for this project."
        case .missingClientIdentifier: return "clientId or appId is required."
        case .unregisteredScheme: return "The callback scheme is not registered for this app."
        }
    }

    /// The page CSP, widened for the external widget's script and frames when one is configured.
    static func contentSecurityPolicy(for provider: AppVerificationPolicy.Provider) -> String? {
        let sources: (script: String, frame: String, extra: String)
        switch provider {
        case .pow: return nil
        case .recaptcha:
            sources = ("https://www.google.com/recaptcha/ https://www.gstatic.com/recaptcha/",
                       "https://www.google.com/recaptcha/ https://recaptcha.google.com/recaptcha/", "")
        case .hcaptcha:
            sources = ("https://js.hcaptcha.com https://*.hcaptcha.com", "https://*.hcaptcha.com", "https://*.hcaptcha.com")
        case .turnstile:
            sources = ("https://challenges.cloudflare.com", "https://challenges.cloudflare.com", "")
        }
        return "default-src 'self'; script-src 'self' \(sources.script); style-src 'self' \(sources.extra); img-src 'self' data:; "
            + "frame-src \(sources.frame); connect-src 'self' \(sources.extra); worker-src 'self' blob:; frame-ancestors 'none'; "
            + "form-action 'self'; base-uri 'none'; object-src 'none'"
    }
}
