import Glibc
import TestSupport

/// A provider on 127.0.0.1 at a free port, serving one connection at a time on its own thread
/// with `handle` (given the connection; it is closed afterwards). Stopped by `close()`.
final class FakeProvider: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private var thread: TestThread?
    private let lock = TestLock()
    private var served = 0

    init(_ handle: @escaping @Sendable (Connection) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FakeProviderError.socket }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard bound else { Glibc.close(fd); throw FakeProviderError.socket }
        listener = fd
        port = UInt16(bigEndian: addr.sin_port)
        thread = TestThread { [self] in
            while true {
                let conn = accept(fd, nil, nil)
                guard conn >= 0 else { return }
                lock.withLock { served += 1 }
                handle(Connection(fd: conn))
                Glibc.close(conn)
            }
        }
    }

    /// Connections accepted so far.
    var connections: Int { lock.withLock { served } }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        thread?.join()
        thread = nil
    }

    /// An HTTP endpoint answering every request with `status`.
    static func http(status: Int) throws -> FakeProvider {
        try FakeProvider { c in
            guard let head = c.readUntil("\r\n\r\n") else { return }
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(" ")) } ?? 0
            _ = c.read(count: length)
            c.write("HTTP/1.1 \(status) Fake\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        }
    }

    /// Accepts and never answers (a tarpit), until the client gives up and closes.
    static func tarpit() throws -> FakeProvider {
        try FakeProvider { c in while c.read(count: 1) != nil {} }
    }

    /// An SMTP server that answers `RCPT TO` with `rcptReply` and accepts everything else.
    static func smtp(rcptReply: String) throws -> FakeProvider {
        try FakeProvider { c in
            c.write("220 fake ESMTP\r\n")
            while let line = c.readUntil("\r\n") {
                let verb = line.prefix(4).uppercased()
                switch verb {
                case "EHLO", "HELO": c.write("250 fake\r\n")
                case "MAIL": c.write("250 OK\r\n")
                case "RCPT": c.write(rcptReply + "\r\n")
                case "DATA":
                    c.write("354 go on\r\n")
                    guard c.readUntil("\r\n.\r\n") != nil else { return }
                    c.write("250 queued\r\n")
                case "QUIT":
                    c.write("221 bye\r\n")
                    return
                default: c.write("250 OK\r\n")
                }
            }
        }
    }

    /// One accepted connection, read with a buffer.
    final class Connection {
        let fd: Int32
        private var buffer: [UInt8] = []
        init(fd: Int32) { self.fd = fd }

        private func fill() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = Glibc.read(fd, &chunk, chunk.count)
            guard n > 0 else { return false }
            buffer += chunk.prefix(n)
            return true
        }

        /// Text up to and without `delimiter`, or nil when the peer closes first.
        func readUntil(_ delimiter: String) -> String? {
            let d = Array(delimiter.utf8)
            while true {
                if buffer.count >= d.count {
                    for i in 0...(buffer.count - d.count) where Array(buffer[i..<(i + d.count)]) == d {
                        let text = String(decoding: buffer[..<i], as: UTF8.self)
                        buffer.removeFirst(i + d.count)
                        return text
                    }
                }
                guard fill() else { return nil }
            }
        }

        func read(count: Int) -> [UInt8]? {
            while buffer.count < count { guard fill() else { return nil } }
            defer { buffer.removeFirst(count) }
            return Array(buffer.prefix(count))
        }

        func write(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }
}

enum FakeProviderError: Error { case socket }

extension Substring {
    func trimmingCharacters(_ c: Character) -> String {
        String(drop { $0 == c }.reversed().drop { $0 == c }.reversed())
    }
}
