import AuthEngine
@testable import Delivery
import JSONValue
import Testing
import TestSupport

/// What the phone providers put on the wire for WhatsApp and calls, the callback they name, and
/// what they answer the worker (the provider's name and its id for the message). The expected
/// forms were percent-encoded apart from the code under test (RFC 3986 unreserved kept).
@Suite("Phone providers: WhatsApp, calls and status callbacks")
struct PhoneRequestShapeTests {
    static let callback = "https://auth.example.com/__/auth/delivery/twilio"

    static func message(_ channel: OutboxMessage.Channel, body: String, language: String? = nil) -> OutboxMessage {
        var m = OutboxMessage(id: 7, projectID: "demo-p", channel: channel, recipient: "+33612345678", body: body, nextAttemptAt: 0, createdAt: 0)
        m.language = language
        return m
    }

    /// Sends `message` with the sender made for the fake's port; returns what the fake saw and
    /// what the sender answered.
    func capture(_ message: OutboxMessage, answer: String = #"{"sid":"SM0123456789abcdef","status":"queued"}"#,
                 _ sender: (UInt16) throws -> any MessageSender) throws -> (SeenRequest, ProviderAcceptance?) {
        let seen = Shared<[SeenRequest]>([])
        let provider = try FakeProvider.recording(status: 201, answer: answer, into: seen)
        defer { provider.close() }
        let accepted = try sender(provider.port).deliver(message)
        #expect(seen.value.count == 1)
        return (try #require(seen.value.first), accepted)
    }

    func twilio(_ port: UInt16, name: String = "twilio") -> TwilioSender {
        TwilioSender(name: name, baseURL: "http://127.0.0.1:\(port)", accountSID: "AC0123", authToken: "secret-token", from: "+15550001111",
                     messagingServiceSID: nil, whatsappFrom: "+15550002222", whatsappContentSID: "HXdefault",
                     whatsappContentSIDs: ["fr": "HXfr"], voiceFrom: "+15550003333", statusCallbackURL: Self.callback, timeout: 5)
    }

    @Test("SMS: StatusCallback names the project, the message and the provider; the answer's sid is the message's id there")
    func smsCallback() throws {
        let (r, accepted) = try capture(Self.message(.sms, body: "Your code is 123456")) { twilio($0) }
        #expect(r.requestLine == "POST /2010-04-01/Accounts/AC0123/Messages.json HTTP/1.1")
        #expect(r.text == "To=%2B33612345678&From=%2B15550001111&Body=Your%20code%20is%20123456"
            + "&StatusCallback=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Fdelivery%2Ftwilio%3Fp%3Ddemo-p%26m%3D7%26n%3Dtwilio")
        #expect(accepted?.provider == "twilio" && accepted?.messageID == "SM0123456789abcdef")
    }

    @Test("an answer without a usable sid still means taken, with no id; no callback configured, no StatusCallback")
    func answerWithoutSid() throws {
        for answer in ["{}", "not json", #"{"sid": 12}"#, #"{"sid":""# + String(repeating: "x", count: 65) + #""}"#] {
            let (r, accepted) = try capture(Self.message(.sms, body: "x"), answer: answer) { port in
                TwilioSender(baseURL: "http://127.0.0.1:\(port)", accountSID: "AC1", authToken: "t", from: "+15550001111",
                             messagingServiceSID: nil, timeout: 5)
            }
            #expect(!r.text.contains("StatusCallback"))
            #expect(accepted?.provider == "twilio" && accepted?.messageID == nil, "\(answer)")
        }
    }

