@testable import AuthCrypto
@testable import AuthEngine
@testable import AuthWeb
@testable import FastCGI
import HTTP
import JSONValue
import TextCoding
#if canImport(Glibc)
import Glibc
#endif

/// The parsers of text an attacker sends, each alone.
enum ParserTargets {
    /// FastCGI params as libfcgi hands them over (`envp`: `NAME=value` C strings, here separated
    /// by NUL bytes), the body read by CONTENT_LENGTH from what follows a blank entry, and the
    /// `Request` built from both, with its derived fields read.
    static let fastcgiParams = FuzzTarget(name: "fastcgi-params") { data in
        var entries: [[UInt8]] = []
        var body: [UInt8] = []
        var current: [UInt8] = []
        var i = 0
        while i < data.count {
            let c = data[i]
            i += 1
            if c != 0 { current.append(c); continue }
            if current.isEmpty { body = Array(data[i...]); break }
            entries.append(current)
            current = []
        }
        if !current.isEmpty, body.isEmpty { entries.append(current) }
        var cStrings: [UnsafeMutablePointer<CChar>?] = entries.map { e in
            e.withUnsafeBufferPointer { b in
                let p = UnsafeMutablePointer<CChar>.allocate(capacity: b.count + 1)
                b.withMemoryRebound(to: CChar.self) { src in
                    for (k, ch) in src.enumerated() { p[k] = ch }
                }
                p[b.count] = 0
                return p
            }
        }
        cStrings.append(nil)
        defer { for p in cStrings { p?.deallocate() } }
        let params = cStrings.withUnsafeMutableBufferPointer { CGIParams(envp: $0.baseAddress) }
        var offset = 0
        let read = FastCGIServer.readBody(params: params, max: 64 * 1024) { buf, n in
            let count = min(Int(n), body.count - offset)
            for k in 0..<count { buf[k] = CChar(bitPattern: body[offset + k]) }
            offset += count
            return Int32(count)
        }
        let request = FastCGIServer.request(params, body: (try? read.get()) ?? [])
        touch(request)
        let dict = cStrings.withUnsafeMutableBufferPointer { FastCGIServer.params($0.baseAddress) }
        touch(FastCGIServer.request(params: dict, body: []))
    }

    /// Reads every derived field of a request, as handlers do.
    static func touch(_ r: Request) {
        _ = r.cookies
        _ = r.cookie("__session")
        _ = r.contentType
        _ = r.formFields
        _ = r.query("continueUrl")
        _ = r.origin
        _ = r.header("X-Firebase-Locale")
    }

