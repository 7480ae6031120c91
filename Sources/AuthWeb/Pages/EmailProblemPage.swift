import AuthEngine
import HTTP

/// The localized pages for links that cannot be used (invalid, used, expired, …), each with a
/// way to ask for a new link. They redirect nowhere.
extension EmailPages {
    enum Problem: String {
        case invalid, used, expired, unsupported, tries, disabled
        case continueNotAllowed = "continue"
        case notAllowed = "not_allowed"

        var status: Int {
            switch self {
            case .used, .expired: return 410
            case .tries: return 429
            case .disabled, .notAllowed: return 403
            default: return 400
            }
        }

        /// Whether asking for a new link can help.
        var offersNewLink: Bool { self != .continueNotAllowed && self != .disabled && self != .notAllowed && self != .unsupported }
    }

    static func problem(_ ctx: Context, _ p: Problem, continueURL: String?) -> Response {
        let s = ctx.strings
        let title: String, body: String
        if p == .notAllowed {
            (title, body) = (s["error.title"] ?? "", s["email.page.error_not_allowed"] ?? "")
        } else {
            (title, body) = (s["email.page.problem_\(p.rawValue)_title"] ?? "", s["email.page.problem_\(p.rawValue)_body"] ?? "")
        }
        var values: [String: TemplateValue] = ["title": .string(title), "body": .string(body), "kind": .string(p.rawValue), "needsAppToken": false]
        if p.offersNewLink { values["newLink"] = .string(requestPageURL(ctx, continueURL: continueURL)) }
        return .html(ctx.app.templates.render("pages/action_problem", ctx: ctx, values: values), status: p.status)
    }

    /// The page for an engine error met while completing a link.
    static func problem(_ ctx: Context, for error: AuthError, continueURL: String?) -> Response? {
        switch error.code {
        case .invalidOobCode: return problem(ctx, .used, continueURL: continueURL)
        case .expiredOobCode: return problem(ctx, .expired, continueURL: continueURL)
        case .tooManyAttempts: return problem(ctx, .tries, continueURL: continueURL)
        case .userDisabled: return problem(ctx, .disabled, continueURL: continueURL)
        case .operationNotAllowed: return problem(ctx, .notAllowed, continueURL: continueURL)
        default: return nil
        }
    }
}
