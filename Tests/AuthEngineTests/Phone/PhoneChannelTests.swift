import AuthStore
@testable import AuthEngine
import Testing

/// Phone codes by WhatsApp and voice, their weight on the budgets, and the automatic fallback.
@Suite("Phone sign-in: channels and the automatic fallback")
struct PhoneChannelTests {
    let number = "+33612345678"

    func fixture(channels: [PhoneChannel] = [.sms, .whatsapp, .voice], after: Int64 = 30) throws -> PhoneFixture {
        try PhoneFixture { p in
            p.phone.channels = channels
            p.phone.fallbackAfterSeconds = after
        }
    }

    func messages(_ f: PhoneFixture, _ channel: OutboxMessage.Channel) throws -> [OutboxMessage] {
        try f.store.messages(project: f.project.id, channel: channel, limit: 100)
    }

    /// What a provider does: takes the message (lease, send, recorded as accepted).
    func accept(_ f: PhoneFixture, _ m: OutboxMessage, provider: String = "twilio") throws {
        guard case let .leased(lease) = try f.store.lease(id: m.id, now: f.clock.now(), until: f.clock.now() + 60_000, maxAttempts: 8) else {
            Issue.record("not leased"); return
        }
        #expect(try f.store.markSent(lease, at: f.clock.now(), keepBody: true, accepted: ProviderAcceptance(provider: provider, messageID: "SM\(m.id)")))
    }

    func fallback(_ f: PhoneFixture) throws -> [PhoneFallback.Outcome] {
        try PhoneFallback(store: f.store, clock: f.clock, random: f.random, tokens: f.tokens, messages: nil,
                          project: { $0 == f.project.id ? f.project : nil }).run()
    }

    func resend(_ f: PhoneFixture, _ sessionInfo: String, by channel: PhoneChannel) throws -> PhoneSignIn.SendResult {
        var flow = f.flow
        flow.messages = nil
        return try flow.resend(sessionInfo: sessionInfo, appToken: try f.appToken(app: "web"), remoteAddress: "203.0.113.7",
                               channel: channel, language: "fr", composeSMS: { "Code \($0)" })
    }

    @Test("a code by voice says the digits; by WhatsApp the body is the code alone; both know their session and region")
    func bodies() throws {
        let f = try fixture(after: 0)
        let first = try f.send(number, app: "web")
        #expect(first.channel == .sms)
        f.clock.advance(seconds: 60)
        let call = try resend(f, first.sessionInfo, by: .voice)
        let voice = try #require(try messages(f, .voice).last)
        #expect(call.channel == .voice && voice.body.contains(", ") && voice.language == "fr" && voice.region == "FR")
        #expect(voice.sessionHash == PhoneSignIn.hash(sessionInfo: call.sessionInfo) && voice.fallbackAt == nil)
        let digits = voice.body.filter(\.isNumber)
        guard case .signedIn = try f.signIn(call.sessionInfo, String(digits.suffix(6))) else { Issue.record("not signed in"); return }
        f.clock.advance(seconds: 3600)
        let again = try f.send(number, app: "web")
        f.clock.advance(seconds: 60)
        _ = try resend(f, again.sessionInfo, by: .whatsapp)
        let wa = try #require(try messages(f, .whatsapp).last)
        #expect(wa.body.count == 6 && wa.body.allSatisfy(\.isNumber) && wa.recipient == number)
    }

    @Test("a channel the project does not offer is refused")
    func channelNotOffered() throws {
        let f = try fixture(channels: [.sms, .whatsapp], after: 0)
        let first = try f.send(number, app: "web")
        f.clock.advance(seconds: 60)
        #expect(wireError { try resend(f, first.sessionInfo, by: .voice) }?.hasPrefix("OPERATION_NOT_ALLOWED") == true)
    }

    @Test("a call weighs three texts on the number's hourly budget of five")
    func voiceWeighsThree() throws {
        let f = try fixture(after: 0)
        let first = try f.send(number, app: "web")                                  // 1
        f.clock.advance(seconds: 60)
        let call = try resend(f, first.sessionInfo, by: .voice)                      // 4
        f.clock.advance(seconds: 60)
        #expect(wireError { try resend(f, call.sessionInfo, by: .voice) } == "TOO_MANY_ATTEMPTS_TRY_LATER", "4 + 3 > 5")
        let text = try resend(f, call.sessionInfo, by: .sms)                         // 5
        f.clock.advance(seconds: 60)
        #expect(wireError { try resend(f, text.sessionInfo, by: .sms) } == "TOO_MANY_ATTEMPTS_TRY_LATER")
    }

