/// A stacked bar chart drawn on the server as inline SVG markup, for the operator console: no
/// script, no `style` attribute and no `<style>` element (the console's CSP may forbid inline
/// styles); every colour, size and font is an SVG presentation attribute.
///
/// The drawing:
/// - one bar per bucket, the series stacked in their order (the first at the bottom), each
///   segment a `<rect>` with a `<title>` "series: value (bucket)" for hover and screen readers;
///   a segment whose value is 0 is not drawn;
/// - a y axis of "nice" ticks (1, 2 or 5 × 10^k, see `Axis`) with gridlines, its top the first
///   tick at or above the tallest bar (an all-zero chart has the axis 0…1);
/// - at most `maxBucketLabels` bucket labels under the axis (every `labelStride`-th bucket from
///   the first), each cut with "…" to the room between two drawn labels, so they never overlap;
/// - a legend under the chart: a swatch, the series' name and its total, flowing into rows.
///
/// Colours: a series' colour is its position in `series` (`colour(forSeriesAt:)`), from a fixed
/// palette of 8 (`palette`, repeated from the 9th series on); callers do not pass colours, so no
/// caller text ever lands in a `fill` attribute. Each palette colour has a contrast of at least
/// 3:1 against white and against a dark page (#121212), as WCAG asks of graphics (1.4.11).
/// Text, axes and gridlines are `currentColor`, so the chart follows the page's text colour.
///
/// Values: a negative value counts as 0; sums (a bar's height, a series' total) saturate at
/// `Int.max` instead of trapping. A series with fewer values than buckets has 0 in the missing
/// buckets; values past the last bucket are ignored (not drawn, not in the total).
///
/// The markup scales with its container (`viewBox`, `width="100%"`), so it reads on a phone.
/// Every text (title, labels, names, `emptyText`, `groupingSeparator`) is XML-escaped
/// (`& < > " '`), with C0 control characters that XML forbids replaced by U+FFFD; `idPrefix` is
/// reduced to `[A-Za-z0-9_-]` (see `sanitizedID`). Coordinates are in hundredths of a unit,
/// written without exponent or trailing zeros, so the same chart is the same bytes everywhere.
struct BarChart: Sendable {
    struct Series: Sendable {
        let name: String
        /// One value per bucket.
        let values: [Int]

        init(name: String, values: [Int]) {
            self.name = name
            self.values = values
        }
    }

    /// One label per bucket (e.g. "14h", "Nov 3"); only some are drawn under the axis so they
    /// never overlap (all are in the bars' titles).
    let bucketLabels: [String]
    /// Stacked per bucket, the first at the bottom.
    let series: [Series]
    /// The accessible name: `<svg role="img" aria-labelledby=…><title>…</title>`.
    let title: String
    /// Drawn in an empty frame when there is no bucket or no series.
    let emptyText: String
    /// Between groups of three digits ("1,234,567").
    let groupingSeparator: String

    init(bucketLabels: [String], series: [Series], title: String, emptyText: String = "No data", groupingSeparator: String = ",") {
        self.bucketLabels = bucketLabels
        self.series = series
        self.title = title
        self.emptyText = emptyText
        self.groupingSeparator = groupingSeparator
    }

    // MARK: Palette

    /// Okabe–Ito's colour-blind-safe hues, the light ones darkened to 3:1 against white (orange
    /// to ochre), and three more of the same contrast.
    static let palette: [String] = [
        "#0072B2", // blue
        "#D55E00", // vermilion
        "#009E73", // bluish green
        "#CC79A7", // reddish purple
        "#9A6A00", // ochre
        "#7570B3", // violet
        "#767676", // grey
        "#5E8C31", // olive
    ]

    /// The colour of the series at `index` (0-based): the palette's, repeated past its end.
    static func colour(forSeriesAt index: Int) -> String {
        palette[((index % palette.count) + palette.count) % palette.count]
    }

    // MARK: Geometry (units of the viewBox; "cu" values are hundredths of a unit)

