import AuthEngine
@testable import Delivery
import Glibc
import Testing
import TestSupport

/// Whether a failed send may have reached the provider, told from what libcurl did: what failed
/// before the request left (refused, a host that never completes the connection) is not taken,
/// so a second provider may send the message; what failed after (no answer in time, the
/// connection closed without one) may have been, so the message stays with that provider.
@Suite("Providers: taken or not")
struct ProviderTakenTests {
    static let message = OutboxMessage(id: 3, projectID: "p", channel: .sms, recipient: "+33612345678", body: "code", nextAttemptAt: 0, createdAt: 0)

    func webhook(_ port: UInt16, timeout: Int = 1) -> WebhookSender {
        WebhookSender(name: "gw", url: "http://127.0.0.1:\(port)/send", secret: "0123456789abcdef0123", timeout: timeout)
    }

    /// A listening socket that accepts nothing with its queue full: the kernel drops further
    /// connection attempts, as a firewall dropping packets does.
    final class BlackHole {
        var fds: [Int32] = []
        let port: UInt16

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &addr) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && listen(fd, 0) == 0 && getsockname(fd, $0, &len) == 0 }
            }
            fds.append(fd)
            guard bound else { throw FakeProviderError.socket }
            port = UInt16(bigEndian: addr.sin_port)
            // Fill the accept queue (its length is the backlog plus one).
            for _ in 0..<3 {
                let c = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                fds.append(c)
                _ = withUnsafePointer(to: &addr) { p in
                    p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(c, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
            usleep(100_000)
        }

        func close() { for fd in fds { Glibc.close(fd) } }
    }

    @Test("refused: not taken (the second provider may send it)")
    func refused() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { p in p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 } }
        let port = UInt16(bigEndian: addr.sin_port)
        close(fd)
        #expect { try webhook(port).deliver(Self.message) } throws: { e in
            (e as? DeliveryFailure)?.provider == "gw" && "\(e)".contains("curl error 7")
        }
    }

    @Test("a connection never completed (dropped packets) times out before anything is written: not taken")
    func blackHole() throws {
        let hole = try BlackHole()
        defer { hole.close() }
        let started = realNow()
        #expect { try webhook(hole.port).deliver(Self.message) } throws: { e in
            e is DeliveryFailure && "\(e)".contains("curl error 28")
        }
        #expect(realNow() - started < 3_000)
    }

    @Test("no answer in time once the request is written: may have been taken, the message stays with that provider")
    func tarpit() throws {
        let provider = try FakeProvider.tarpit()
        defer { provider.close() }
        #expect { try webhook(provider.port).deliver(Self.message) } throws: { e in
            (e as? UncertainDelivery)?.provider == "gw" && "\(e)".contains("curl error 28")
        }
    }

    @Test("the connection closed after the request, without an answer: may have been taken")
    func closedWithoutAnswer() throws {
        let provider = try FakeProvider { c in
            guard let head = c.readUntil("\r\n\r\n") else { return }
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(" ")) } ?? 0
            _ = c.read(count: length)
        }
        defer { provider.close() }
        #expect { try webhook(provider.port, timeout: 5).deliver(Self.message) } throws: { e in
            (e as? UncertainDelivery)?.provider == "gw" && "\(e)".contains("curl error 52")
        }
    }

    @Test("5xx, 408 and 429 are answers: not taken; another 4xx is a refusal for good; each names its provider",
          arguments: [(503, "failure"), (500, "failure"), (408, "failure"), (429, "failure"), (400, "permanent"), (401, "permanent")])
    func statuses(status: Int, kind: String) throws {
        let provider = try FakeProvider.http(status: status)
        defer { provider.close() }
        #expect { try webhook(provider.port).deliver(Self.message) } throws: { e in
            kind == "failure" ? (e as? DeliveryFailure)?.provider == "gw" : (e as? PermanentDeliveryError)?.provider == "gw"
        }
    }

    @Test("a program killed at its timeout may have sent the text: retried with it only")
    func commandTimeout() throws {
        let dir = "/tmp/gatehouse-slow-\(UInt64.random(in: 0...UInt64.max))"
        #expect(mkdir(dir, 0o700) == 0)
        defer { unlink(dir + "/sms"); rmdir(dir) }
        let f = try #require(fopen(dir + "/sms", "w"))
        fputs("#!/bin/sh\ncat > /dev/null\nsleep 5\n", f)
        fclose(f)
        chmod(dir + "/sms", 0o700)
        #expect { try CommandSender(name: "gsm", path: dir + "/sms", timeout: 1).deliver(Self.message) } throws: { e in
            (e as? UncertainDelivery)?.provider == "gsm" && "\(e)".contains("killed after 1 s")
        }
    }
}
