import CQRencode

/// A QR code drawn on the server as inline SVG markup, for the account page's authenticator-app
/// enrolment: no image request, no script (the pages' CSP allows neither inline script nor
/// inline style, and needs neither here: colours and sizes are SVG presentation attributes, not
/// `style`). The symbol comes from libqrencode (`CQRencode`, opened on first use) at error
/// correction level M; the drawing is ours.
///
/// The markup is one `<svg>` with a `viewBox` of the symbol plus its quiet zone (4 modules each
/// side, as the standard asks), a white square under it and one `<path>` of the dark modules:
/// each row's runs of dark modules as rectangles. Its width is the container's and its height a
/// whole number of CSS pixels per module, so the square is drawn centred without blur at that
/// size, and shrinks with a container narrower than that. The only text in it is the label,
/// escaped as template text is.
public enum QRCode {
    /// Modules of light margin on each side.
    static let quietZone = 4

    /// Whether libqrencode loads (`gatehouse config check` says so when it does not).
    public static var libraryLoads: Bool { encode("gatehouse") != nil }

    /// A symbol: `width` × `width` modules, row by row, `true` for dark.
    struct Symbol: Equatable {
        let width: Int
        let dark: [Bool]

        func isDark(x: Int, y: Int) -> Bool { dark[y * width + x] }
    }

    /// `text` as a QR symbol; nil when libqrencode cannot be loaded or the text cannot be encoded.
    static func encode(_ text: String) -> Symbol? {
        var modules = [UInt8](repeating: 0, count: Int(GH_QR_MAX_WIDTH) * Int(GH_QR_MAX_WIDTH))
        let capacity = modules.count
        var text = text
        let width = text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                modules.withUnsafeMutableBufferPointer { gh_qr_encode(chars.baseAddress, chars.count, $0.baseAddress, capacity) }
            }
        }
        guard width > 0 else { return nil }
        let count = Int(width) * Int(width)
        return Symbol(width: Int(width), dark: modules[..<count].map { $0 != 0 })
    }

    /// Why the library could not be loaded ("" when it was).
    static var loadError: String {
        gh_qr_load() == 1 ? "" : String(cString: gh_qr_load_error())
    }

    /// CSS pixels per module: as large as keeps the drawing within `target` pixels, at least 2.
    static func scale(side: Int, target: Int = 256) -> Int { max(2, min(8, target / side)) }

    /// The SVG markup for `symbol`, labelled `label` for assistive technology.
    static func svg(_ symbol: Symbol, label: String) -> String {
        let side = symbol.width + 2 * quietZone
        let height = side * scale(side: side)
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"qr-code\" id=\"qr-code\" role=\"img\" aria-label=\""
        out += MustacheRenderer.escaped(label)
        out += "\" viewBox=\"0 0 \(side) \(side)\" width=\"100%\" height=\"\(height)\" shape-rendering=\"crispEdges\">"
        // White under the code whatever the page's colour scheme: readers want dark on light.
        out += "<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/><path fill=\"#000\" d=\""
        out += path(symbol)
        out += "\"/></svg>"
        return out
    }

    /// `text` drawn as SVG markup; nil when it cannot be (see `encode`).
    static func svg(_ text: String, label: String) -> String? {
        encode(text).map { svg($0, label: label) }
    }

    /// The dark modules as path data: one `M x y h n v1 h -n z` per run of dark modules in a row,
    /// offset by the quiet zone.
    static func path(_ symbol: Symbol) -> String {
        var d = ""
        for y in 0..<symbol.width {
            var x = 0
            while x < symbol.width {
                guard symbol.isDark(x: x, y: y) else { x += 1; continue }
                var end = x + 1
                while end < symbol.width && symbol.isDark(x: end, y: y) { end += 1 }
                let run = end - x
                d += "M\(x + quietZone) \(y + quietZone)h\(run)v1h-\(run)z"
                x = end
            }
        }
        return d
    }
}