    static let width = 640
    static let plotTop = 10
    static let plotHeight = 200
    static let rightMargin = 12
    static let minLeftMargin = 36
    /// From the plot's bottom to the bucket labels' baseline.
    static let bucketLabelOffset = 16
    /// From the plot's bottom to the first legend row's baseline.
    static let legendOffset = 40
    static let legendRowHeight = 18
    static let bottomPadding = 6
    static let emptyHeight = 120
    static let fontSize = 11
    /// At most this many bucket labels are drawn.
    static let maxBucketLabels = 8
    /// Longest legend name drawn (in characters) before "…".
    static let maxLegendNameLength = 32

    // MARK: Values

    static func clamped(_ value: Int) -> Int { max(0, value) }

    static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? Int.min : Int.max) : sum
    }

    /// The series' value in a bucket, clamped to 0 or more; 0 where the series has none.
    func value(series s: Int, bucket b: Int) -> Int {
        let values = series[s].values
        return b < values.count ? Self.clamped(values[b]) : 0
    }

    /// Each series' total over the buckets, saturating.
    var seriesTotals: [Int] {
        series.indices.map { s in
            bucketLabels.indices.reduce(0) { Self.saturatingAdd($0, value(series: s, bucket: $1)) }
        }
    }

    /// Each bucket's stacked total, saturating.
    var bucketTotals: [Int] {
        bucketLabels.indices.map { b in
            series.indices.reduce(0) { Self.saturatingAdd($0, value(series: $1, bucket: b)) }
        }
    }

    var isEmpty: Bool { bucketLabels.isEmpty || series.isEmpty }

    // MARK: Axis

    /// The y axis: ticks 0, step, 2·step, … up to `top`, the step 1, 2 or 5 × 10^k (k ≥ 0: the
    /// values are counts) and the smallest such that 4 steps reach the maximum, so a chart has 3
    /// to 5 ticks; a maximum of 0 or 1 has the axis 0…1 (2 ticks: counts have no halves).
    /// `UInt64`, since the top tick of a maximum near `Int.max` is 10^19.
    struct Axis: Sendable, Equatable {
        let step: UInt64
        let ticks: [UInt64]
        var top: UInt64 { ticks.last ?? 1 }
    }

    static func axis(max maximum: Int) -> Axis {
        let m = UInt64(clamped(maximum))
        if m <= 1 { return Axis(step: 1, ticks: [0, 1]) }
        var power: UInt64 = 1
        while true {
            for mantissa: UInt64 in [1, 2, 5] {
                let step = mantissa * power
                // m ≤ Int.max and step ≤ 5·10^18: m + step - 1 < UInt64.max.
                let steps = (m + step - 1) / step
                if steps <= 4 {
                    let n = Swift.max(2, steps)
                    return Axis(step: step, ticks: (0...n).map { $0 * step })
                }
            }
            power *= 10
        }
    }

    // MARK: Bucket labels

    /// Every how many buckets a label is drawn: at most `maxBucketLabels` of `count`.
    static func labelStride(count: Int) -> Int {
        Swift.max(1, (count + maxBucketLabels - 1) / maxBucketLabels)
    }

    /// The buckets whose label is drawn.
    static func drawnLabelIndices(count: Int) -> [Int] {
        Array(stride(from: 0, to: count, by: labelStride(count: count)))
    }

    // MARK: Layout

    struct Segment: Sendable, Equatable {
        let series: Int
        let value: Int
        /// Top edge and height, in hundredths.
        let yCu: Int
        let heightCu: Int
    }

    struct Bar: Sendable, Equatable {
        let bucket: Int
        let total: Int
        let xCu: Int
        let widthCu: Int
        /// Bottom first; segments of value 0 left out.
        let segments: [Segment]
    }

    struct Layout: Sendable {
        let axis: Axis
        let leftCu: Int
        let rightCu: Int
        let plotTopCu: Int
        let plotBottomCu: Int
        let bars: [Bar]

        /// The y of a value on the axis (0 at the plot's bottom, `axis.top` at its top).
        func yCu(_ value: UInt64) -> Int {
            let ratio = Double(value) / Double(axis.top)
            return plotBottomCu - Int((ratio * Double(plotBottomCu - plotTopCu)).rounded())
        }

        /// The left edge of a bucket's slot (the slot after the last one is the plot's right edge).
        func slotCu(_ bucket: Int, count: Int) -> Int {
            leftCu + bucket * (rightCu - leftCu) / count
        }
    }

    /// The left margin holds the longest tick label.
    func leftMarginCu(_ axis: Axis) -> Int {
        let longest = axis.ticks.map { Self.textWidthCu(Self.grouped($0, separator: groupingSeparator)) }.max() ?? 0
        return Swift.max(Self.minLeftMargin * 100, longest + 1000)
    }

    func layout() -> Layout {
        let totals = bucketTotals
        let axis = Self.axis(max: totals.max() ?? 0)
        let leftCu = leftMarginCu(axis)
        let rightCu = (Self.width - Self.rightMargin) * 100
        let plotTopCu = Self.plotTop * 100
        let plotBottomCu = (Self.plotTop + Self.plotHeight) * 100
        let frame = Layout(axis: axis, leftCu: leftCu, rightCu: rightCu, plotTopCu: plotTopCu, plotBottomCu: plotBottomCu, bars: [])
        let count = bucketLabels.count
        var bars: [Bar] = []
        bars.reserveCapacity(count)
        for b in 0..<count {
            let x0 = frame.slotCu(b, count: count), x1 = frame.slotCu(b + 1, count: count)
            let slot = x1 - x0
            // A fifth of the slot between bars, while a slot is 2 units or more.
            let gap = slot >= 200 ? slot / 5 : 0
            var segments: [Segment] = []
            var cumulative = 0
            var y = plotBottomCu
            for s in series.indices {
                let v = value(series: s, bucket: b)
                guard v > 0 else { continue }
                cumulative = Self.saturatingAdd(cumulative, v)
                // Each edge is the rounded position of the running total, so heights add up.
                let top = frame.yCu(UInt64(cumulative))
                segments.append(Segment(series: s, value: v, yCu: top, heightCu: y - top))
                y = top
            }
            bars.append(Bar(bucket: b, total: totals[b], xCu: x0 + gap / 2, widthCu: slot - gap, segments: segments))
        }
        return Layout(axis: axis, leftCu: leftCu, rightCu: rightCu, plotTopCu: plotTopCu, plotBottomCu: plotBottomCu, bars: bars)
    }

    // MARK: Rendering

    /// The markup: one `<svg>` element. `idPrefix` names its `<title>` and `<desc>` ids
    /// (`<prefix>-title`, `<prefix>-desc`), so give each chart of a page its own.
    func svg(idPrefix: String) -> String {
        let id = Self.sanitizedID(idPrefix)
        var out = ""
        out.reserveCapacity(isEmpty ? 512 : 1024 + bucketLabels.count * series.count * 120)
        if isEmpty {
            let h = Self.emptyHeight
            out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bar-chart\" viewBox=\"0 0 \(Self.width) \(h)\" width=\"100%\""
            out += " role=\"img\" aria-labelledby=\"\(id)-title\""
            out += " font-family=\"system-ui, sans-serif\" font-size=\"\(Self.fontSize)\" fill=\"currentColor\">"
            out += "<title id=\"\(id)-title\">\(Self.escaped(title))</title>"
            out += "<rect x=\"0.5\" y=\"0.5\" width=\"\(Self.width - 1)\" height=\"\(h - 1)\" fill=\"none\" stroke=\"currentColor\" stroke-opacity=\"0.3\"/>"
            out += "<text x=\"\(Self.width / 2)\" y=\"\(h / 2 + 4)\" text-anchor=\"middle\">\(Self.escaped(emptyText))</text>"
            out += "</svg>"
            return out
        }

        let geometry = layout()
        let totals = seriesTotals
        let legend = legendEntries(totals: totals)
        let legendRows = (legend.last?.row ?? 0) + 1
        let plotBottom = Self.plotTop + Self.plotHeight
        let height = plotBottom + Self.legendOffset + (legendRows - 1) * Self.legendRowHeight + Self.bottomPadding

        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bar-chart\" viewBox=\"0 0 \(Self.width) \(height)\" width=\"100%\""
        out += " role=\"img\" aria-labelledby=\"\(id)-title\" aria-describedby=\"\(id)-desc\""
        out += " font-family=\"system-ui, sans-serif\" font-size=\"\(Self.fontSize)\" fill=\"currentColor\">"
        out += "<title id=\"\(id)-title\">\(Self.escaped(title))</title>"
        out += "<desc id=\"\(id)-desc\">\(Self.escaped(description(totals: totals)))</desc>"

        // Gridlines and tick labels (the baseline is drawn over the bars).
        let left = Self.decimal(geometry.leftCu), right = Self.decimal(geometry.rightCu)
        let tickLabelX = Self.decimal(geometry.leftCu - 600)
        out += "<g class=\"bar-chart-grid\">"
        for tick in geometry.axis.ticks {
            let y = geometry.yCu(tick)
            if tick > 0 {
                out += "<line x1=\"\(left)\" y1=\"\(Self.decimal(y))\" x2=\"\(right)\" y2=\"\(Self.decimal(y))\" stroke=\"currentColor\" stroke-opacity=\"0.15\"/>"
            }
            out += "<text x=\"\(tickLabelX)\" y=\"\(Self.decimal(y + 400))\" text-anchor=\"end\">"
            out += Self.escaped(Self.grouped(tick, separator: groupingSeparator))
            out += "</text>"
        }
        out += "</g>"

        // Bars.
        out += "<g class=\"bar-chart-bars\">"
        for bar in geometry.bars where !bar.segments.isEmpty {
            let x = Self.decimal(bar.xCu), w = Self.decimal(bar.widthCu)
            let bucket = Self.escaped(bucketLabels[bar.bucket])
            for segment in bar.segments {
                out += "<rect x=\"\(x)\" y=\"\(Self.decimal(segment.yCu))\" width=\"\(w)\" height=\"\(Self.decimal(segment.heightCu))\""
                out += " fill=\"\(Self.colour(forSeriesAt: segment.series))\"><title>"
                out += Self.escaped(series[segment.series].name)
                out += ": "
                out += Self.escaped(Self.grouped(UInt64(segment.value), separator: groupingSeparator))
                out += " (\(bucket))</title></rect>"
            }
        }
        out += "</g>"
        out += "<line x1=\"\(left)\" y1=\"\(plotBottom)\" x2=\"\(right)\" y2=\"\(plotBottom)\" stroke=\"currentColor\" stroke-opacity=\"0.6\"/>"

        // Bucket labels, cut to the room between two drawn labels.
        let count = bucketLabels.count
        let stride = Self.labelStride(count: count)
        let room = stride * (geometry.rightCu - geometry.leftCu) / count - 800
        out += "<g class=\"bar-chart-labels\" text-anchor=\"middle\">"
        for b in Self.drawnLabelIndices(count: count) {
            let centre = (geometry.slotCu(b, count: count) + geometry.slotCu(b + 1, count: count)) / 2
            out += "<text x=\"\(Self.decimal(centre))\" y=\"\(plotBottom + Self.bucketLabelOffset)\">"
            out += Self.escaped(Self.truncated(bucketLabels[b], toWidthCu: room))
            out += "</text>"
        }
        out += "</g>"

        // Legend.
        out += "<g class=\"bar-chart-legend\">"
        for entry in legend {
            let baseline = plotBottom + Self.legendOffset + entry.row * Self.legendRowHeight
            out += "<rect x=\"\(Self.decimal(entry.xCu))\" y=\"\(baseline - 9)\" width=\"10\" height=\"10\" fill=\"\(Self.colour(forSeriesAt: entry.series))\"/>"
            out += "<text x=\"\(Self.decimal(entry.xCu + 1400))\" y=\"\(baseline)\">"
            out += Self.escaped(entry.name)
            out += " <tspan font-weight=\"bold\">"
            out += Self.escaped(entry.total)
            out += "</tspan></text>"
        }
        out += "</g>"
        out += "</svg>"
        return out
    }

    /// For screen readers (the drawing is one image to them): the first and last bucket, then
    /// each series' total.
    func description(totals: [Int]) -> String {
        var text = bucketLabels.count == 1 ? bucketLabels[0] : "\(bucketLabels[0]) – \(bucketLabels[bucketLabels.count - 1])"
        text += ". "
        text += series.indices.map { "\(series[$0].name): \(Self.grouped(UInt64(totals[$0]), separator: groupingSeparator))" }
            .joined(separator: "; ")
        text += "."
        return text
    }

    struct LegendEntry: Sendable, Equatable {
        let series: Int
        let name: String
        let total: String
        let row: Int
        let xCu: Int
    }

    /// The legend's entries, flowing left to right into rows as wide as the chart.
    func legendEntries(totals: [Int]) -> [LegendEntry] {
        let startCu = 400, endCu = (Self.width - 4) * 100
        var entries: [LegendEntry] = []
        var row = 0, x = startCu
        for s in series.indices {
            let name = Self.truncated(series[s].name, toCharacters: Self.maxLegendNameLength)
            let total = Self.grouped(UInt64(totals[s]), separator: groupingSeparator)
            // Swatch 10 + gap 4, the text (the bold total a little wider), then 16 before the next.
            let width = 1400 + Self.textWidthCu(name + " ") + Self.textWidthCu(total) * 11 / 10
            if x > startCu && x + width > endCu {
                row += 1
                x = startCu
            }
            entries.append(LegendEntry(series: s, name: name, total: total, row: row, xCu: x))
            x += width + 1600
        }
        return entries
    }

    // MARK: Text

    /// The estimated drawn width of `text` at the chart's font size, in hundredths: 0.6 em a
    /// character, 1 em for a wide (CJK, emoji) one. An estimate: the font is the reader's.
    static func textWidthCu(_ text: String) -> Int {
        text.reduce(0) { $0 + characterWidthCu($1) }
    }

    static func characterWidthCu(_ c: Character) -> Int {
        let wide = (c.unicodeScalars.first?.value ?? 0) >= 0x1100
        return fontSize * (wide ? 100 : 60)
    }

    /// `text` cut with "…" to at most `width` (at least one character and the "…").
    static func truncated(_ text: String, toWidthCu width: Int) -> String {
        guard textWidthCu(text) > width else { return text }
        let ellipsis = characterWidthCu("…")
        var out = "", used = 0
        for c in text {
            let w = characterWidthCu(c)
            if !out.isEmpty && used + w + ellipsis > width { break }
            out.append(c)
            used += w
        }
        return out + "…"
    }

    /// `text` cut with "…" to at most `limit` characters (the "…" included).
    static func truncated(_ text: String, toCharacters limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(Swift.max(1, limit - 1))) + "…"
    }

    /// `n` in decimal, `separator` between groups of three digits.
    static func grouped(_ n: UInt64, separator: String) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += separator }
            out.append(d)
        }
        return out
    }

    /// Hundredths as a decimal number: "123.45", "123.4", "123", "-0.5".
    static func decimal(_ cu: Int) -> String {
        let sign = cu < 0 ? "-" : ""
        let magnitude = cu.magnitude
        let whole = magnitude / 100, fraction = magnitude % 100
        if fraction == 0 { return "\(sign)\(whole)" }
        if fraction % 10 == 0 { return "\(sign)\(whole).\(fraction / 10)" }
        return "\(sign)\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// Text for an XML text node or a quoted attribute: the templates' escaping of `& < > " '`
    /// (`MustacheRenderer.escaped`, the one HTML encoder), after the C0 controls XML 1.0 does not
    /// allow (all but tab, line feed, carriage return) and U+FFFE/U+FFFF become U+FFFD.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: disallowed) else { return MustacheRenderer.escaped(text) }
        var clean = ""
        clean.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars { clean.unicodeScalars.append(disallowed(scalar) ? "\u{FFFD}" : scalar) }
        return MustacheRenderer.escaped(clean)
    }

    static func disallowed(_ s: Unicode.Scalar) -> Bool {
        (s.value < 0x20 && s != "\t" && s != "\n" && s != "\r") || s.value == 0xFFFE || s.value == 0xFFFF
    }

    /// An id prefix of ASCII letters, digits, `_` and `-` (anything else becomes `_`), starting
    /// with a letter ("chart-" in front otherwise): valid as an XML id and one token of an
    /// `aria-labelledby` list.
    static func sanitizedID(_ prefix: String) -> String {
        var out = ""
        for scalar in prefix.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-": out.unicodeScalars.append(scalar)
            default: out += "_"
            }
        }
        if let first = out.unicodeScalars.first, ("a"..."z").contains(first) || ("A"..."Z").contains(first) {
            return out
        }
        return "chart-" + out
    }
}
