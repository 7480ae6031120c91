/// A provider that reports what became of its messages: its configured name (which the message
/// rows record), its kind (`twilio` or `webhook`), the secret its reports are signed with (Twilio's
/// auth token, the webhook's own secret), and the public URL they are posted to, exactly as the
/// provider was told it (Twilio signs that URL).
public struct ReceiptSource: Sendable, Equatable {
    public var name: String
    public var kind: String
    public var secret: String
    public var callbackURL: String
    public init(name: String, kind: String, secret: String, callbackURL: String) {
        self.name = name; self.kind = kind; self.secret = secret; self.callbackURL = callbackURL
    }
}