    @Test("no receipt in time: the next channel carries a new code for the same session; the old code stops working")
    func fallbackAfterTimeout() throws {
        let f = try fixture()
        let s = try f.send(number)
        let oldCode = try f.lastCode()
        let sms = try #require(try messages(f, .sms).last)
        #expect(sms.fallbackAt == f.clock.now() + 30_000)
        try accept(f, sms)
        f.clock.advance(seconds: 29)
        #expect(try fallback(f).isEmpty)
        f.clock.advance(seconds: 1)
        let outcomes = try fallback(f)
        let wa = try #require(try messages(f, .whatsapp).last)
        #expect(outcomes == [.sent(channel: .whatsapp, messageID: wa.id)])
        #expect(wa.sessionHash == sms.sessionHash && wa.fallbackAt == f.clock.now() + 30_000, "voice follows WhatsApp")
        #expect(try fallback(f).isEmpty, "taken once")
        let status = try #require(try f.flow.status(sessionInfo: s.sessionInfo))
        #expect(status.channel == .whatsapp && status.state == .pending)
        #expect(wireError { try f.signIn(s.sessionInfo, oldCode) } == "INVALID_CODE")
        guard case .signedIn = try f.signIn(s.sessionInfo, wa.body) else { Issue.record("the new code did not sign in"); return }
    }

    @Test("an undelivered receipt brings the fallback forward; a delivered one cancels it")
    func receiptsDriveTheFallback() throws {
        let f = try fixture(channels: [.sms, .voice], after: 300)
        let s = try f.send(number)
        let sms = try #require(try messages(f, .sms).last)
        try accept(f, sms)
        #expect(try f.store.recordReceipt(id: sms.id, state: .undelivered, error: "30003", at: f.clock.now()))
        #expect(try f.flow.status(sessionInfo: s.sessionInfo)?.notDelivered == true)
        let outcomes = try fallback(f)
        let call = try #require(try messages(f, .voice).last)
        #expect(outcomes == [.sent(channel: .voice, messageID: call.id)] && call.fallbackAt == nil, "voice is the last channel")
        #expect(try f.flow.status(sessionInfo: s.sessionInfo)?.notDelivered == false, "the new message is not reported yet")

        f.clock.advance(seconds: 3600)
        _ = try f.send("+33612345679")
        let other = try #require(try messages(f, .sms).last)
        try accept(f, other)
        #expect(try f.store.recordReceipt(id: other.id, state: .delivered, error: nil, at: f.clock.now()))
        f.clock.advance(seconds: 600)
        #expect(try fallback(f).isEmpty)
    }

    @Test("a message that dies unsent falls back at once")
    func deadMessageFallsBack() throws {
        let f = try fixture(channels: [.sms, .whatsapp], after: 300)
        _ = try f.send(number)
        let sms = try #require(try messages(f, .sms).last)
        guard case let .leased(lease) = try f.store.lease(id: sms.id, now: f.clock.now(), until: f.clock.now() + 60_000, maxAttempts: 8) else {
            Issue.record("not leased"); return
        }
        #expect(try f.store.markFailed(lease, error: "21211 invalid number", nextAttemptAt: nil, at: f.clock.now()))
        #expect(try fallback(f).count == 1 && messages(f, .whatsapp).count == 1)
    }

    @Test("a session signed in, or replaced by send again, before its fallback falls back to nothing")
    func closedSessionNoFallback() throws {
        let f = try fixture()
        let s = try f.send(number)
        let code = try f.lastCode()
        guard case .signedIn = try f.signIn(s.sessionInfo, code) else { Issue.record("not signed in"); return }
        f.clock.advance(seconds: 31)
        #expect(try fallback(f) == [.none])
        #expect(try messages(f, .whatsapp).isEmpty)
    }

    @Test("the fallback spends the number's budget, weighed; refused, it is not tried again")
    func fallbackBudget() throws {
        let f = try fixture(channels: [.sms, .voice], after: 30)
        // Four texts from four networks: one unit is left of the five an hour.
        for i in 0..<3 { _ = try f.send(number, ip: "198.51.100.\(i + 1)") }
        _ = try f.send(number)
        f.clock.advance(seconds: 31)
        let outcomes = try fallback(f)
        #expect(outcomes.allSatisfy { $0 == .refused } && outcomes.count == 4, "a call (3) does not fit in one unit")
        #expect(try messages(f, .voice).isEmpty)
        #expect(try fallback(f).isEmpty, "a refused fallback is not due again")
    }

    @Test("no automatic fallback unless configured; no fallback time on the last channel")
    func noFallbackPlanned() throws {
        let f = try fixture(after: 0)
        _ = try f.send(number)
        #expect(try messages(f, .sms).last?.fallbackAt == nil)
        let g = try fixture(channels: [.sms], after: 60)
        _ = try g.send(number)
        #expect(try messages(g, .sms).last?.fallbackAt == nil)
    }
}