    /// A raw FastCGI record stream (what nginx writes on the socket) fed to the real responder
    /// loop over a socket pair: libfcgi parses the records, Gatehouse its params and body.
    static let fastcgiRecords = FuzzTarget(name: "fastcgi-records", setUp: {
        signal(SIGPIPE, SIG_IGN)
    }) { data in
        guard data.count <= 32 * 1024, !overflowsLibfcgiParams(data) else { return }
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { return }
        // Room for the whole input and the answers, so neither side waits for the other.
        var size: Int32 = 1 << 20
        for fd in fds {
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var written = 0
        while written < data.count {
            guard let base = data.baseAddress else { break }
            let n = write(fds[0], base + written, data.count - written)
            if n <= 0 { break }
            written += n
        }
        shutdown(fds[0], Int32(SHUT_WR))
        // libfcgi owns and closes the responder's end.
        let served = recordServer.serveConnection(fds[1]) { request in
            touch(request)
            return Response(status: 200, body: Array(request.path.utf8.prefix(64)))
        }
        close(fds[0])
        if verbose { print("served \(served) requests") }
    }

    /// Whether the stream may hold a params name-value pair whose lengths add up past an `int`:
    /// libfcgi 2.4.2 (Debian 2.4.2-2+deb12u1) then asks `malloc` for a negative size and aborts
    /// the process (RELIABILITY.md, "Findings"). Any place where two lengths could be read
    /// counts, rather than where libfcgi's record parsing would read them, so that no such
    /// stream gets through; the rest is still fuzzed.
    static func overflowsLibfcgiParams(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        func long(_ k: Int) -> Int? {
            guard k + 4 <= data.count, data[k] >= 0x80 else { return nil }
            return Int(data[k] & 0x7F) << 24 | Int(data[k + 1]) << 16 | Int(data[k + 2]) << 8 | Int(data[k + 3])
        }
        let limit = Int(Int32.max) - 2
        for k in 0..<data.count {
            guard let first = long(k) else { continue }
            // A long name with a long or a one-byte value, or a one-byte name with a long value.
            if let second = long(k + 4), first + second > limit { return true }
            if first + 0x7F > limit { return true }
        }
        return false
    }

    static let recordServer = FastCGIServer(options: .init(address: .inherited, workers: 1, maxBodyBytes: WebSettings.defaultMaxBodyBytes,
                                                               tooLarge: { WebApp.payloadTooLarge(limit: $0) }), log: { _ in })

    /// Query strings and form bodies; decoding what `encode` wrote gives the same pairs back.
    static let form = FuzzTarget(name: "form") { data in
        let text = data.string
        let pairs = FormDecoding.pairs(text)
        _ = PercentEncoding.decode(text, plusAsSpace: false)
        _ = FormDecoding.pairs(text.dropFirst())
        let again = FormDecoding.pairs(PercentEncoding.query(pairs))
        expect(again.count == pairs.count && zip(again, pairs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 },
               "form pairs do not survive encode → decode: \(pairs) → \(again)")
        _ = Request(method: "POST", path: "/", rawQuery: text, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: data.array).formField("email")
    }

    /// The `Cookie` header: the map and the single-name lookup agree on every name.
    static let cookie = FuzzTarget(name: "cookie") { data in
        let header = data.string
        let all = Cookie.parse(header: header)
        for (name, value) in all {
            let one = Cookie.value(named: name, inHeader: header)
            expect(one == value, "cookie \(name): map has \(value), lookup has \(String(describing: one))")
        }
        _ = Cookie.value(named: "__session", inHeader: header)
        _ = header.trimmingSpaces
    }

    /// The JSON parser: what it accepts serializes to text it parses back to the same value.
    static let json = FuzzTarget(name: "json") { data in
        let bytes = data.array
        guard let value = try? JSONParser(maxBytes: 64 * 1024, maxDepth: 32).parse(bytes) else { return }
        let text = value.serialized()
        guard let again = try? JSONParser(maxBytes: .max, maxDepth: 32).parse(text) else {
            expect(false, "serialized JSON does not parse: \(text)")
            return
        }
        expect(again == value, "JSON round trip changed the value: \(text)")
        _ = value["sub"]?.int64Value
        _ = value["iat"]?.stringValue
        // An imported account (accounts:batchCreate, `users import`): a row or its error.
        if let row = try? AccountImportJSON.row(value) {
            expect(row.mfaEnrollments.count <= (value["mfaInfo"]?.arrayValue?.count ?? 0), "import row grew factors")
        }
    }

    /// The member scan used on the verify hot path: whatever it accepts, the full parser accepts
    /// as an object with the same member names, in order.
    static let jsonMembers = FuzzTarget(name: "json-members") { data in
        var names: [String] = []
        var values: [Range<Int>] = []
        let limits = JSONLimits(maxBytes: 16 * 1024, maxDepth: 16)
        let scanned = JSONMembers.scan(data, limits: limits) { name, value in
            names.append(String(decoding: UnsafeBufferPointer(rebasing: data[name]), as: UTF8.self))
            values.append(value)
        }
        for v in values {
            _ = JSONMembers.plainString(data, v)
            _ = JSONMembers.plainInteger(data, v)
            _ = JSONMembers.isString(data, v)
            _ = JSONMembers.plainStringEquals(data, v, "https://session.firebase.google.com/", "demo-fuzz")
            _ = JSONMembers.equals(data, v, "exp")
        }
        guard scanned == true else { return }
        // The same limits: the scan must never accept what the parser refuses at them.
        let parsed = try? JSONParser(limits).parse(data.array)
        guard case let .object(members)? = parsed else {
            expect(false, "JSONMembers accepted what JSONParser refuses: \(data.string)")
            return
        }
        expect(members.map(\.0) == names, "member names differ: \(members.map(\.0)) vs \(names)")
        for (v, (_, value)) in zip(values, members) {
            if let n = JSONMembers.plainInteger(data, v) {
                expect(value.int64Value == n, "plain integer \(n) parses as \(value)")
            }
            if let s = JSONMembers.plainString(data, v) {
                expect(value.stringValue == s, "plain string \(s) parses as \(value)")
            }
        }
    }

    /// base64url, as JWS segments use it: decoding what was encoded gives the bytes back.
    static let base64url = FuzzTarget(name: "base64url") { data in
        let text = data.string
        if let bytes = Base64URL.decode(text) {
            expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes, "base64url round trip of \(text)")
        }
        expect(Base64URL.decode(Base64URL.encode(data.array)) == data.array, "base64url round trip of raw bytes")
        _ = JWS.parse(text)
    }

