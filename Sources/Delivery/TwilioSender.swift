import AuthCrypto
import AuthEngine
import TextCoding
#if canImport(Glibc)
import Glibc
#endif

/// A Twilio-compatible Messages resource: `POST {base}/2010-04-01/Accounts/{sid}/Messages.json`,
/// HTTP basic auth (account SID, auth token), form body `To`, `From` or `MessagingServiceSid`,
/// `Body`. 2xx = sent; 4xx except 408/429 = permanent; anything else is retried.
struct TwilioSender: MessageSender {
    static let defaultBaseURL = "https://api.twilio.com"

    let baseURL: String
    let accountSID: String
    let authToken: String
    let from: String?
    let messagingServiceSID: String?
    let timeout: Int

    var keepsBody: Bool { false }
    var timeLimit: Millis { Millis(timeout) * 1000 }

    var url: String {
        "\(baseURL)/2010-04-01/Accounts/\(PercentEncoding.encode(accountSID))/Messages.json"
    }

    func formBody(_ m: OutboxMessage) -> [UInt8] {
        var pairs = [("To", m.recipient)]
        if let from { pairs.append(("From", from)) } else if let messagingServiceSID { pairs.append(("MessagingServiceSid", messagingServiceSID)) }
        pairs.append(("Body", m.body))
        return Array(PercentEncoding.query(pairs).utf8)
    }

    func send(_ m: OutboxMessage) throws {
        let credentials = Base64URL.encodeStandard(Array("\(accountSID):\(authToken)".utf8))
        try HTTPOutcome.post(url, headers: [
            "Authorization: Basic \(credentials)",
            "Content-Type: application/x-www-form-urlencoded",
            "Accept: application/json",
        ], body: formBody(m), timeout: timeout, provider: "twilio")
    }
}
