import Glibc

/// One HTTP request as a provider received it.
struct SeenRequest: Sendable {
    var requestLine: String
    /// Header lines in order, names lower-cased.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    /// How many times a header was sent.
    func count(_ name: String) -> Int { headers.filter { $0.name == name }.count }
    var text: String { String(decoding: body, as: UTF8.self) }
}

extension FakeProvider {
    /// An HTTP endpoint that keeps every request it reads in `seen` and answers `status` with
    /// the JSON `answer`.
    static func recording(status: Int, answer: String = "{}", into seen: Shared<[SeenRequest]>) throws -> FakeProvider {
        try FakeProvider { c in
            guard let head = c.readUntil("\r\n\r\n") else { return }
            let lines = head.split(separator: "\r\n").map(String.init)
            let headers: [(name: String, value: String)] = lines.dropFirst().compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (line[..<colon].lowercased(), String(line[line.index(after: colon)...].drop { $0 == " " }))
            }
            let length = headers.first { $0.name == "content-length" }.flatMap { Int($0.value) } ?? 0
            let body = c.read(count: length) ?? []
            seen.update { $0.append(SeenRequest(requestLine: lines.first ?? "", headers: headers, body: body)) }
            c.write("HTTP/1.1 \(status) Fake\r\nContent-Type: application/json\r\nContent-Length: \(answer.utf8.count)\r\nConnection: close\r\n\r\n"
                    + answer)
        }
    }
}