    /// Phone numbers: `region\nnumber` through the sign-in parser (test numbers, national form,
    /// libphonenumber) and libphonenumber's own parse.
    static let phone = FuzzTarget(name: "phone") { data in
        let f = fields(data, 2)
        let region = f[0].isEmpty ? nil : f[0]
        _ = try? PhoneSignIn.parse(f[1], defaultRegion: region, project: fuzzProject)
        if let n = try? PhoneNumber(parsing: f[1], defaultRegion: region) {
            _ = n.description
            // A number in E.164 form parses to itself.
            let again = try? PhoneNumber(parsing: n.e164)
            expect(again?.e164 == n.e164, "E.164 \(n.e164) does not parse back")
        }
        _ = PhoneNumber.countryCode(forRegion: f[0])
    }

    /// Continue URLs, link domains, email addresses and app callbacks: one field per line,
    /// `url\nemail\nibi\napn\nclientId\nappId\neventId`.
    static let continueURL = FuzzTarget(name: "continue-url") { data in
        let f = fields(data, 7)
        let url = f[0]
        let parts = EmailLinkURLs.parts(url)
        let allowed = EmailLinkURLs.isAllowedContinueURL(url, project: fuzzProject)
        if allowed, let parts, parts.scheme == "http" || parts.scheme == "https" {
            expect(fuzzProject.isAuthorized(host: parts.host), "allowed continue URL on an unauthorized host: \(url)")
        }
        // The hosted pages' redirect check and the email links' check name the same host for a
        // URL both read (CR and LF are dropped from a Location header, tabs by browsers).
        if let safe = ContinueURL.safe(url, project: fuzzProject), let mine = ContinueURL.parts(safe),
           let theirs = EmailLinkURLs.parts(String(safe.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\t" })) {
            expect(mine.1 == theirs.host && mine.0 == theirs.scheme, "redirect \(safe): \(mine) vs \(theirs)")
        }
        _ = EmailLinkURLs.authority(ofOrigin: url)
        _ = EmailLinkURLs.isAcceptableLinkDomain(f[1], origin: url, project: fuzzProject)
        _ = EmailAddress.validated(f[1]).map(EmailAddress.canonical)
        _ = EmailLinkURLs.actionURL(origin: "https://auth.example.com", mode: "signIn", oobCode: f[6], apiKey: "k",
                                    continueURL: url, lang: f[5])
        if let callback = try? AppCallback.resolve(project: fuzzProject, ibi: f[2], apn: f[3], clientID: f[4], appID: f[5],
                                                   eventID: f[6]) {
            _ = callback.successURL(authority: "auth.example.com", token: f[0])
            _ = callback.failureURL(authority: "auth.example.com", code: "x", message: f[1])
        }
    }
}
