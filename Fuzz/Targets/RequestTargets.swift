import AuthEngine
import AuthStore
@testable import AuthWeb
@testable import FastCGI
import HTTP
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Whole requests through `WebApp.handle` (routing, guards, handlers, flows, pages) against an
/// in-memory store, as a worker serves them. The input is an HTTP/1-like text:
///
///     POST /identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=k
///     content-type: application/json
///
///     {"phoneNumber":"+15555550100"}
///
/// The store lives for the whole run (state from earlier inputs stays, as on a server).
enum RequestTargets {
    final class World: @unchecked Sendable {
        let app: WebApp
        let store: SQLStore

        init() {
            do {
                let log = Log(level: .error)
                guard let dir = Templates.bundledDirectory else { throw FuzzSetUpError() }
                let templates = try Templates(directory: dir, log: log)
                let settings = WebSettings(projects: [fuzzProject, ProjectSettings.devDefault()], devMode: true,
                                           adminToken: "fuzz-admin", version: "fuzz")
                app = WebApp(settings: settings, services: AuthServices(clock: FixedClock(), random: SeededRandom(), log: log), templates: templates)
                store = try SQLStore(path: ":memory:")
                try app.keyRing.ensureKey(store: store, random: app.random)
            } catch {
                StandardError.write("fuzz set-up failed: \(error)\n")
                exit(70)
            }
        }
    }

    struct FuzzSetUpError: Error {}

    nonisolated(unsafe) static var world: World?

    static let request = FuzzTarget(name: "request", setUp: { world = World() }) { data in
        guard let w = world, let request = parse(data) else { return }
        let response = w.app.handle(request, store: w.store)
        var head: [UInt8] = []
        FastCGIServer.encodeHead(response, into: &head)
    }

    /// The request line, headers up to a blank line, and the body; nil without a request line.
    static func parse(_ data: UnsafeBufferPointer<UInt8>) -> Request? {
        var lines: [String] = []
        var i = 0, start = 0
        var bodyStart = data.count
        while i < data.count {
            if data[i] == UInt8(ascii: "\n") {
                var line = String(decoding: UnsafeBufferPointer(rebasing: data[start..<i]), as: UTF8.self)
                if line.hasSuffix("\r") { line.removeLast() }
                start = i + 1
                if line.isEmpty, !lines.isEmpty { bodyStart = start; break }
                lines.append(line)
            }
            i += 1
        }
        if bodyStart == data.count, start < data.count {
            lines.append(String(decoding: UnsafeBufferPointer(rebasing: data[start...]), as: UTF8.self))
        }
        guard let first = lines.first else { return nil }
        let requestLine = first.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        guard requestLine.count == 2 else { return nil }
        let target = requestLine[1]
        let path: Substring, query: Substring
        if let q = target.firstIndex(of: "?") {
            path = target[..<q]
            query = target[target.index(after: q)...]
        } else {
            path = target
            query = ""
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingSpaces.lowercasedName
            if headers[name] == nil { headers[name] = line[line.index(after: colon)...].trimmingSpaces }
        }
        let body = bodyStart < data.count ? Array(data[bodyStart...]) : []
        return Request(method: String(requestLine[0]), path: String(path), rawQuery: String(query), lowercasedHeaders: headers, body: body,
                       remoteAddress: "192.0.2.7", isHTTPS: true, host: nil, requestID: "fuzz")
    }
}
