import AuthEngine
#if canImport(Glibc)
import Glibc
#endif

/// The sign-in and verification emails: subject, plain text and HTML from the per-locale strings
/// (`locales/<lang>/email.json`, `email.mail.*`) and the templates `email/message_text` and
/// `email/message_html`. Subject and body carry the request time so that consecutive emails do
/// not collapse into one thread (firebase-wire.md §5.2 item 11). A sign-in request bound to a
/// browser or an app also carries its short code beside the link (`EmailLinks` short codes).
enum EmailMessages {
    static func compose(_ input: OobMessageInput, templates: Templates) -> OobMessage {
        let strings = templates.locales.strings(for: input.lang)
        let kind = input.requestType == .verifyEmail ? "verify" : "signin"
        let time = timestamp(input.issuedAt)
        func text(_ key: String) -> String {
            var s = strings["email.mail.\(kind)_\(key)"] ?? strings["email.mail.\(key)"] ?? ""
            for (k, v) in [("{project}", input.projectID), ("{email}", input.recipient), ("{time}", time),
                           ("{minutes}", String(input.lifetimeMinutes)), ("{code_minutes}", String(input.codeMinutes))] {
                s = s.replacing(k, with: v)
            }
            return s
        }
        let m: [String: String] = [
            "heading": text("heading"), "intro": text("intro"), "button": text("button"), "fallback": text("fallback"),
            "expiry": text("expiry"), "ignore": text("ignore"), "requested": text("requested"), "footer": text("footer"),
            "code_intro": text("code_intro"), "code_expiry": text("code_expiry"),
        ]
        var values: [String: TemplateValue] = ["m": TemplateValue(m), "link": .string(input.link), "email": .string(input.recipient),
                                               "project": .string(input.projectID)]
        if let code = input.code { values["code"] = .string(code) }
        return OobMessage(subject: text("subject"),
                          text: templates.render("email/message_text", lang: input.lang, values: values),
                          html: templates.render("email/message_html", lang: input.lang, values: values))
    }

    /// `2026-11-22 01:59:44 UTC`
    static func timestamp(_ ms: Millis) -> String {
        var t = time_t(ms / 1000)
        var tm = tm()
        gmtime_r(&t, &tm)
        func pad(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(tm.tm_year + 1900)-\(pad(tm.tm_mon + 1))-\(pad(tm.tm_mday)) \(pad(tm.tm_hour)):\(pad(tm.tm_min)):\(pad(tm.tm_sec)) UTC"
    }
}
