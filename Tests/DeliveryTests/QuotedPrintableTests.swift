@testable import Delivery
import Testing

/// RFC 2045 §6.7 quoted-printable as the MIME builder writes it.
@Suite("Quoted-printable")
struct QuotedPrintableTests {
    /// Decodes quoted-printable (soft breaks removed, `=XX` to bytes, CRLF to LF), to check that
    /// what the encoder writes means the text it was given.
    static func decode(_ s: String) -> String? {
        let b = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        while i < b.count {
            if b[i] == UInt8(ascii: "=") {
                if i + 2 < b.count, b[i + 1] == 0x0D, b[i + 2] == 0x0A { i += 3; continue }
                guard i + 2 < b.count, let h = hex(b[i + 1]), let l = hex(b[i + 2]) else { return nil }
                out.append(h << 4 | l)
                i += 3
            } else if b[i] == 0x0D, i + 1 < b.count, b[i + 1] == 0x0A {
                out.append(0x0A)
                i += 2
            } else {
                out.append(b[i])
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    @Test("printable ASCII passes through; = is =3D", arguments: [
        ("Hello, world! 1+1=2 <a href=\"x\">", "Hello, world! 1+1=3D2 <a href=3D\"x\">"), ("", ""), ("~{|}", "~{|}"),
    ])
    func printable(text: String, expected: String) {
        #expect(MIMEMessage.quotedPrintable(text) == expected)
    }

    @Test("non-ASCII and control bytes are =XX in upper-case hex", arguments: [
        ("é", "=C3=A9"), ("€ 😀", "=E2=82=AC =F0=9F=98=80"), ("\u{1}\u{7F}", "=01=7F"), ("a\u{0}b", "a=00b"),
    ])
    func encodedBytes(text: String, expected: String) {
        #expect(MIMEMessage.quotedPrintable(text) == expected)
    }

    @Test("a space or tab ending a line is encoded; inside a line it is not", arguments: [
        ("a ", "a=20"), ("a\t", "a=09"), (" ", "=20"), ("a b\tc", "a b\tc"), ("a \nb", "a=20\r\nb"), ("a  ", "a =20"),
    ])
    func trailingWhitespace(text: String, expected: String) {
        #expect(MIMEMessage.quotedPrintable(text) == expected)
    }

    @Test("LF, CRLF and CR all end a line with CRLF")
    func lineEnds() {
        #expect(MIMEMessage.quotedPrintable("a\nb\r\nc\rd\n") == "a\r\nb\r\nc\r\nd\r\n")
        #expect(MIMEMessage.quotedPrintable("\n\n") == "\r\n\r\n")
    }

    @Test("a leading dot and a leading From are encoded, so no relay or mailbox alters the line")
    func leadingDotAndFrom() {
        #expect(MIMEMessage.quotedPrintable(".\n..x\nFrom me\nFrom\nFromage\n a.") == "=2E\r\n=2E.x\r\n=46rom me\r\nFrom\r\nFromage\r\n a.")
    }

    @Test("long lines get soft breaks: at most 75 characters and = per line")
    func softBreaks() {
        #expect(MIMEMessage.quotedPrintable(String(repeating: "a", count: 100))
            == String(repeating: "a", count: 75) + "=\r\n" + String(repeating: "a", count: 25))
        #expect(MIMEMessage.quotedPrintable(String(repeating: "a", count: 75)) == String(repeating: "a", count: 75))
        #expect(MIMEMessage.quotedPrintable(String(repeating: "a", count: 76)) == String(repeating: "a", count: 75) + "=\r\na")
    }

    @Test("a soft break never splits an =XX escape")
    func escapeNotSplit() {
        #expect(MIMEMessage.quotedPrintable(String(repeating: "a", count: 74) + "é")
            == String(repeating: "a", count: 74) + "=\r\n=C3=A9")
        #expect(MIMEMessage.quotedPrintable(String(repeating: "a", count: 72) + "é")
            == String(repeating: "a", count: 72) + "=C3=\r\n=A9")
        #expect(MIMEMessage.quotedPrintable(String(repeating: "=", count: 26)) == String(repeating: "=3D", count: 25) + "=\r\n=3D")
    }

    @Test("whatever the text, lines stay within 76 characters, only ASCII is written, and it decodes to the text", arguments: [
        String(repeating: "é", count: 100), String(repeating: "a ", count: 60), String(repeating: " ", count: 90),
        String(repeating: "😀x", count: 40) + "\n.\nFrom x", String(repeating: "a", count: 74) + " \nb",
        "Your code is 123456.\n\nIf you did not ask for it, ignore this message.\n", String(repeating: "=\t", count: 50),
    ])
    func properties(text: String) throws {
        let qp = MIMEMessage.quotedPrintable(text)
        #expect(qp.utf8.allSatisfy { $0 < 0x80 })
        for line in qp.split(separator: "\r\n", omittingEmptySubsequences: false) {
            #expect(line.utf8.count <= 76, "\(line)")
            // No line ends in whitespace a relay could strip.
            #expect(line.last != " " && line.last != "\t", "\(line)")
        }
        let normalized = text.replacing("\r\n", with: "\n").replacing("\r", with: "\n")
        #expect(Self.decode(qp) == normalized)
    }
}
