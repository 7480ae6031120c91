/// A person's name for the device behind a `User-Agent`: the browser (or app, or tool) and the
/// operating system, without versions, for the account page's "where you're signed in" list and
/// for telling a device the account has not used before (`key`).
///
/// The parser reads at most the first `maxInputBytes` bytes and matches whole tokens (a name not
/// glued to a letter, digit, `.`, `-` or `_` on either side) with plain byte comparisons. Checks run
/// in order, most specific first: tools, apps, then browsers (an Edge, Opera or Samsung user agent
/// also names Chrome and Safari; Chrome names Safari). Every name it returns is a literal of this
/// file, except an app's own token, which is kept only when it is 1…`maxNameLength` bytes of
/// letters, digits, `.`, `_` and `-`.
public struct DeviceName: Sendable, Equatable {
    public enum Kind: String, Sendable { case browser, app, tool, unknown }

    public let kind: Kind
    /// "Firefox", "Chrome", "Safari", "Edge", "Opera", "Samsung Internet", "Chromium",
    /// "Internet Explorer" (Brave and most other Chromium browsers are not told apart: "Chrome");
    /// for an app its own name token (e.g. "MyApp") or nil; for a tool "curl", "Wget", "Python",
    /// "Go", "Node.js", "Java", "Postman"; nil when unknown.
    public let browser: String?
    /// "Windows", "macOS", "iOS", "iPadOS", "Android", "Linux", "ChromeOS"; nil when unknown.
    public let system: String?

    /// How much of a user agent is read.
    public static let maxInputBytes = 512
    /// The longest app name kept.
    public static let maxNameLength = 40

    init(kind: Kind, browser: String?, system: String?) {
        self.kind = kind; self.browser = browser; self.system = system
    }

    /// Parses at most the first `maxInputBytes` bytes; any input (empty, binary, huge) gives a value.
    public init(userAgent: String?) {
        guard let userAgent, !userAgent.isEmpty else {
            self.init(kind: .unknown, browser: nil, system: nil)
            return
        }
        let ua = Tokens(Array(userAgent.utf8.prefix(Self.maxInputBytes)))
        let system = ua.system
        // Tools: HTTP libraries and command-line clients.
        if let tool = ua.tool {
            self.init(kind: .tool, browser: tool, system: system)
            return
        }
        // Apps: Apple's URL loading system (the Firebase iOS SDK's requests), Android's
        // HttpURLConnection (Dalvik) and OkHttp, Alamofire, Electron, and web views in apps.
        if ua.has("CFNetwork") || ua.has("Alamofire") {
            let apple = system ?? (ua.has("x86_64") || ua.has("arm64") ? "macOS" : "iOS")
            self.init(kind: .app, browser: ua.appName, system: apple)
            return
        }
        if ua.has("Dalvik") || ua.has("okhttp") {
            self.init(kind: .app, browser: ua.appName, system: system ?? "Android")
            return
        }
        if ua.has("Electron") || (system == "Android" && ua.has("wv")) {
            self.init(kind: .app, browser: nil, system: system)
            return
        }
        // Browsers, most specific first.
        let browser: String?
        if ua.has("HeadlessChrome") {
            browser = "Chrome"
        } else if ua.has("Edg") || ua.has("EdgA") || ua.has("EdgiOS") || ua.has("Edge") {
            browser = "Edge"
        } else if ua.has("OPR") || ua.has("OPiOS") || ua.has("OPT") || ua.has("Opera") {
            browser = "Opera"
        } else if ua.has("SamsungBrowser") {
            browser = "Samsung Internet"
        } else if ua.has("Firefox") || ua.has("FxiOS") {
            browser = "Firefox"
        } else if ua.has("CriOS") {
            browser = "Chrome"
        } else if ua.has("Chromium") {
            browser = "Chromium"
        } else if ua.has("Chrome") {
            browser = "Chrome"
        } else if ua.has("Trident") || ua.has("MSIE") {
            browser = "Internet Explorer"
        } else if ua.has("Safari"), system == "macOS" || system == "iOS" || system == "iPadOS" {
            browser = "Safari"
        } else if ua.has("AppleWebKit"), ua.has("Mobile"), system == "iOS" || system == "iPadOS" {
            // WebKit on iOS without Safari's token: a web view inside an app.
            self.init(kind: .app, browser: nil, system: system)
            return
        } else {
            browser = nil
        }
        self.init(kind: browser == nil ? .unknown : .browser, browser: browser, system: system)
    }

    /// A stable key of the device without versions, `browser|system|kind` (nil as empty): what
    /// "a device the account has not used before" compares.
    public var key: String { "\(browser ?? "")|\(system ?? "")|\(kind.rawValue)" }
}

/// The bytes of a user agent and whole-token searches over them.
private struct Tokens {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A byte that continues a name: a token must not be glued to one on either side.
    static func isNameByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// Whether `token` occurs as a whole token (ASCII, case-sensitive).
    func has(_ token: StaticString) -> Bool {
        let n = token.utf8CodeUnitCount
        guard n > 0, n <= bytes.count else { return false }
        return token.withUTF8Buffer { needle in
            bytes.withUnsafeBufferPointer { hay in
                let first = needle[0], last = hay.count - n
                var i = 0
                while i <= last {
                    if hay[i] == first, i == 0 || !Self.isNameByte(hay[i - 1]) {
                        var j = 1
                        while j < n, hay[i + j] == needle[j] { j += 1 }
                        if j == n, i + n == hay.count || !Self.isNameByte(hay[i + n]) { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }

    /// The operating system, most specific first: iOS user agents say "like Mac OS X", Android's
    /// say "Linux", ChromeOS's say "X11".
    var system: String? {
        if has("iPad") { return "iPadOS" }
        if has("iPhone") || has("iPod") || has("iOS") { return "iOS" }
        if has("Android") { return "Android" }
        if has("CrOS") { return "ChromeOS" }
        if has("Windows") { return "Windows" }
        if has("Macintosh") || has("Mac OS X") || has("macOS") { return "macOS" }
        if has("Linux") || has("X11") || has("Ubuntu") { return "Linux" }
        return nil
    }

    /// A tool's name, from its library's token.
    var tool: String? {
        if has("curl") || has("libcurl") { return "curl" }
        if has("Wget") { return "Wget" }
        if has("python-requests") || has("Python-urllib") || has("aiohttp") || has("python-httpx") { return "Python" }
        if has("Go-http-client") { return "Go" }
        if has("node-fetch") || has("undici") || has("axios") || has("node") { return "Node.js" }
        if has("Java") || has("Java-http-client") || has("Apache-HttpClient") { return "Java" }
        if has("PostmanRuntime") { return "Postman" }
        return nil
    }

    /// An app's name: the user agent's first product token (`Name/version`) when it is 1…40 bytes
    /// of letters, digits, `.`, `_` and `-` and not a library's or the browser convention's.
    var appName: String? {
        var end = 0
        while end < bytes.count, Self.isNameByte(bytes[end]) { end += 1 }
        guard end > 0, end <= DeviceName.maxNameLength, end < bytes.count, bytes[end] == UInt8(ascii: "/") else { return nil }
        let name = String(decoding: bytes[..<end], as: UTF8.self)
        switch name {
        case "Mozilla", "CFNetwork", "Darwin", "Dalvik", "okhttp", "Alamofire": return nil
        default: return name
        }
    }
}
