@testable import AuthEngine
import Testing

@Suite("User agents")
struct UserAgentTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let ua: String
        let kind: DeviceName.Kind
        let browser: String?
        let system: String?
        init(_ ua: String, _ kind: DeviceName.Kind, _ browser: String?, _ system: String?) {
            self.ua = ua; self.kind = kind; self.browser = browser; self.system = system
        }
        var expected: DeviceName { DeviceName(kind: kind, browser: browser, system: system) }
        var testDescription: String { "\(expected.key) ← \(ua)" }
    }

    /// User agents as current browsers, apps and tools send them.
    static let cases: [Case] = [
        // Chrome
        Case("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
             .browser, "Chrome", "Windows"),
        Case("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
             .browser, "Chrome", "macOS"),
        Case("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
             .browser, "Chrome", "Linux"),
        Case("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
             .browser, "Chrome", "Android"),
        Case("Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
             .browser, "Chrome", "iOS"),
        Case("Mozilla/5.0 (iPad; CPU OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
             .browser, "Chrome", "iPadOS"),
        Case("Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
             .browser, "Chrome", "ChromeOS"),
        Case("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.85 Safari/537.36",
             .browser, "Chrome", "Linux"),
        Case("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.109 Safari/537.36",
             .browser, "Chrome", "Windows"),
        Case("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Ubuntu Chromium/83.0.4103.61 Chrome/83.0.4103.61 Safari/537.36",
             .browser, "Chromium", "Linux"),
        // Edge
        Case("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70",
             .browser, "Edge", "Windows"),
        Case("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70",
             .browser, "Edge", "macOS"),
        Case("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.2903.87",
             .browser, "Edge", "Android"),
        Case("Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 EdgiOS/131.2903.86 Mobile/15E148 Safari/605.1.15",
             .browser, "Edge", "iOS"),
        Case("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.19045",
             .browser, "Edge", "Windows"),
        // Firefox
        Case("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", .browser, "Firefox", "Windows"),
        Case("Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0", .browser, "Firefox", "macOS"),
        Case("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", .browser, "Firefox", "Linux"),
        Case("Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", .browser, "Firefox", "Linux"),
        Case("Mozilla/5.0 (Android 15; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0", .browser, "Firefox", "Android"),
        Case("Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15",
             .browser, "Firefox", "iOS"),
        Case("Mozilla/5.0 (iPad; CPU OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15",
             .browser, "Firefox", "iPadOS"),
        // Safari (an iPad asking for the desktop site says Macintosh: macOS)
        Case("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
             .browser, "Safari", "macOS"),
        Case("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
             .browser, "Safari", "iOS"),
        Case("Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
             .browser, "Safari", "iPadOS"),
        // Opera
        Case("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0",
             .browser, "Opera", "Windows"),
        Case("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0",
             .browser, "Opera", "macOS"),
        Case("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36 OPR/86.0.0.0",
             .browser, "Opera", "Android"),
        Case("Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1 OPT/5.1.0",
             .browser, "Opera", "iOS"),
        // Samsung Internet (its phone and its desktop mode)
        Case("Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36",
             .browser, "Samsung Internet", "Android"),
        Case("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Safari/537.36",
             .browser, "Samsung Internet", "Linux"),
        // Internet Explorer 11
        Case("Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko", .browser, "Internet Explorer", "Windows"),
        // Apps: the Firebase iOS SDK (CFNetwork; a Mac app adds its architecture), Android (Dalvik, OkHttp),
        // web views inside apps, Electron
        Case("MyApp/1 CFNetwork/1490.0.4 Darwin/23.2.0", .app, "MyApp", "iOS"),
        Case("Gatehouse%20Demo/42 CFNetwork/1568.200.51 Darwin/24.1.0", .app, nil, "iOS"),
        Case("My.App-Beta_2/1.4.0 CFNetwork/1498.700.2 Darwin/23.6.0", .app, "My.App-Beta_2", "iOS"),
        Case("MyApp/1 CFNetwork/1128.0.1 Darwin/19.6.0 (x86_64)", .app, "MyApp", "macOS"),
        Case("Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/UD1A.231105.004)", .app, nil, "Android"),
        Case("okhttp/4.12.0", .app, nil, "Android"),
        Case("MyApp/2.3.1 okhttp/4.12.0", .app, "MyApp", "Android"),
        Case("Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UD1A.231105.004; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.6099.144 Mobile Safari/537.36",
             .app, nil, "Android"),
        Case("Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148", .app, nil, "iOS"),
        Case("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.36.140 Chrome/118.0.5993.159 Electron/27.1.3 Safari/537.36",
             .app, nil, "macOS"),
        // Tools
        Case("curl/8.5.0", .tool, "curl", nil),
        Case("Wget/1.21.4", .tool, "Wget", nil),
        Case("python-requests/2.32.3", .tool, "Python", nil),
        Case("Python-urllib/3.12", .tool, "Python", nil),
        Case("Python/3.12 aiohttp/3.11.9", .tool, "Python", nil),
        Case("Go-http-client/1.1", .tool, "Go", nil),
        Case("Go-http-client/2.0", .tool, "Go", nil),
        Case("node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", .tool, "Node.js", nil),
        Case("undici", .tool, "Node.js", nil),
        Case("node", .tool, "Node.js", nil),
        Case("axios/1.7.9", .tool, "Node.js", nil),
        Case("Java/17.0.9", .tool, "Java", nil),
        Case("PostmanRuntime/7.43.0", .tool, "Postman", nil),
        // Unknown, with whatever system shows
        Case("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", .unknown, nil, nil),
        Case("SomeClient/1.0 (Windows NT 10.0; Win64; x64)", .unknown, nil, "Windows"),
        Case("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15", .unknown, nil, "Linux"),
        // A token glued to another name is not that token
        Case("PycURL/7.45.2 libcurl/8.5.0", .tool, "curl", nil),
        Case("libcurlish/1.0", .unknown, nil, nil),
        Case("Mozilla/5.0 (Windows NT 10.0) Chromebook-Helper/1.0", .unknown, nil, "Windows"),
    ]

    @Test("real user agents name their browser, app or tool and system", arguments: cases)
    func names(_ c: Case) {
        let d = DeviceName(userAgent: c.ua)
        #expect(d == c.expected, "\(d.key)")
    }

    @Test("the key is browser|system|kind, nil as empty")
    func key() {
        #expect(DeviceName(userAgent: Self.cases[0].ua).key == "Chrome|Windows|browser")
        #expect(DeviceName(userAgent: "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/UD1A)").key == "|Android|app")
        #expect(DeviceName(userAgent: "curl/8.5.0").key == "curl||tool")
        #expect(DeviceName(userAgent: nil).key == "||unknown")
    }

    /// Every version in `ua` (the digits after a `/`) bumped: 1 → 2, 9 → 0.
    static func bumpingVersions(_ ua: String) -> String {
        var out: [UInt8] = []
        var inVersion = false
        for b in ua.utf8 {
            if b == UInt8(ascii: "/") { inVersion = true; out.append(b); continue }
            if inVersion, b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") {
                out.append(b == UInt8(ascii: "9") ? UInt8(ascii: "0") : b + 1)
                continue
            }
            if inVersion, b != UInt8(ascii: "."), b != UInt8(ascii: "_") { inVersion = false }
            out.append(b)
        }
        return String(decoding: out, as: UTF8.self)
    }

    @Test("versions never change the device: every product version bumped, the same key")
    func versions() {
        for c in Self.cases {
            let bumped = Self.bumpingVersions(c.ua)
            if c.ua.contains("/") { #expect(bumped != c.ua) }
            #expect(DeviceName(userAgent: bumped) == DeviceName(userAgent: c.ua), "\(bumped)")
        }
    }

    @Test("browser and system updates are the same device")
    func updates() {
        let same: [(String, String)] = [
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.130 Safari/537.36",
             "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1",
             "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Mobile/15E148 Safari/604.1"),
            ("Dalvik/2.1.0 (Linux; U; Android 13; SM-G991B Build/TP1A.220624.014)",
             "Dalvik/2.1.0 (Linux; U; Android 14; SM-G991B Build/UP1A.231005.007)"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:121.0) Gecko/20100101 Firefox/121.0",
             "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0"),
            ("MyApp/1 CFNetwork/1490.0.4 Darwin/23.2.0", "MyApp/17 CFNetwork/1568.200.51 Darwin/24.1.0"),
        ]
        for (old, new) in same { #expect(DeviceName(userAgent: old).key == DeviceName(userAgent: new).key, "\(new)") }
        // Another browser or system is another device.
        #expect(DeviceName(userAgent: Self.cases[0].ua).key != DeviceName(userAgent: Self.cases[1].ua).key)
        #expect(DeviceName(userAgent: Self.cases[0].ua).key != DeviceName(userAgent: Self.cases[10].ua).key)
    }

    /// Names are printable ASCII of at most 40 bytes.
    static func isShortASCII(_ name: String?) -> Bool {
        guard let name else { return true }
        return name.utf8.count <= DeviceName.maxNameLength && name.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    @Test("empty, nil, huge, invalid UTF-8 and control characters give a value with short ASCII names")
    func hostile() {
        let chrome = Self.cases[0].ua
        let invalid = String(decoding: [0xFF, 0xFE, 0xC0, 0x80, 0xED, 0xA0, 0x80, 0xF4, 0x90, 0x80, 0x80] + Array("MyApp/1 CFNetwork/1".utf8), as: UTF8.self)
        let inputs: [String?] = [
            nil, "", " ", "/", "//////", "(;;;)", "Mozilla", "Mozilla/",
            String(repeating: "A", count: 100_000),
            String(repeating: chrome + " ", count: 1_000),
            String(repeating: "é", count: 60_000),
            invalid,
            "\u{0}\u{1}\u{7F}\r\n\tcurl/8.5.0\u{0}",
            "My\u{0}App/1 CFNetwork/1490.0.4 Darwin/23.2.0",
            "My App/1 CFNetwork/1490.0.4 Darwin/23.2.0",
            "Ma\u{308}pp/1 CFNetwork/1490.0.4 Darwin/23.2.0",
            "MyApp\u{202E}/1 CFNetwork/1490.0.4 Darwin/23.2.0",
            String(repeating: "a", count: 41) + "/1 CFNetwork/1490.0.4 Darwin/23.2.0",
            String(repeating: "a", count: 10_000) + "/1 okhttp/4.12.0",
            "🙂/1 CFNetwork/1 Darwin/1 🙂 Firefox/1 🙂",
        ]
        for input in inputs {
            let d = DeviceName(userAgent: input)
            #expect(Self.isShortASCII(d.browser) && Self.isShortASCII(d.system), "\(d.key)")
            #expect(d.key.utf8.count <= 2 * DeviceName.maxNameLength + 10)
        }
        #expect(DeviceName(userAgent: nil) == DeviceName(kind: .unknown, browser: nil, system: nil))
        #expect(DeviceName(userAgent: "") == DeviceName(kind: .unknown, browser: nil, system: nil))
        #expect(DeviceName(userAgent: String(repeating: chrome + " ", count: 1_000)) == DeviceName(userAgent: chrome))
        #expect(DeviceName(userAgent: "\u{0}\u{1}\u{7F}\r\n\tcurl/8.5.0\u{0}").browser == "curl")
        #expect(DeviceName(userAgent: invalid) == DeviceName(kind: .app, browser: nil, system: "iOS"))
        #expect(DeviceName(userAgent: "My App/1 CFNetwork/1490.0.4 Darwin/23.2.0").browser == nil)
        #expect(DeviceName(userAgent: "Ma\u{308}pp/1 CFNetwork/1490.0.4 Darwin/23.2.0").browser == nil)
        #expect(DeviceName(userAgent: String(repeating: "a", count: 41) + "/1 CFNetwork/1490.0.4 Darwin/23.2.0").browser == nil)
        #expect(DeviceName(userAgent: String(repeating: "a", count: 40) + "/1 CFNetwork/1490.0.4 Darwin/23.2.0").browser == String(repeating: "a", count: 40))
    }

    @Test("only the first 512 bytes are read, a token cut at the limit included")
    func prefix() {
        let head = "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"
        let padding = String(repeating: " ", count: DeviceName.maxInputBytes - head.utf8.count)
        #expect(DeviceName(userAgent: head + padding + " Firefox/133.0") == DeviceName(kind: .unknown, browser: nil, system: "Windows"))
        #expect(DeviceName(userAgent: head + String(padding.dropLast(8)) + "Firefox/133.0") == DeviceName(kind: .browser, browser: "Firefox", system: "Windows"))
        // "Firefox" cut to "Firefo" at byte 512 is not Firefox.
        #expect(DeviceName(userAgent: head + String(padding.dropLast(6)) + "Firefox/133.0") == DeviceName(kind: .unknown, browser: nil, system: "Windows"))
    }

    @Test("random bytes, and random mixes of real tokens, give short ASCII names")
    func random() {
        let pieces = ["Mozilla/5.0", " (", ")", "; ", "iPhone", "Android", "Windows", "Macintosh", "CrOS", "Linux", "Chrome/1", "Edg/1",
                      "OPR/1", "Firefox/1", "Safari/1", "CFNetwork/1", "Darwin/1", "okhttp/1", "Dalvik/1", "curl/1", "wv", "x86_64",
                      "App/1", "\u{0}", "\u{FFFD}", "é", "🙂", "/", " "]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for round in 0..<3_000 {
            let input: String
            if round.isMultiple(of: 2) {
                input = String(decoding: (0..<(next() % 700)).map { _ in UInt8(truncatingIfNeeded: next()) }, as: UTF8.self)
            } else {
                input = (0..<(next() % 40)).map { _ in pieces[next() % pieces.count] }.joined()
            }
            let d = DeviceName(userAgent: input)
            #expect(Self.isShortASCII(d.browser) && Self.isShortASCII(d.system), "\(input.debugDescription)")
            if d.kind == .unknown { #expect(d.browser == nil) }
        }
    }
}
