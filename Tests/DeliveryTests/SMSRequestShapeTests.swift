import AuthEngine
@testable import Delivery
import Glibc
import JSONValue
import Testing
import TestSupport

/// What each SMS provider puts on the wire, as the receiving end sees it (the fake provider on
/// 127.0.0.1, or the program the command provider runs).
@Suite("SMS providers: request shapes")
struct SMSRequestShapeTests {
    static let message = OutboxMessage(id: 7, projectID: "demo-p", channel: .sms, recipient: "+33612345678", body: "Your code is 123456",
                                       nextAttemptAt: 0, createdAt: 0)

    /// Sends `message` with `sender` to a recording provider; returns the one request it saw.
    func capture(_ message: OutboxMessage = message, status: Int = 201, _ sender: (UInt16) throws -> any MessageSender) throws -> SeenRequest {
        let seen = Shared<[SeenRequest]>([])
        let provider = try FakeProvider.recording(status: status, into: seen)
        defer { provider.close() }
        try sender(provider.port).send(message)
        #expect(seen.value.count == 1)
        return try #require(seen.value.first)
    }

    // MARK: - Twilio

    @Test("Twilio: POST to the account's Messages.json, Basic auth of SID and token, form body To, From, Body")
    func twilio() throws {
        let r = try capture { port in
            TwilioSender(baseURL: "http://127.0.0.1:\(port)", accountSID: "AC0123", authToken: "secret-token", from: "+15550001111",
                         messagingServiceSID: nil, timeout: 5)
        }
        #expect(r.requestLine == "POST /2010-04-01/Accounts/AC0123/Messages.json HTTP/1.1")
        // base64("AC0123:secret-token"), worked out apart from the code under test.
        #expect(r.header("authorization") == "Basic QUMwMTIzOnNlY3JldC10b2tlbg==")
        #expect(r.header("content-type") == "application/x-www-form-urlencoded")
        #expect(r.header("accept") == "application/json")
        #expect(r.count("authorization") == 1 && r.count("content-type") == 1)
        #expect(r.text == "To=%2B33612345678&From=%2B15550001111&Body=Your%20code%20is%20123456")
        #expect(r.header("content-length") == String(r.body.count))
    }

    @Test("Twilio from the configuration: a messaging service, the base URL's trailing slash dropped, the SID escaped in the path")
    func twilioConfigured() throws {
        var m = Self.message
        m.body = "Code: 12 & é=ok+1"
        let r = try capture(m) { port in
            try SMSProviders.make(JSON.obj(("provider", "twilio"), ("account_sid", "AC 1/x"), ("auth_token", "t"),
                                           ("messaging_service_sid", "MG9"), ("base_url", "http://127.0.0.1:\(port)//")))
        }
        #expect(r.requestLine == "POST /2010-04-01/Accounts/AC%201%2Fx/Messages.json HTTP/1.1")
        #expect(r.header("authorization") == "Basic QUMgMS94OnQ=")
        #expect(r.text == "To=%2B33612345678&MessagingServiceSid=MG9&Body=Code%3A%2012%20%26%20%C3%A9%3Dok%2B1")
    }

    // MARK: - Signed webhook

    @Test("webhook: POST of the JSON body with its timestamp and HMAC-SHA256 signature headers")
    func webhook() throws {
        let clock = FixedClock()  // 1,767,225,600 s
        let r = try capture { port in
            WebhookSender(url: "http://127.0.0.1:\(port)/hooks/sms?x=1", secret: "0123456789abcdef0123", timeout: 5, clock: clock)
        }
        #expect(r.requestLine == "POST /hooks/sms?x=1 HTTP/1.1")
        #expect(r.header("content-type") == "application/json")
        #expect(r.text == #"{"to":"+33612345678","body":"Your code is 123456","project":"demo-p","id":"7","channel":"sms"}"#)
        #expect(r.header("x-gatehouse-timestamp") == "1767225600")
        // HMAC-SHA256("0123456789abcdef0123", "1767225600." + body), worked out apart from the code under test.
        #expect(r.header("x-gatehouse-signature") == "v1=ac30edc5c1e7aa531a222d5391617e934d4c82e78e34ee3431807108d3af93d2")
    }

