import AuthEngine
import AuthStore
@testable import Delivery
import Glibc
import JSONValue
import Testing
import TestSupport

/// Providers that refuse, fail, or never answer, over real sockets on 127.0.0.1.
@Suite("Outbox worker: provider faults")
struct ProviderFaultTests {
    func webhook(_ provider: FakeProvider, timeout: Int = 5) -> WebhookSender {
        WebhookSender(url: "http://127.0.0.1:\(provider.port)/sms", secret: "0123456789abcdef0123", timeout: timeout)
    }

    func smtp(_ provider: FakeProvider, timeout: Int = 5) throws -> SMTPTransport {
        let config = JSON.obj(("transport", "smtp"), ("from", "signin@gatehouse.test"), ("url", "smtp://127.0.0.1:\(provider.port)"),
                              ("timeout_seconds", timeout))
        return SMTPTransport(settings: try EmailSenderSettings(config), config: try SMTPConfig(config, environment: [:]))
    }

    @Test("a permanent refusal (HTTP 400, bad number) is dead at once, its text scrubbed")
    func permanentIsDead() throws {
        let provider = try FakeProvider.http(status: 400)
        defer { provider.close() }
        let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        try store.enqueueTexts(1, at: clock.now())
        let worker = OutboxWorker(makeStore: { store }, senders: [.sms: webhook(provider)], clock: clock)
        #expect(try worker.deliverDue(store) == 1)
        let m = try #require(try store.all().first)
        #expect(m.status == .dead && m.attempts == 1 && m.body.isEmpty)
        #expect(m.lastError?.contains("HTTP 400") == true)
    }

    @Test("5xx and 429 are retried with exponential backoff", arguments: [503, 500, 429])
    func serverErrorIsRetried(status: Int) throws {
        let provider = try FakeProvider.http(status: status)
        defer { provider.close() }
        let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        try store.enqueueTexts(1, at: clock.now())
        let worker = OutboxWorker(makeStore: { store }, senders: [.sms: webhook(provider)], clock: clock)
        for (attempt, wait) in [(1, 5_000), (2, 10_000), (3, 20_000)] as [(Int, Millis)] {
            #expect(try worker.deliverDue(store) == 1)
            let m = try #require(try store.all().first)
            #expect(m.status == .pending && m.attempts == attempt && m.nextAttemptAt == clock.now() + wait)
            #expect(m.lastError?.contains("HTTP \(status)") == true && m.body == "code 0")
            clock.advance(millis: wait - 1)
            #expect(try worker.deliverDue(store) == 0)
            clock.advance(millis: 1)
        }
        #expect(provider.connections == 3)
    }

    @Test("a message is dead once its attempts are used up")
    func attemptsExhausted() throws {
        let provider = try FakeProvider.http(status: 502)
        defer { provider.close() }
        let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        try store.enqueueTexts(1, at: clock.now())
        let worker = OutboxWorker(makeStore: { store }, senders: [.sms: webhook(provider)], clock: clock, maxAttempts: 3)
        for _ in 1...3 {
            #expect(try worker.deliverDue(store) == 1)
            clock.advance(millis: 3_600_000)
        }
        #expect(try worker.deliverDue(store) == 0)
        let m = try #require(try store.all().first)
        #expect(m.status == .dead && m.attempts == 3 && m.body.isEmpty)
        #expect(provider.connections == 3)
    }

    @Test("an SMTP server refusing the recipient (5xx) makes the message dead at once; a 4xx is retried")
    func smtpRecipientRefused() throws {
        let refusing = try FakeProvider.smtp(rcptReply: "550 5.1.1 no such user")
        defer { refusing.close() }
        let busy = try FakeProvider.smtp(rcptReply: "451 4.3.0 try again later")
        defer { busy.close() }
        let clock = FixedClock()
        for (provider, status) in [(refusing, OutboxMessage.Status.dead), (busy, .pending)] {
            let store = try SQLStore(path: ":memory:")
            try store.enqueueTexts(1, at: clock.now(), channel: .email)
            let worker = OutboxWorker(makeStore: { store }, senders: [.email: try smtp(provider)], clock: clock)
            #expect(try worker.deliverDue(store) == 1)
            let m = try #require(try store.all(.email).first)
            #expect(m.status == status && m.attempts == 1, "\(m.lastError ?? "")")
        }
    }

    @Test("a provider that accepts and never answers holds a send no longer than its timeout, and the message is retried",
          arguments: ["webhook", "smtp"])
    func tarpit(kind: String) throws {
        let provider = try FakeProvider.tarpit()
        defer { provider.close() }
        let store = try SQLStore(path: ":memory:")
        let clock = FixedClock()
        let channel: OutboxMessage.Channel = kind == "smtp" ? .email : .sms
        try store.enqueueTexts(1, at: clock.now(), channel: channel)
        let sender: any MessageSender = kind == "smtp" ? try smtp(provider, timeout: 1) : webhook(provider, timeout: 1)
        let worker = OutboxWorker(makeStore: { store }, senders: [channel: sender], clock: clock)
        let started = realNow()
        #expect(try worker.deliverDue(store) == 1)
        let took = realNow() - started
        #expect(took >= 900 && took < 3_000, "the send took \(took) ms")
        let m = try #require(try store.all(channel).first)
        #expect(m.status == .pending && m.attempts == 1 && m.nextAttemptAt == clock.now() + 5_000)
    }

    @Test("a program that never reads its input is killed at its timeout")
    func programNotReading() throws {
        signal(SIGPIPE, SIG_IGN)
        let child = ChildProcess(label: "sendmail", path: "/bin/sleep", arguments: ["30"], environment: nil, timeout: 1)
        let started = realNow()
        let outcome = try child.run(input: [UInt8](repeating: 0x61, count: 1 << 20))
        let took = realNow() - started
        #expect(outcome.timedOut)
        #expect(took < 3_000, "the run took \(took) ms")
    }
}
