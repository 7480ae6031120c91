import AuthCrypto
import AuthEngine
import JSONValue
import TextCoding
#if canImport(Glibc)
import Glibc
#endif

/// A Twilio-compatible API, HTTP basic auth (account SID, auth token); 2xx = taken; 4xx except
/// 408/429 = permanent; anything else is retried (`HTTPOutcome`).
/// - SMS: `POST {base}/2010-04-01/Accounts/{sid}/Messages.json`, `To`, `From` or
///   `MessagingServiceSid`, `Body`.
/// - WhatsApp: the same resource, `whatsapp:` addresses and the approved authentication template
///   (`ContentSid`, per language or the default; `ContentVariables` `{"1": code}`): WhatsApp takes
///   no free text for codes.
/// - Voice: `POST …/Calls.json`, `To`, `From`, `Twiml` saying the row's words twice, slowly, in
///   the person's language.
/// With `status_callback_url` each request names where Twilio reports what became of it
/// (`StatusCallback`, with the project, the message and this provider's name in its query), and
/// the answer's `sid` is the id those reports carry.
struct TwilioSender: MessageSender {
    static let defaultBaseURL = "https://api.twilio.com"

    var name = "twilio"
    let baseURL: String
    let accountSID: String
    let authToken: String
    let from: String?
    let messagingServiceSID: String?
    var whatsappFrom: String? = nil
    var whatsappContentSID: String? = nil
    var whatsappContentSIDs: [String: String] = [:]
    var voiceFrom: String? = nil
    var statusCallbackURL: String? = nil
    let timeout: Int

    var keepsBody: Bool { false }
    var timeLimit: Millis { Millis(timeout) * 1000 }
    var provider: String { name }

    /// WhatsApp needs its sender and an approved template; calls need a number to call from.
    func carries(_ channel: OutboxMessage.Channel) -> Bool {
        switch channel {
        case .whatsapp: whatsappFrom != nil && (whatsappContentSID != nil || !whatsappContentSIDs.isEmpty)
        case .voice: voiceFrom != nil
        default: true
        }
    }

    var url: String { resource("Messages") }

    func resource(_ name: String) -> String {
        "\(baseURL)/2010-04-01/Accounts/\(PercentEncoding.encode(accountSID))/\(name).json"
    }

    /// Where Twilio reports on message `m` (nil without a configured callback URL).
    func statusCallback(_ m: OutboxMessage) -> String? {
        guard let statusCallbackURL else { return nil }
        let separator = statusCallbackURL.contains("?") ? "&" : "?"
        return statusCallbackURL + separator + PercentEncoding.query([("p", m.projectID), ("m", String(m.id)), ("n", name)])
    }

    /// The form body of message `m` on its channel.
    func formBody(_ m: OutboxMessage) throws -> [UInt8] {
        var pairs: [(String, String)]
        switch m.channel {
        case .whatsapp:
            guard let whatsappFrom else { throw PermanentDeliveryError("\(name): no whatsapp_from configured") }
            let language = m.language ?? "en"
            guard let content = whatsappContentSIDs[language] ?? whatsappContentSID else {
                throw PermanentDeliveryError("\(name): no whatsapp_content_sid configured")
            }
            pairs = [("To", "whatsapp:" + m.recipient), ("From", "whatsapp:" + whatsappFrom), ("ContentSid", content),
                     ("ContentVariables", JSON.obj(("1", m.body)).serialized())]
        case .voice:
            guard let voiceFrom else { throw PermanentDeliveryError("\(name): no voice_from configured") }
            pairs = [("To", m.recipient), ("From", voiceFrom), ("Twiml", TwilioSender.twiml(m.body, language: m.language))]
        default:
            pairs = [("To", m.recipient)]
            if let from { pairs.append(("From", from)) } else if let messagingServiceSID { pairs.append(("MessagingServiceSid", messagingServiceSID)) }
            pairs.append(("Body", m.body))
        }
        if let callback = statusCallback(m) {
            pairs.append(("StatusCallback", callback))
            if m.channel == .voice {
                pairs.append(("StatusCallbackEvent", "initiated ringing answered completed"))
                pairs.append(("StatusCallbackMethod", "POST"))
            }
        }
        return Array(PercentEncoding.query(pairs).utf8)
    }

    /// A voice's languages: the pages' five, in the regional form Twilio's voices take.
    static let voiceLanguages = ["en": "en-US", "fr": "fr-FR", "de": "de-DE", "pt": "pt-BR", "id": "id-ID"]

    /// The call's words said twice with a pause between; the digits come spaced by commas, which
    /// every voice says one by one, slowly. `words` is XML text already (the voice row's body is
    /// escaped when it is composed: `CodeMessages`).
    static func twiml(_ words: String, language: String?) -> String {
        let say = "<Say language=\"\(voiceLanguages[language ?? "en"] ?? "en-US")\">\(words)</Say>"
        return "<Response>" + say + "<Pause length=\"2\"/>" + say + "</Response>"
    }

    func send(_ m: OutboxMessage) throws { _ = try deliver(m) }

    func deliver(_ m: OutboxMessage) throws -> ProviderAcceptance? {
        let credentials = Base64URL.encodeStandard(Array("\(accountSID):\(authToken)".utf8))
        let response = try HTTPOutcome.post(m.channel == .voice ? resource("Calls") : url, headers: [
            "Authorization: Basic \(credentials)",
            "Content-Type: application/x-www-form-urlencoded",
            "Accept: application/json",
        ], body: try formBody(m), timeout: timeout, provider: name)
        // The answer's `sid` names the message in Twilio's reports; an answer without one still
        // means the message was taken.
        let sid = (try? JSONParser().parse(response.body))?["sid"]?.stringValue.flatMap { $0.utf8.count <= 64 ? $0 : nil }
        return ProviderAcceptance(provider: name, messageID: sid)
    }
}