    @Test("webhook: the body is JSON a receiver parses back to the message, whatever the text holds")
    func webhookEscaping() throws {
        var m = Self.message
        m.body = "Code \"1\" <2> & \\ é\n😀\u{2028}"
        let r = try capture(m) { port in WebhookSender(url: "http://127.0.0.1:\(port)/", secret: "0123456789abcdef0123", timeout: 5) }
        let json = try JSONParser().parse(r.body)
        #expect(json["body"]?.stringValue == m.body && json["to"]?.stringValue == "+33612345678" && json["id"]?.stringValue == "7")
        let timestamp = try #require(r.header("x-gatehouse-timestamp").flatMap { Int64($0) })
        #expect(r.header("x-gatehouse-signature") == WebhookSignature.sign(secret: "0123456789abcdef0123", timestamp: timestamp, body: r.body))
    }

    // MARK: - Command

    /// A program in a fresh directory that writes its arguments, standard input and environment
    /// to files beside it, then says `say` on standard error and exits with `exit`.
    struct Program {
        struct ProgramError: Error {}
        let dir = "/tmp/gatehouse-command-\(UInt64.random(in: 0...UInt64.max))"
        var path: String { dir + "/sms" }

        init(exit code: Int32 = 0, say: String = "") throws {
            guard mkdir(dir, 0o700) == 0, let f = fopen(path, "w") else { throw ProgramError() }
            fputs("""
                #!/bin/sh
                for a in "$@"; do printf '%s\\n' "$a"; done > \(dir)/args
                cat > \(dir)/stdin
                env | grep -v '^PWD=' | sort > \(dir)/env
                printf '%s' '\(say)' >&2
                exit \(code)

                """, f)
            fclose(f)
            chmod(path, 0o755)
        }

        func read(_ name: String) -> String? {
            guard let f = fopen(dir + "/" + name, "r") else { return nil }
            defer { fclose(f) }
            var out: [UInt8] = []
            var buf = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = fread(&buf, 1, buf.count, f)
                if n == 0 { break }
                out += buf[..<n]
            }
            return String(decoding: out, as: UTF8.self)
        }

        func remove() {
            for name in ["sms", "args", "stdin", "env"] { unlink(dir + "/" + name) }
            rmdir(dir)
        }
    }

    @Test("command: the number is the only argument, the text is standard input, the environment is four variables")
    func command() throws {
        signal(SIGPIPE, SIG_IGN)
        let program = try Program()
        defer { program.remove() }
        var m = Self.message
        m.body = "Your code is 123456\nline two é"
        try SMSProviders.make(JSON.obj(("provider", "command"), ("command", program.path), ("timeout_seconds", 5))).send(m)
        #expect(program.read("args") == "+33612345678\n")
        #expect(program.read("stdin") == "Your code is 123456\nline two é")
        #expect(program.read("env") == "GATEHOUSE_MESSAGE_ID=7\nGATEHOUSE_PROJECT=demo-p\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\n")
    }

    @Test("command: exit 65 is a permanent refusal, another exit is retried; what the program said is kept")
    func commandExit() throws {
        signal(SIGPIPE, SIG_IGN)
        let refusing = try Program(exit: 65, say: "bad number")
        defer { refusing.remove() }
        let busy = try Program(exit: 75, say: "busy")
        defer { busy.remove() }
        #expect(throws: PermanentDeliveryError.self) { try CommandSender(path: refusing.path, timeout: 5).send(Self.message) }
        do {
            try CommandSender(path: refusing.path, timeout: 5).send(Self.message)
        } catch {
            #expect("\(error)" == "command: exit 65 (refused): bad number")
        }
        do {
            try CommandSender(path: busy.path, timeout: 5).send(Self.message)
            Issue.record("exit 75 was taken as sent")
        } catch let e as DeliveryFailure {
            #expect(e.description == "command: exit 75: busy")
        }
    }
}
