import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
import JSONValue

/// The `smtp` transport's settings: `url` (`smtp://host[:port]` with STARTTLS, or `smtps://` with
/// implicit TLS), optional `username` + `password` (or `password_env`), `starttls`.
struct SMTPConfig {
    let url: String
    let username: String?
    let password: String?
    /// Require STARTTLS on `smtp://` (default: on, except for a loopback host).
    let requireTLS: Bool
    let timeout: Int

    init(_ config: JSON, environment: [String: String]) throws {
        guard let url = config["url"]?.stringValue else { throw PermanentDeliveryError("email.url: required") }
        self.url = url
        username = config["username"]?.stringValue
        password = config["password"]?.stringValue ?? config["password_env"]?.stringValue.flatMap { environment[$0] }
        let implicit = url.lowercased().hasPrefix("smtps://")
        requireTLS = implicit || (config["starttls"]?.boolValue ?? !SMTPConfig.isLoopback(url))
        timeout = config["timeout_seconds"]?.int64Value.map(Int.init) ?? 20
    }

    /// Host of an `smtp(s)://` URL.
    static func host(_ url: String) -> String? {
        guard let sep = url.firstRange(of: "://") else { return nil }
        var authority = String(url[sep.upperBound...].prefix { $0 != "/" && $0 != "?" })
        if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
        if authority.hasPrefix("[") { return authority.split(separator: "]").first.map { String($0.dropFirst()) } }
        return authority.split(separator: ":").first.map(String.init)
    }

    static func isLoopback(_ url: String) -> Bool {
        guard let h = host(url)?.lowercased() else { return false }
        return h == "localhost" || h == "::1" || h.hasPrefix("127.")
    }

    static func problems(_ config: JSON, environment: [String: String]) -> [String] {
        var out: [String] = []
        if let url = config["url"]?.stringValue {
            let lower = url.lowercased()
            if !(lower.hasPrefix("smtp://") || lower.hasPrefix("smtps://")) { out.append("email.url: expected smtp://host[:port] or smtps://host[:port]") }
            else if (host(url) ?? "").isEmpty { out.append("email.url: no host in '\(url)'") }
            if url.contains("@") { out.append("email.url: put credentials in email.username and email.password, not in the URL") }
        } else { out.append("email.url: required for the smtp transport (smtp://host:587 or smtps://host:465)") }
        for k in ["username", "password", "password_env"] where config[k] != nil && config[k]?.stringValue == nil {
            out.append("email.\(k): expected a string")
        }
        if config["password"] != nil && config["password_env"] != nil { out.append("email.password, email.password_env: set only one") }
        if let name = config["password_env"]?.stringValue, environment[name] == nil {
            out.append("email.password_env: the environment variable \(name) is not set")
        }
        if (config["password"] != nil || config["password_env"] != nil) && config["username"] == nil {
            out.append("email.username: required when a password is set")
        }
        if let s = config["starttls"], s.boolValue == nil { out.append("email.starttls: expected true or false") }
        return out
    }
}

/// Sends outbox email over SMTP through libcurl (one connection per message). A recipient the
/// server refuses with a 5xx reply (no such mailbox, bad address) is a permanent failure; every
/// other failure (4xx, network, timeout, a refused sender or login, which the operator can fix)
/// is retried by the worker.
struct SMTPTransport: MessageSender {
    let settings: EmailSenderSettings
    let config: SMTPConfig

    var keepsBody: Bool { false }
    var timeLimit: Millis { Millis(config.timeout) * 1000 }

    func send(_ m: OutboxMessage) throws {
        let message = settings.mime(for: m).rendered()
        let curl = try Curl()
        do {
            try curl.smtp(url: config.url, from: settings.from, to: [m.recipient], message: message,
                          username: config.username, password: config.password, requireTLS: config.requireTLS, timeout: config.timeout)
        } catch let e as CurlError where SMTPTransport.refusesRecipient(e) {
            throw PermanentDeliveryError("smtp: recipient refused: \(e)")
        }
    }

    /// libcurl reports a refused `RCPT TO` as "RCPT failed: <reply>".
    static func refusesRecipient(_ e: CurlError) -> Bool {
        (500..<600).contains(e.reply) && e.message.contains("RCPT")
    }
}
