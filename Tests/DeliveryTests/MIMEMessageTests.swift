@testable import Delivery
import Testing

/// `MIMEMessage`: the message SMTP `DATA` and `sendmail -t` get, byte for byte.
@Suite("MIME message")
struct MIMEMessageTests {
    static let newYear: Int64 = 1_767_225_600  // Thu, 01 Jan 2026 00:00:00 UTC

    func message(fromName: String? = "Example Sign-in", to: String = "ana@example.org", subject: String = "Sign in to Example",
                 text: String = "Hello Ana,\n\nYour code: 123456", html: String? = #"<p>Hello <a href="https://e.x/?a=1">Ana</a></p>"#)
        -> MIMEMessage {
        MIMEMessage(fromAddress: "signin@example.com", fromName: fromName, to: to, subject: subject, text: text, html: html,
                    date: Self.newYear, messageID: "gatehouse.7.1767225600000@example.com", boundary: "=_gh_test")
    }

    func rendered(_ m: MIMEMessage) -> String { String(decoding: m.rendered(), as: UTF8.self) }

    /// The header lines of a rendered message, folded lines joined to the line they continue.
    func headerFields(_ m: MIMEMessage) -> [String] {
        let text = rendered(m)
        let head = text[..<(text.firstRange(of: "\r\n\r\n")?.lowerBound ?? text.endIndex)]
        var fields: [String] = []
        for line in head.split(separator: "\r\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(" ") || line.hasPrefix("\t"), !fields.isEmpty { fields[fields.count - 1] += line } else { fields.append(String(line)) }
        }
        return fields
    }

    @Test("a text and HTML message: headers, then multipart/alternative of two quoted-printable UTF-8 parts")
    func multipart() {
        #expect(rendered(message()) == """
            From: "Example Sign-in" <signin@example.com>\r
            To: <ana@example.org>\r
            Subject: Sign in to Example\r
            Date: Thu, 01 Jan 2026 00:00:00 +0000\r
            Message-ID: <gatehouse.7.1767225600000@example.com>\r
            MIME-Version: 1.0\r
            Auto-Submitted: auto-generated\r
            Content-Type: multipart/alternative; boundary="=_gh_test"\r
            \r
            This is a multi-part message in MIME format.\r
            \r
            --=_gh_test\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            Hello Ana,\r
            \r
            Your code: 123456\r
            --=_gh_test\r
            Content-Type: text/html; charset=utf-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            <p>Hello <a href=3D"https://e.x/?a=3D1">Ana</a></p>\r
            --=_gh_test--\r

            """)
    }

    @Test("a text-only message is a single text/plain part, without a sender name")
    func textOnly() {
        #expect(rendered(message(fromName: nil, text: "Code: 1", html: nil)) == """
            From: <signin@example.com>\r
            To: <ana@example.org>\r
            Subject: Sign in to Example\r
            Date: Thu, 01 Jan 2026 00:00:00 +0000\r
            Message-ID: <gatehouse.7.1767225600000@example.com>\r
            MIME-Version: 1.0\r
            Auto-Submitted: auto-generated\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            Code: 1\r

            """)
    }

    @Test("every line ends in CRLF, and no line passes 76 characters")
    func lines() {
        let long = String(repeating: "Lorem ipsum dolor sit amet, é ü 😀 ", count: 20)
        let bytes = message(subject: long, text: long + "\n" + long, html: "<p>" + long + "</p>").rendered()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.replacing("\r\n", with: "").contains("\n") && !text.replacing("\r\n", with: "").contains("\r"))
        #expect(text.hasSuffix("\r\n"))
        let tooLong = text.split(separator: "\r\n").filter { $0.utf8.count > 76 }
        #expect(tooLong.isEmpty, "\(tooLong)")
        #expect(bytes.allSatisfy { $0 < 0x80 })
    }

    @Test("the default boundary is random, and cannot occur in a quoted-printable body")
    func boundary() {
        let a = MIMEMessage(fromAddress: "a@b.c", fromName: nil, to: "d@e.f", subject: "s", text: "t", html: "h", date: 0, messageID: "m")
        let b = MIMEMessage(fromAddress: "a@b.c", fromName: nil, to: "d@e.f", subject: "s", text: "t", html: "h", date: 0, messageID: "m")
        #expect(a.boundary != b.boundary)
        #expect(a.boundary.hasPrefix("=_gh_") && a.boundary.utf8.count == 29)
        #expect(a.boundary.dropFirst(5).allSatisfy { $0.isHexDigit })
        // A body spelling the boundary out: "=" is always =3D in quoted-printable, so it cannot match.
        let hostile = message(text: "--=_gh_test--\n--=_gh_test", html: "--=_gh_test")
        let body = rendered(hostile).split(separator: "\r\n").filter { $0.hasPrefix("--=_gh_test") }
        #expect(body == ["--=_gh_test", "--=_gh_test", "--=_gh_test--"])
    }

    @Test("dates are RFC 5322 in UTC", arguments: [
        (0, "Thu, 01 Jan 1970 00:00:00 +0000"), (951_782_400, "Tue, 29 Feb 2000 00:00:00 +0000"),
        (1_709_164_800, "Thu, 29 Feb 2024 00:00:00 +0000"), (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 +0000"),
        (1_767_225_600 + 3_723, "Thu, 01 Jan 2026 01:02:03 +0000"),
    ] as [(Int64, String)])
    func date(seconds: Int64, text: String) {
        #expect(MIMEMessage.rfc5322Date(seconds) == text)
    }

    // MARK: - Header injection

    @Test("CR or LF in the subject cannot start a header")
    func subjectInjection() {
        let fields = headerFields(message(subject: "Hello\r\nBcc: victim@example.net\nX-Evil: 1"))
        #expect(fields.contains("Subject: HelloBcc: victim@example.netX-Evil: 1"))
        #expect(!fields.contains { $0.hasPrefix("Bcc:") || $0.hasPrefix("X-Evil:") })
    }

    @Test("CR or LF in the sender's name cannot start a header")
    func nameInjection() {
        let fields = headerFields(message(fromName: "Evil\r\nBcc: victim@example.net"))
        #expect(fields.first == #"From: "EvilBcc: victim@example.net" <signin@example.com>"#)
        #expect(!fields.contains { $0.hasPrefix("Bcc:") })
    }

    @Test("CR or LF in an address cannot start a header")
    func addressInjection() {
        var m = message(to: "ana@example.org\r\nBcc: victim@example.net")
        m.fromAddress = "signin@example.com\nX-Evil: 1"
        m.messageID = "id@example.com\r\nX-Evil: 2"
        let fields = headerFields(m)
        #expect(!fields.contains { $0.hasPrefix("Bcc:") || $0.hasPrefix("X-Evil:") }, "\(fields)")
        #expect(fields.contains("To: <ana@example.orgBcc: victim@example.net>"))
        #expect(fields.contains(#"From: "Example Sign-in" <signin@example.comX-Evil: 1>"#))
        // A bare LF ends a line for sendmail and many relays.
        #expect(!rendered(m).replacing("\r\n", with: "").contains("\n"))
    }

    // MARK: - RFC 2047 encoded words

    @Test("a printable ASCII subject is left as it is")
    func asciiSubject() {
        #expect(MIMEMessage.encodedWords("Sign in to Example (code: 1234) — no") != "Sign in to Example (code: 1234) — no")
        #expect(MIMEMessage.encodedWords("Sign in to Example (code: 1234)!") == "Sign in to Example (code: 1234)!")
        #expect(MIMEMessage.encodedWords("") == "")
    }

    @Test("a long ASCII subject is folded at spaces, and unfolds to itself")
    func folding() {
        let subject = Array(repeating: "abcd", count: 20).joined(separator: " ")
        let folded = MIMEMessage.encodedWords(subject)
        #expect(folded == Array(repeating: "abcd", count: 13).joined(separator: " ") + "\r\n " + Array(repeating: "abcd", count: 7).joined(separator: " "))
        #expect(folded.replacing("\r\n", with: "") == subject)
    }

    @Test("non-ASCII text becomes base64 UTF-8 encoded words", arguments: [
        ("Connexion à Example", "=?UTF-8?B?Q29ubmV4aW9uIMOgIEV4YW1wbGU=?="),
        ("Jürgen Müller", "=?UTF-8?B?SsO8cmdlbiBNw7xsbGVy?="),
        ("😀", "=?UTF-8?B?8J+YgA==?="),
        // ASCII that looks like an encoded word, or holds a control character, is encoded too.
        ("a =?x?= b", "=?UTF-8?B?YSA9P3g/PSBi?="),
        ("Tab\there", "=?UTF-8?B?VGFiCWhlcmU=?="),
    ])
    func encoded(subject: String, expected: String) {
        #expect(MIMEMessage.encodedWords(subject) == expected)
    }

    @Test("long non-ASCII text is split into words of at most 39 bytes, never inside a character")
    func splitWords() {
        #expect(MIMEMessage.encodedWords(String(repeating: "é", count: 30))
            == "=?UTF-8?B?w6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6k=?=\r\n =?UTF-8?B?w6nDqcOpw6nDqcOpw6nDqcOpw6nDqQ==?=")
        #expect(MIMEMessage.encodedWords(String(repeating: "😀", count: 10))
            == "=?UTF-8?B?8J+YgPCfmIDwn5iA8J+YgPCfmIDwn5iA8J+YgPCfmIDwn5iA?=\r\n =?UTF-8?B?8J+YgA==?=")
    }

    @Test("sender names: quoted when ASCII (quotes and backslashes escaped), encoded words otherwise", arguments: [
        ("Example", #""Example" <a@b.c>"#), (#"Ann "A" \ B"#, #""Ann \"A\" \\ B" <a@b.c>"#), ("Zoë", "=?UTF-8?B?Wm/Dqw==?=\r\n <a@b.c>"),
        ("", "<a@b.c>"), ("Tab\tName", #""TabName" <a@b.c>"#),
    ])
    func mailbox(name: String, expected: String) {
        #expect(MIMEMessage.mailbox(name: name, address: "a@b.c") == expected)
    }
}