    @Test("WhatsApp: whatsapp: addresses, the person's language's template (else the default), the code as variable 1 in JSON")
    func whatsapp() throws {
        let (fr, accepted) = try capture(Self.message(.whatsapp, body: "123456", language: "fr")) { twilio($0, name: "primary") }
        #expect(fr.requestLine == "POST /2010-04-01/Accounts/AC0123/Messages.json HTTP/1.1")
        #expect(fr.text == "To=whatsapp%3A%2B33612345678&From=whatsapp%3A%2B15550002222&ContentSid=HXfr"
            + "&ContentVariables=%7B%221%22%3A%22123456%22%7D"
            + "&StatusCallback=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Fdelivery%2Ftwilio%3Fp%3Ddemo-p%26m%3D7%26n%3Dprimary")
        #expect(accepted?.provider == "primary")
        let (de, _) = try capture(Self.message(.whatsapp, body: "654321", language: "de")) { twilio($0) }
        #expect(de.text.contains("&ContentSid=HXdefault&"))
        let (none, _) = try capture(Self.message(.whatsapp, body: "654321")) { twilio($0) }
        #expect(none.text.contains("&ContentSid=HXdefault&") && !none.text.contains("Body="))
    }

    @Test("voice: Calls.json, TwiML saying the (already XML) words twice in the person's language, every call event reported")
    func voice() throws {
        let words = "Votre code : 1, 2, 3. &amp; fin"
        let (r, accepted) = try capture(Self.message(.voice, body: words, language: "fr"),
                                        answer: #"{"sid":"CA0123456789abcdef","status":"queued"}"#) { twilio($0) }
        #expect(r.requestLine == "POST /2010-04-01/Accounts/AC0123/Calls.json HTTP/1.1")
        #expect(r.header("authorization") == "Basic QUMwMTIzOnNlY3JldC10b2tlbg==")
        #expect(r.text == "To=%2B33612345678&From=%2B15550003333&Twiml=%3CResponse%3E%3CSay%20language%3D%22fr-FR%22%3EVotre%20code%20%3A%201%2C%202%2C"
            + "%203.%20%26amp%3B%20fin%3C%2FSay%3E%3CPause%20length%3D%222%22%2F%3E%3CSay%20language%3D%22fr-FR%22%3EVotre%20code%20%3A%201%2C%202%2C"
            + "%203.%20%26amp%3B%20fin%3C%2FSay%3E%3C%2FResponse%3E"
            + "&StatusCallback=https%3A%2F%2Fauth.example.com%2F__%2Fauth%2Fdelivery%2Ftwilio%3Fp%3Ddemo-p%26m%3D7%26n%3Dtwilio"
            + "&StatusCallbackEvent=initiated%20ringing%20answered%20completed&StatusCallbackMethod=POST")
        #expect(accepted?.messageID == "CA0123456789abcdef")
    }

    @Test("voice languages: the pages' five in Twilio's regional form; another, or none, in English", arguments: [
        ("en", "en-US"), ("fr", "fr-FR"), ("de", "de-DE"), ("pt", "pt-BR"), ("id", "id-ID"), ("es", "en-US"), (nil, "en-US"),
    ] as [(String?, String)])
    func voiceLanguages(language: String?, voice: String) {
        let twiml = TwilioSender.twiml("1, 2", language: language)
        #expect(twiml == "<Response><Say language=\"\(voice)\">1, 2</Say><Pause length=\"2\"/><Say language=\"\(voice)\">1, 2</Say></Response>")
    }

    @Test("what each provider carries: WhatsApp needs its sender and a template, calls a number; a command, texts only")
    func carries() throws {
        let full = twilio(1)
        #expect(full.carries(.sms) && full.carries(.whatsapp) && full.carries(.voice))
        let texts = TwilioSender(baseURL: "http://x", accountSID: "A", authToken: "t", from: "+1", messagingServiceSID: nil, timeout: 5)
        #expect(texts.carries(.sms) && !texts.carries(.whatsapp) && !texts.carries(.voice))
        let noTemplate = TwilioSender(baseURL: "http://x", accountSID: "A", authToken: "t", from: "+1", messagingServiceSID: nil,
                                      whatsappFrom: "+1", timeout: 5)
        #expect(!noTemplate.carries(.whatsapp))
        #expect(CommandSender(path: "/bin/true", timeout: 1).carries(.sms) && !CommandSender(path: "/bin/true", timeout: 1).carries(.voice))
        let webhook = WebhookSender(url: "http://x", secret: "0123456789abcdef", timeout: 5)
        #expect(webhook.carries(.whatsapp) && webhook.carries(.voice))
    }

    @Test("the configured name is the provider everywhere: metrics, the acceptance, the callback's n")
    func names() throws {
        let sender = try SMSProviders.make(JSON.obj(("provider", "twilio"), ("name", "tw-eu"), ("account_sid", "A"), ("auth_token", "t"),
                                                    ("from", "+15550001111")))
        #expect(sender.provider == "tw-eu")
        #expect(try SMSProviders.make(JSON.obj(("provider", "command"), ("command", "/bin/true"), ("name", "gsm"))).provider == "gsm")
        #expect(try SMSProviders.make(JSON.obj(("provider", "webhook"), ("url", "http://x/"), ("secret", "0123456789abcdef"))).provider == "webhook")
        #expect(try SMSProviders.make(JSON.obj(("provider", "dev"))).provider == "dev")
    }

    @Test("webhook: the payload names the channel, the language and where to report; the acceptance is the outbox id")
    func webhookPayload() throws {
        let (r, accepted) = try capture(Self.message(.voice, body: "1, 2, 3", language: "pt")) { port in
            WebhookSender(name: "gw", url: "http://127.0.0.1:\(port)/send", secret: "0123456789abcdef0123",
                          statusCallbackURL: "https://auth.example.com/__/auth/delivery/webhook", timeout: 5, clock: FixedClock())
        }
        #expect(r.text == #"{"to":"+33612345678","body":"1, 2, 3","project":"demo-p","id":"7","channel":"voice","language":"pt","#
            + #""status_callback":"https://auth.example.com/__/auth/delivery/webhook"}"#)
        #expect(accepted?.provider == "gw" && accepted?.messageID == "7")
    }
}
