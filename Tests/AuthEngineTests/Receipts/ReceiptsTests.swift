import AuthStore
@testable import AuthEngine
import Testing
import TestSupport

/// Delivery receipts: Twilio's signature against vectors computed by Twilio's own Python library
/// (`twilio.request_validator.RequestValidator(token).compute_signature(url, params)`, twilio
/// 9.13.0), its statuses, and a receipt's checks over the real store.
@Suite("Delivery receipts")
struct ReceiptsTests {
    @Test("X-Twilio-Signature: the values Twilio's library computes (its documented example among them)")
    func twilioVectors() {
        let doc = [("CallSid", "CA1234567890ABCDE"), ("Caller", "+12349013030"), ("Digits", "1234"), ("From", "+12349013030"),
                   ("To", "+18005551212")]
        #expect(TwilioSignature.compute(authToken: "12345", url: "https://mycompany.com/myapp.php?foo=1&bar=2", params: doc)
                == "0/KCTR6DLpKmkAf8muzZqo1nDgQ=")
        // The order given does not matter: names are sorted.
        #expect(TwilioSignature.compute(authToken: "12345", url: "https://mycompany.com/myapp.php?foo=1&bar=2", params: doc.reversed())
                == "0/KCTR6DLpKmkAf8muzZqo1nDgQ=")
        let status = [("MessageSid", "SM0123"), ("MessageStatus", "undelivered"), ("ErrorCode", "30003"), ("AccountSid", "AC1"),
                      ("To", "+33612345678"), ("From", "+15005550006"), ("SmsSid", "SM0123")]
        #expect(TwilioSignature.compute(authToken: "tok-é-secret", url: "https://auth.example.com/__/auth/delivery/twilio?p=shop&m=42&n=twilio",
                                        params: status) == "0VPlag3buW+nVz5/CV8SM5yFUao=")
        #expect(TwilioSignature.compute(authToken: "t", url: "https://x.example/cb", params: []) == "h+VXlG2DMUDdQDSNc/utaSnKnfI=")
        #expect(TwilioSignature.verify("0/KCTR6DLpKmkAf8muzZqo1nDgQ=", authToken: "12345", url: "https://mycompany.com/myapp.php?foo=1&bar=2",
                                       params: doc))
        for wrong in [nil, "", "0/KCTR6DLpKmkAf8muzZqo1nDgQ", String(repeating: "A", count: 200)] {
            #expect(!TwilioSignature.verify(wrong, authToken: "12345", url: "https://mycompany.com/myapp.php?foo=1&bar=2", params: doc))
        }
        #expect(!TwilioSignature.verify("0/KCTR6DLpKmkAf8muzZqo1nDgQ=", authToken: "12345", url: "https://mycompany.com/myapp.php?foo=1&bar=3",
                                        params: doc))
    }

    @Test("Twilio's message and call statuses")
    func statuses() {
        #expect(TwilioStatus.state(messageStatus: "queued") == .queued && TwilioStatus.state(messageStatus: "sent") == .sent)
        #expect(TwilioStatus.state(messageStatus: "delivered") == .delivered && TwilioStatus.state(messageStatus: "read") == .delivered)
        #expect(TwilioStatus.state(messageStatus: "undelivered") == .undelivered && TwilioStatus.state(messageStatus: "failed") == .failed)
        #expect(TwilioStatus.state(messageStatus: "receiving") == nil && TwilioStatus.state(messageStatus: "") == nil)
        #expect(TwilioStatus.state(callStatus: "ringing") == .sent && TwilioStatus.state(callStatus: "completed") == .delivered)
        #expect(TwilioStatus.state(callStatus: "no-answer") == .undelivered && TwilioStatus.state(callStatus: "busy") == .undelivered)
        #expect(TwilioStatus.state(callStatus: "failed") == .failed && TwilioStatus.state(callStatus: "answered") == nil)
    }

    @Test("a receipt changes only its provider's message of its project, under the id the provider gave it, forward only")
    func apply() throws {
        let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        let id = try store.enqueue(OutboxMessage(projectID: "p", channel: .voice, recipient: "+33612345678", body: "1, 2", nextAttemptAt: 0,
                                                 createdAt: 0, region: "FR"))
        guard case let .leased(lease) = try store.lease(id: id, now: 0, until: 60_000, maxAttempts: 8) else { Issue.record("no lease"); return }
        #expect(try store.markSent(lease, at: 1, keepBody: false, accepted: ProviderAcceptance(provider: "twilio", messageID: "CA1")))
        let receipts = DeliveryReceipts(store: store, clock: clock, telemetry: .off)
        #expect(try receipts.apply(project: "q", messageID: id, provider: "twilio", providerMessageID: "CA1", state: .delivered, error: nil) == .unknown)
        #expect(try receipts.apply(project: "p", messageID: id, provider: "backup", providerMessageID: "CA1", state: .delivered, error: nil) == .unknown)
        #expect(try receipts.apply(project: "p", messageID: id, provider: "twilio", providerMessageID: "CA2", state: .delivered, error: nil) == .unknown)
        #expect(try receipts.apply(project: "p", messageID: id + 1, provider: "twilio", providerMessageID: nil, state: .delivered, error: nil) == .unknown)
        #expect(try receipts.apply(project: "p", messageID: id, provider: "twilio", providerMessageID: "CA1", state: .undelivered,
                                   error: "30003\u{0}<x>") == .applied)
        #expect(try store.outboxMessage(id: id)?.deliveryError == "30003<x>", "only the printable ASCII of a provider's code is kept")
        #expect(try receipts.apply(project: "p", messageID: id, provider: "twilio", providerMessageID: "CA1", state: .delivered, error: nil) == .replayed)
    }

    @Test("a report that outruns the record of its acceptance is kept; the acceptance then keeps the reported state")
    func earlyReport() throws {
        let store = try SQLStore(path: ":memory:")
        let receipts = DeliveryReceipts(store: store, clock: FixedClock(), telemetry: .off)
        let id = try store.enqueue(OutboxMessage(projectID: "p", channel: .sms, recipient: "+33612345678", body: "c", nextAttemptAt: 0,
                                                 createdAt: 0, fallbackAt: 30_000))
        #expect(try receipts.apply(project: "p", messageID: id, provider: "twilio", providerMessageID: "SM1", state: .delivered, error: nil)
                == .unknown, "not sent yet: no provider has it")
        guard case let .leased(lease) = try store.lease(id: id, now: 0, until: 60_000, maxAttempts: 8) else { Issue.record("no lease"); return }
        #expect(try receipts.apply(project: "p", messageID: id, provider: "twilio", providerMessageID: "SM1", state: .delivered, error: nil)
                == .applied, "being sent: the provider's report comes first")
        #expect(try store.markSent(lease, at: 1, keepBody: false, accepted: ProviderAcceptance(provider: "twilio", messageID: "SM1")))
        let m = try #require(try store.outboxMessage(id: id))
        #expect(m.delivery == .delivered && m.provider == "twilio" && m.providerMessageID == "SM1" && m.fallbackAt == nil)
        #expect(try receipts.apply(project: "p", messageID: id, provider: "backup", providerMessageID: nil, state: .failed, error: nil)
                == .unknown, "once taken, only its provider reports")
    }
}
