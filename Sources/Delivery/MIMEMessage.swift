import AuthCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Builds an Internet message (RFC 5322) with MIME (RFC 2045–2047): multipart/alternative of a
/// plain-text and an HTML part, both UTF-8 quoted-printable; non-ASCII subjects and display names
/// as RFC 2047 encoded-words; `Date`, `Message-ID`, `MIME-Version`. Lines end in CRLF.
public struct MIMEMessage {
    public var fromAddress: String
    public var fromName: String?
    public var to: String
    public var subject: String
    public var text: String
    public var html: String?
    /// Seconds since the Unix epoch.
    public var date: Int64
    public var messageID: String
    /// Multipart boundary; must not occur in the bodies (random by default).
    public var boundary: String

    public init(fromAddress: String, fromName: String?, to: String, subject: String, text: String, html: String?,
                date: Int64, messageID: String, boundary: String? = nil) {
        self.fromAddress = fromAddress; self.fromName = fromName; self.to = to; self.subject = subject; self.text = text
        self.html = html; self.date = date; self.messageID = messageID
        self.boundary = boundary ?? "=_gh_" + (0..<24).map { _ in String(UInt8.random(in: 0...15), radix: 16) }.joined()
    }

    /// The whole message, ready for SMTP `DATA` or `sendmail -t`.
    public func rendered() -> [UInt8] {
        var h: [String] = []
        h.append("From: " + MIMEMessage.mailbox(name: fromName, address: MIMEMessage.oneLine(fromAddress)))
        h.append("To: <\(MIMEMessage.oneLine(to))>")
        h.append(MIMEMessage.header("Subject", MIMEMessage.encodedWords(subject)))
        h.append("Date: " + MIMEMessage.rfc5322Date(date))
        h.append("Message-ID: <\(MIMEMessage.oneLine(messageID))>")
        h.append("MIME-Version: 1.0")
        h.append("Auto-Submitted: auto-generated")
        var out: String
        if let html {
            h.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            out = h.joined(separator: "\r\n") + "\r\n\r\n"
            out += "This is a multi-part message in MIME format.\r\n\r\n"
            out += "--\(boundary)\r\n" + MIMEMessage.part("text/plain", text)
            out += "--\(boundary)\r\n" + MIMEMessage.part("text/html", html)
            out += "--\(boundary)--\r\n"
        } else {
            out = h.joined(separator: "\r\n") + "\r\n" + MIMEMessage.part("text/plain", text)
        }
        return Array(out.utf8)
    }

    static func part(_ type: String, _ body: String) -> String {
        "Content-Type: \(type); charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
            + quotedPrintable(body) + "\r\n"
    }

    static func header(_ name: String, _ value: String) -> String { name + ": " + value }

    /// An address or id with CR and LF dropped, so that it cannot end its header and start another.
    static func oneLine(_ s: String) -> String { String(s.unicodeScalars.filter { $0.value != 0x0D && $0.value != 0x0A }) }

    // MARK: - RFC 2047 encoded-words

    static func isPlainASCII(_ s: String) -> Bool {
        s.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } && !s.contains("=?")
    }

    /// Printable ASCII folded at spaces, else `=?UTF-8?B?…?=` words of at most 75 characters,
    /// split on character boundaries and folded so no line passes 76 characters.
    public static func encodedWords(_ s: String) -> String {
        let clean = String(s.unicodeScalars.filter { $0.value != 0x0D && $0.value != 0x0A })
        if isPlainASCII(clean) { return folded(clean) }
        var words: [String] = []
        var chunk: [UInt8] = []
        for ch in clean {
            let bytes = Array(String(ch).utf8)
            if chunk.count + bytes.count > 39 {
                words.append(word(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(word(chunk)) }
        return words.joined(separator: "\r\n ")
    }

    /// Printable ASCII folded at spaces so that lines (after a header name) stay within 76 characters.
    static func folded(_ s: String) -> String {
        var lines: [String] = []
        var line = ""
        for w in s.split(separator: " ", omittingEmptySubsequences: false) {
            if line.isEmpty && lines.isEmpty { line = String(w) }
            else if line.count + 1 + w.count > 66 { lines.append(line); line = String(w) }
            else { line += " " + w }
        }
        lines.append(line)
        return lines.joined(separator: "\r\n ")
    }

    static func word(_ bytes: [UInt8]) -> String { "=?UTF-8?B?" + Base64URL.encodeStandard(bytes) + "?=" }

    /// `"Name" <addr>` (quoted when ASCII) or `=?UTF-8?B?…?= <addr>`; just `<addr>` without a name.
    static func mailbox(name: String?, address: String) -> String {
        guard let name, !name.isEmpty else { return "<\(address)>" }
        let clean = String(name.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
        if isPlainASCII(clean) {
            let quoted = clean.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
            return "\"\(quoted)\" <\(address)>"
        }
        return encodedWords(clean) + "\r\n <\(address)>"
    }

    // MARK: - Quoted-printable (RFC 2045 §6.7)

    /// UTF-8 quoted-printable with CRLF line ends and soft breaks keeping lines ≤ 76 characters.
    /// A leading `.` and a leading `From ` are encoded so no relay or mailbox alters the line.
    public static func quotedPrintable(_ text: String) -> String {
        let normalized = text.replacing("\r\n", with: "\n").replacing("\r", with: "\n")
        let hex = Array("0123456789ABCDEF")
        var lines: [String] = []
        for line in normalized.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8)
            var out = ""
            var width = 0
            for (i, b) in bytes.enumerated() {
                let last = i == bytes.count - 1
                let literal = (b >= 33 && b <= 126 && b != UInt8(ascii: "="))
                    || ((b == 0x20 || b == 0x09) && !last)
                let mustEncodeLeading = width == 0 && i == 0 && (b == UInt8(ascii: ".") || (b == UInt8(ascii: "F") && line.hasPrefix("From ")))
                let encoded: String = "=" + String(hex[Int(b >> 4)]) + String(hex[Int(b & 0xF)])
                let token: String = (literal && !mustEncodeLeading) ? String(UnicodeScalar(b)) : encoded
                if width + token.count > 75 {
                    out += "=\r\n"
                    width = 0
                }
                out += token
                width += token.count
            }
            lines.append(out)
        }
        return lines.joined(separator: "\r\n")
    }

    // MARK: - Date (RFC 5322 §3.3)

    public static func rfc5322Date(_ date: Int64) -> String {
        var t = time_t(date)
        var tm = tm()
        gmtime_r(&t, &tm)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(tm.tm_wday)]), \(two(tm.tm_mday)) \(months[Int(tm.tm_mon)]) \(tm.tm_year + 1900) "
            + "\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)) +0000"
    }
}
