public import AuthEngine
#if canImport(Glibc)
import Glibc
#endif
public import JSONValue

/// Email transports, chosen by the configuration's `email.transport` (docs/configuration-email.md):
/// `dev` (log + dev outbox), `smtp` (libcurl; STARTTLS or implicit TLS; AUTH), `sendmail`
/// (a sendmail-compatible command reading the message on stdin).
public enum EmailTransports {
    public static let transports = ["dev", "smtp", "sendmail"]
    static let commonKeys: Set<String> = ["transport", "from", "from_name", "$comment"]
    static let smtpKeys: Set<String> = ["url", "username", "password", "password_env", "starttls", "timeout_seconds"]
    static let sendmailKeys: Set<String> = ["command", "timeout_seconds"]

    public static func make(_ config: JSON, environment: [String: String] = Platform.environment(), log: Log = Log()) throws -> any MessageSender {
        let found = problems(config, environment: environment)
        if let first = found.first { throw PermanentDeliveryError(first) }
        switch config["transport"]?.stringValue ?? "dev" {
        case "smtp": return SMTPTransport(settings: try EmailSenderSettings(config), config: try SMTPConfig(config, environment: environment))
        case "sendmail": return SendmailTransport(settings: try EmailSenderSettings(config), command: SendmailTransport.command(config),
                                                  timeout: config["timeout_seconds"]?.int64Value.map(Int.init) ?? 20)
        default: return DevSender(log: log)
        }
    }

    /// Every problem of the `email` section, worded for `gatehouse config check`.
    public static func problems(_ config: JSON, environment: [String: String] = Platform.environment()) -> [String] {
        guard case let .object(pairs) = config else { return ["email: expected an object"] }
        let transport = config["transport"]?.stringValue ?? "dev"
        guard transports.contains(transport) else {
            return ["email.transport: unknown transport '\(transport)' (expected dev, smtp or sendmail)"]
        }
        var out: [String] = []
        let allowed = commonKeys.union(transport == "smtp" ? smtpKeys : transport == "sendmail" ? sendmailKeys : [])
        for (k, _) in pairs where !allowed.contains(k) { out.append("email.\(k): unknown key for the \(transport) transport") }
        for k in ["from", "from_name"] where config[k] != nil && config[k]?.stringValue == nil { out.append("email.\(k): expected a string") }
        if transport != "dev" {
            if let from = config["from"]?.stringValue {
                if EmailAddress.validated(from) == nil { out.append("email.from: '\(from)' is not an email address") }
            } else { out.append("email.from: required for the \(transport) transport") }
        }
        if let t = config["timeout_seconds"], !(t.int64Value.map { (1...300).contains($0) } ?? false) {
            out.append("email.timeout_seconds: expected an integer in 1…300")
        }
        if transport == "smtp" { out += SMTPConfig.problems(config, environment: environment) }
        if transport == "sendmail" { out += SendmailTransport.problems(config) }
        return out
    }
}

/// The sender identity every real transport puts in `From`.
struct EmailSenderSettings {
    let from: String
    let fromName: String?

    init(_ config: JSON) throws {
        guard let from = config["from"]?.stringValue else { throw PermanentDeliveryError("email.from: required") }
        self.from = from
        fromName = config["from_name"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The MIME message for an outbox email. The Message-ID is stable across retries.
    func mime(for m: OutboxMessage, now: Int64 = Platform.now()) -> MIMEMessage {
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        return MIMEMessage(fromAddress: from, fromName: fromName, to: m.recipient, subject: m.subject ?? "", text: m.body,
                           html: m.htmlBody, date: now, messageID: "gatehouse.\(m.id).\(m.createdAt)@\(domain)")
    }
}
