@testable import AuthWeb
import Testing

/// The QR code of the authenticator enrolment: libqrencode's symbol (error correction M, as its
/// format information says) and our SVG of it (quiet zone, one path, nothing but numbers and the
/// escaped label).
@Suite("QR code")
struct QRCodeTests {
    static let uri = "otpauth://totp/auth.example.com:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        + "&issuer=auth.example.com&algorithm=SHA1&digits=6&period=30"

    /// The 15 format bits next to the top-left finder (ISO/IEC 18004 §7.9), unmasked.
    static func formatBits(_ s: QRCode.Symbol) -> Int {
        var bits = 0
        func put(_ i: Int, _ dark: Bool) { if dark { bits |= 1 << i } }
        for i in 0..<6 { put(i, s.isDark(x: 8, y: i)) }
        put(6, s.isDark(x: 8, y: 7))
        put(7, s.isDark(x: 8, y: 8))
        put(8, s.isDark(x: 7, y: 8))
        for i in 9..<15 { put(i, s.isDark(x: 14 - i, y: 8)) }
        return bits ^ 0x5412
    }

    /// The same 15 bits, from their second copy (beside the other two finders).
    static func formatBitsCopy(_ s: QRCode.Symbol) -> Int {
        var bits = 0
        let w = s.width
        for i in 0..<8 where s.isDark(x: w - 1 - i, y: 8) { bits |= 1 << i }
        for i in 8..<15 where s.isDark(x: 8, y: w - 15 + i) { bits |= 1 << i }
        return bits ^ 0x5412
    }

    /// A finder pattern's 7 × 7 modules at (x, y): dark ring, light ring, dark 3 × 3 centre.
    static func isFinder(_ s: QRCode.Symbol, x: Int, y: Int) -> Bool {
        for dy in 0..<7 {
            for dx in 0..<7 {
                let ring = max(abs(dx - 3), abs(dy - 3))
                if s.isDark(x: x + dx, y: y + dy) != (ring != 2) { return false }
            }
        }
        return true
    }

    /// The path's rectangles back into modules (the drawing's coordinates, quiet zone included).
    static func modules(ofPath d: String, side: Int) throws -> [Bool] {
        var grid = [Bool](repeating: false, count: side * side)
        for piece in d.split(separator: "z") {
            // M<x> <y>h<n>v1h-<n>
            let numbers = piece.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            try #require(numbers.count == 5 && numbers[3] == 1 && numbers[4] == numbers[2], "\(piece)")
            let (x, y, n) = (numbers[0], numbers[1], numbers[2])
            #expect(piece == "M\(x) \(y)h\(n)v1h-\(n)")
            for i in x..<(x + n) {
                #expect(!grid[y * side + i], "modules drawn once")
                grid[y * side + i] = true
            }
        }
        return grid
    }

    @Test("a short text is a version 1 symbol at level M with its finders and timing patterns")
    func symbol() throws {
        let s = try #require(QRCode.encode("HELLO WORLD"), "libqrencode: \(QRCode.loadError)")
        #expect(s.width == 21)
        #expect(Self.isFinder(s, x: 0, y: 0) && Self.isFinder(s, x: 14, y: 0) && Self.isFinder(s, x: 0, y: 14))
        for i in 8..<13 {
            #expect(s.isDark(x: i, y: 6) == (i % 2 == 0), "horizontal timing")
            #expect(s.isDark(x: 6, y: i) == (i % 2 == 0), "vertical timing")
        }
        #expect(s.isDark(x: 8, y: 13), "the dark module")
        let format = Self.formatBits(s)
        #expect(format >> 13 == 0b00, "error correction level M")
        #expect(Self.formatBitsCopy(s) == format)
    }

    @Test("an otpauth URI fits a small symbol, at level M, the same every time")
    func uriSymbol() throws {
        let s = try #require(QRCode.encode(Self.uri))
        #expect((s.width - 17) % 4 == 0 && s.width <= 57, "version \((s.width - 17) / 4)")
        #expect(Self.formatBits(s) >> 13 == 0b00)
        #expect(QRCode.encode(Self.uri) == s)
        #expect(QRCode.encode(Self.uri + "x") != s)
    }

    @Test("the SVG: a viewBox with a 4-module quiet zone, a white square, one path of exactly the dark modules")
    func svg() throws {
        let s = try #require(QRCode.encode(Self.uri))
        let side = s.width + 8
        let label = #"Scan "this" <code> & add"#
        let svg = QRCode.svg(s, label: label)
        let scale = QRCode.scale(side: side)
        #expect(scale >= 2 && side * scale <= 256)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" "))
        #expect(svg.hasSuffix("</svg>"))
        #expect(svg.contains(" viewBox=\"0 0 \(side) \(side)\" width=\"100%\" height=\"\(side * scale)\" shape-rendering=\"crispEdges\""))
        #expect(svg.contains("role=\"img\" aria-label=\"Scan &quot;this&quot; &lt;code&gt; &amp; add\""))
        #expect(svg.contains("<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/>"))
        #expect(svg.ranges(of: "<path ").count == 1, "one path")
        // Nothing the pages' CSP would refuse or a reader could act on.
        for banned in ["<script", "style=", "href", " on", "<foreignObject", "<text", "<image"] {
            #expect(!svg.contains(banned), "\(banned)")
        }
        // Only the elements and numbers above: no text but the label.
        let d = try #require(svg.split(separator: "d=\"").last?.split(separator: "\"").first).description
        #expect(d.allSatisfy { "0123456789 Mhvz-".contains($0) })
        let drawn = try Self.modules(ofPath: d, side: side)
        for y in 0..<side {
            for x in 0..<side {
                let inside = (4..<(side - 4)).contains(x) && (4..<(side - 4)).contains(y)
                let expected = inside && s.isDark(x: x - 4, y: y - 4)
                #expect(drawn[y * side + x] == expected, "module \(x), \(y)")
            }
        }
    }

    @Test("text that cannot be encoded draws nothing")
    func unencodable() {
        #expect(QRCode.svg("", label: "x") == nil)
        #expect(QRCode.svg("a\u{0}b", label: "x") == nil)
        #expect(QRCode.svg(String(repeating: "x", count: 5000), label: "x") == nil)
    }
}
