@testable import AuthWeb
import Glibc
import Testing

/// The operator console's stacked bar chart: nice ticks, stacking, label thinning, escaping,
/// saturating sums, and markup that is well-formed (balanced tags, quoted attributes, entities
/// only where the escaping puts them) with no `style`.
@Suite("Bar chart")
struct BarChartTests {
    // MARK: A tiny well-formedness checker

    /// The problems of `xml` as markup: unbalanced or crossed tags, an unquoted or repeated
    /// attribute, a raw `<`, `>` or `&` in text or a value, an unknown entity, not one root.
    static func problems(_ xml: String) -> [String] {
        let s = Array(xml.unicodeScalars)
        var problems: [String] = []
        var stack: [String] = []
        var roots = 0
        var i = 0
        func isNameScalar(_ c: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "-" || c == ":" || c == "_"
        }
        func readName() -> String {
            var name = ""
            while i < s.count, isNameScalar(s[i]) { name.unicodeScalars.append(s[i]); i += 1 }
            return name
        }
        func skipSpace() { while i < s.count, s[i] == " " || s[i] == "\n" { i += 1 } }
        /// At `&`: one of the five entities the escaping writes.
        func entity() {
            for e in ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"] {
                let scalars = Array(e.unicodeScalars)
                if i + scalars.count <= s.count, Array(s[i..<(i + scalars.count)]) == scalars {
                    i += scalars.count
                    return
                }
            }
            problems.append("stray & at \(i)")
            i += 1
        }
        while i < s.count {
            if s[i] == "<" {
                i += 1
                if i < s.count, s[i] == "/" {
                    i += 1
                    let name = readName()
                    guard i < s.count, s[i] == ">" else { problems.append("bad end tag \(name) at \(i)"); return problems }
                    i += 1
                    if stack.last == name { stack.removeLast() } else { problems.append("</\(name)> closes \(stack.last ?? "nothing")") }
                    continue
                }
                let name = readName()
                if name.isEmpty { problems.append("raw < at \(i)"); continue }
                if stack.isEmpty { roots += 1 }
                var attributes: Set<String> = []
                while true {
                    skipSpace()
                    guard i < s.count else { problems.append("unterminated <\(name)"); return problems }
                    if s[i] == ">" { i += 1; stack.append(name); break }
                    if s[i] == "/", i + 1 < s.count, s[i + 1] == ">" { i += 2; break }
                    let attribute = readName()
                    guard !attribute.isEmpty, i + 1 < s.count, s[i] == "=", s[i + 1] == "\"" else {
                        problems.append("bad attribute in <\(name)> at \(i)")
                        return problems
                    }
                    if !attributes.insert(attribute).inserted { problems.append("repeated \(attribute) in <\(name)>") }
                    i += 2
                    while i < s.count, s[i] != "\"" {
                        if s[i] == "<" || s[i] == ">" { problems.append("raw \(s[i]) in \(attribute)") }
                        if s[i] == "&" { entity() } else { i += 1 }
                    }
                    i += 1
                }
            } else if s[i] == "&" {
                entity()
            } else {
                if s[i] == ">" { problems.append("raw > at \(i)") }
                if stack.isEmpty { problems.append("text outside the root at \(i)") }
                i += 1
            }
        }
        if !stack.isEmpty { problems.append("unclosed \(stack)") }
        if roots != 1 { problems.append("\(roots) roots") }
        return problems
    }

    @Test("the checker itself refuses what it should")
    func checkerRefuses() {
        #expect(Self.problems("<svg><g><text>a &amp; b</text></g><rect x=\"1\"/></svg>").isEmpty)
        #expect(!Self.problems("<svg><g></svg></g>").isEmpty)
        #expect(!Self.problems("<svg><g></svg>").isEmpty)
        #expect(!Self.problems("<svg>a < b</svg>").isEmpty)
        #expect(!Self.problems("<svg>a & b</svg>").isEmpty)
        #expect(!Self.problems("<svg x=\"\"><b>\"></svg>").isEmpty)
        #expect(!Self.problems("<svg x=1></svg>").isEmpty)
        #expect(!Self.problems("<svg></svg><svg></svg>").isEmpty)
    }

    // MARK: Fixtures

    static let hours = (0..<24).map { "\($0)h" }

    static func hourly() -> BarChart {
        BarChart(
            bucketLabels: hours,
            series: [
                .init(name: "Email", values: (0..<24).map { $0 * 3 }),
                .init(name: "SMS", values: (0..<24).map { ($0 * 7) % 11 }),
                .init(name: "Passkey", values: (0..<24).map { $0 % 5 == 0 ? 40 : 1 }),
            ],
            title: "Sign-ins, last 24 hours")
    }

    static func count(of needle: String, in haystack: some StringProtocol) -> Int {
        var n = 0
        var rest = Substring(haystack)
        while let r = rest.firstRange(of: needle) {
            n += 1
            rest = rest[r.upperBound...]
        }
        return n
    }

    /// The text of the `<g class="…">` group.
    static func group(_ cls: String, in svg: String) -> Substring {
        guard let start = svg.firstRange(of: "<g class=\"\(cls)\"") else { return "" }
        let rest = svg[start.lowerBound...]
        guard let end = rest.firstRange(of: "</g>") else { return "" }
        return rest[..<end.upperBound]
    }

    // MARK: Markup

    @Test("the markup: one scalable image named by its title, no style, no script, well-formed")
    func markup() {
        let svg = Self.hourly().svg(idPrefix: "signins")
        #expect(Self.problems(svg) == [])
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.contains(" viewBox=\"0 0 640 "))
        #expect(svg.contains(" width=\"100%\""))
        #expect(svg.contains(" role=\"img\" aria-labelledby=\"signins-title\" aria-describedby=\"signins-desc\""))
        #expect(svg.contains("<title id=\"signins-title\">Sign-ins, last 24 hours</title>"))
        #expect(svg.contains("<desc id=\"signins-desc\">0h – 23h. Email: 828; SMS: 117; Passkey: 219.</desc>"))
        #expect(!svg.contains("style"))
        #expect(!svg.contains("script"))
        #expect(Self.hourly().svg(idPrefix: "signins") == svg, "deterministic")
    }

    @Test("each segment has a title: series: value (bucket)")
    func segmentTitles() {
        let svg = Self.hourly().svg(idPrefix: "c")
        #expect(svg.contains("<title>Email: 69 (23h)</title></rect>"))
        #expect(svg.contains("<title>Passkey: 40 (20h)</title></rect>"))
        // Email's 0 at 0h and SMS's 0 at 0h, 11h and 22h are not drawn.
        #expect(!svg.contains("Email: 0 "))
        #expect(!svg.contains("SMS: 0 "))
        // 24 × 3 segments less those four zeros.
        #expect(Self.count(of: "</title></rect>", in: svg) == 72 - 4)
    }

    @Test("colours come from the palette by series position, repeating after 8")
    func colours() {
        #expect(BarChart.palette.count == 8)
        #expect(Set(BarChart.palette).count == 8)
        #expect(BarChart.colour(forSeriesAt: 0) == "#0072B2")
        #expect(BarChart.colour(forSeriesAt: 8) == BarChart.colour(forSeriesAt: 0))
        #expect(BarChart.colour(forSeriesAt: 9) == BarChart.colour(forSeriesAt: 1))
        let chart = BarChart(
            bucketLabels: ["a"],
            series: (0..<9).map { .init(name: "s\($0)", values: [1]) },
            title: "t")
        let svg = chart.svg(idPrefix: "c")
        #expect(Self.problems(svg) == [])
        for (i, colour) in BarChart.palette.enumerated() {
            #expect(svg.contains("fill=\"\(colour)\"><title>s\(i): 1 (a)</title>"))
        }
        #expect(svg.contains("fill=\"#0072B2\"><title>s8: 1 (a)</title>"))
    }

    /// WCAG 2 relative luminance of "#RRGGBB".
    static func luminance(_ hex: String) -> Double {
        let v = Int(hex.dropFirst(), radix: 16)!
        func channel(_ c: Int) -> Double {
            let x = Double(c) / 255
            return x <= 0.03928 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * channel(v >> 16) + 0.7152 * channel((v >> 8) & 0xFF) + 0.0722 * channel(v & 0xFF)
    }

    static func contrast(_ a: String, _ b: String) -> Double {
        let (x, y) = (luminance(a), luminance(b))
        return (max(x, y) + 0.05) / (min(x, y) + 0.05)
    }

    @Test("every palette colour has 3:1 contrast against white and against a dark page")
    func paletteContrast() {
        for colour in BarChart.palette {
            #expect(Self.contrast(colour, "#FFFFFF") >= 3, "\(colour) on white")
            #expect(Self.contrast(colour, "#121212") >= 3, "\(colour) on dark")
        }
    }

    // MARK: Escaping

    @Test("escaping: the five characters, and controls XML does not allow")
    func escapingFunction() {
        #expect(BarChart.escaped(#"a & b < c > d " e ' f"#) == "a &amp; b &lt; c &gt; d &quot; e &#39; f")
        #expect(BarChart.escaped("tab\there\nnul\u{0}bell\u{7}") == "tab\there\nnul\u{FFFD}bell\u{FFFD}")
        #expect(BarChart.escaped("Zoë 東京 🚀") == "Zoë 東京 🚀")
        #expect(BarChart.escaped("&amp;") == "&amp;amp;")
    }

    @Test("hostile title, labels, names, empty text and separator come out as text")
    func hostileText() {
        let evil = #"</text><script>alert("x")</script><a href='j'>&"#
        let chart = BarChart(
            bucketLabels: [evil, "b\"><rect", "c"],
            series: [.init(name: evil, values: [1234, 5, 6]), .init(name: "]]><!--", values: [1, 2, 3])],
            title: evil,
            emptyText: evil,
            groupingSeparator: "<&>")
        let svg = chart.svg(idPrefix: "x\"><script>")
        #expect(Self.problems(svg) == [])
        #expect(!svg.contains("<script"))
        #expect(!svg.contains("<a "))
        #expect(!svg.contains("<!--"))
        #expect(svg.contains("&lt;/text&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;a href=&#39;j&#39;&gt;&amp;"))
        #expect(svg.contains("1&lt;&amp;&gt;234"))
        #expect(svg.contains("b&quot;&gt;&lt;rect"))
        #expect(svg.contains("]]&gt;&lt;!--"))
        #expect(svg.contains("aria-labelledby=\"x___script_-title\""))

        let empty = BarChart(bucketLabels: [], series: [], title: evil, emptyText: evil)
        let emptySVG = empty.svg(idPrefix: "e")
        #expect(Self.problems(emptySVG) == [])
        #expect(!emptySVG.contains("<script"))
    }

    @Test("id prefixes: one token of letters, digits, _ and -, starting with a letter")
    func idPrefix() {
        #expect(BarChart.sanitizedID("signins") == "signins")
        #expect(BarChart.sanitizedID("a b\"c") == "a_b_c")
        #expect(BarChart.sanitizedID("") == "chart-")
        #expect(BarChart.sanitizedID("1st") == "chart-1st")
        #expect(BarChart.sanitizedID("é") == "chart-_")
    }

    // MARK: Axis

    @Test(
        "nice ticks",
        arguments: [
            (0, [0, 1]),
            (1, [0, 1]),
            (-5, [0, 1]),
            (2, [0, 1, 2]),
            (4, [0, 1, 2, 3, 4]),
            (5, [0, 2, 4, 6]),
            (7, [0, 2, 4, 6, 8]),
            (10, [0, 5, 10]),
            (99, [0, 50, 100]),
            (100, [0, 50, 100]),
            (101, [0, 50, 100, 150]),
            (1234, [0, 500, 1000, 1500]),
            (Int.max, [0, 5_000_000_000_000_000_000, 10_000_000_000_000_000_000]),
        ] as [(Int, [UInt64])])
    func niceTicks(max: Int, ticks: [UInt64]) {
        #expect(BarChart.axis(max: max).ticks == ticks)
    }

    @Test("ticks for any maximum: 3 to 5, evenly 1, 2 or 5 × 10^k apart, the top the first at or above")
    func tickProperties() {
        var maxima = Array(2...2_000)
        var p = 1
        while p <= Int.max / 10 {
            p *= 10
            maxima += [p - 1, p, p + 1, 2 * p, 3 * p + 7]
        }
        maxima += [Int.max - 1, Int.max]
        for m in maxima {
            let axis = BarChart.axis(max: m)
            #expect((3...5).contains(axis.ticks.count), "\(m): \(axis.ticks)")
            #expect(axis.ticks == (0..<axis.ticks.count).map { UInt64($0) * axis.step }, "\(m)")
            var mantissa = axis.step
            while mantissa % 10 == 0 { mantissa /= 10 }
            #expect([1, 2, 5].contains(mantissa), "\(m): step \(axis.step)")
            #expect(axis.top >= UInt64(m) && axis.top - axis.step < UInt64(m), "\(m): \(axis.ticks)")
        }
    }

    @Test("an all-zero chart has the axis 0…1 and no bars")
    func allZero() {
        let chart = BarChart(bucketLabels: ["a", "b"], series: [.init(name: "s", values: [0, -3])], title: "t")
        #expect(chart.layout().axis.ticks == [0, 1])
        let svg = chart.svg(idPrefix: "z")
        #expect(Self.problems(svg) == [])
        #expect(!svg.contains("</title></rect>"))
        #expect(svg.contains(">0</text>") && svg.contains(">1</text>"))
        #expect(svg.contains("s <tspan font-weight=\"bold\">0</tspan>"))
    }

    // MARK: Stacking

    @Test("stacked segments: exact heights on a round axis")
    func exactStack() {
        // Bucket total 100 → axis 0, 50, 100 over 200 units: 2 units per count.
        let chart = BarChart(
            bucketLabels: ["only"],
            series: [.init(name: "a", values: [50]), .init(name: "b", values: [30]), .init(name: "c", values: [20])],
            title: "t")
        let bar = chart.layout().bars[0]
        #expect(bar.segments.map(\.heightCu) == [10_000, 6_000, 4_000])
        #expect(bar.segments.map(\.yCu) == [11_000, 5_000, 1_000])
        let svg = chart.svg(idPrefix: "s")
        #expect(svg.contains("y=\"110\" width=\"\(BarChart.decimal(bar.widthCu))\" height=\"100\" fill=\"#0072B2\"><title>a: 50 (only)</title>"))
        #expect(svg.contains("y=\"50\" width=\"\(BarChart.decimal(bar.widthCu))\" height=\"60\" fill=\"#D55E00\"><title>b: 30 (only)</title>"))
        #expect(svg.contains("y=\"10\" width=\"\(BarChart.decimal(bar.widthCu))\" height=\"40\" fill=\"#009E73\"><title>c: 20 (only)</title>"))
    }

    @Test("stacked segments touch, and add up to the bar's height, whatever the rounding")
    func stackingAddsUp() {
        let buckets = 30
        let chart = BarChart(
            bucketLabels: (1...buckets).map { "Nov \($0)" },
            series: (0..<5).map { s in .init(name: "s\(s)", values: (0..<buckets).map { ($0 * 37 + s * 101) % 113 - 10 }) },
            title: "t")
        let layout = chart.layout()
        let totals = chart.bucketTotals
        #expect(layout.bars.count == buckets)
        for bar in layout.bars {
            var y = layout.plotBottomCu
            for segment in bar.segments {
                #expect(segment.yCu + segment.heightCu == y, "segments touch")
                #expect(segment.heightCu >= 0)
                y = segment.yCu
            }
            #expect(bar.segments.reduce(0) { $0 + $1.heightCu } == layout.plotBottomCu - layout.yCu(UInt64(totals[bar.bucket])))
            #expect(bar.segments.map(\.value).reduce(0, +) == totals[bar.bucket])
            #expect(y >= layout.plotTopCu, "within the plot")
        }
        // The tallest bar reaches its value's height on the axis, not above the top tick.
        #expect(layout.axis.top >= UInt64(totals.max()!))
        // Bars are in order, inside the plot, not overlapping.
        for (a, b) in zip(layout.bars, layout.bars.dropFirst()) {
            #expect(a.xCu + a.widthCu <= b.xCu)
        }
        #expect(layout.bars.first!.xCu >= layout.leftCu && layout.bars.last!.xCu + layout.bars.last!.widthCu <= layout.rightCu)
        #expect(Self.problems(chart.svg(idPrefix: "d")) == [])
    }

    // MARK: Sums

    @Test("negative values count as 0, sums saturate at Int.max")
    func saturatingSums() {
        #expect(BarChart.saturatingAdd(Int.max, 1) == Int.max)
        #expect(BarChart.saturatingAdd(Int.max, Int.max) == Int.max)
        #expect(BarChart.saturatingAdd(Int.min, -1) == Int.min)
        #expect(BarChart.saturatingAdd(2, 3) == 5)

        let chart = BarChart(
            bucketLabels: ["a", "b", "c"],
            series: [
                .init(name: "big", values: [Int.max, Int.max, -1]),
                .init(name: "more", values: [Int.max, 5, Int.min]),
                .init(name: "short", values: [7]),
            ],
            title: "t")
        #expect(chart.seriesTotals == [Int.max, Int.max, 7])
        #expect(chart.bucketTotals == [Int.max, Int.max, 0])
        let layout = chart.layout()
        #expect(layout.axis.top == 10_000_000_000_000_000_000)
        // A bucket whose running total saturated draws the rest at no height, still adding up.
        let first = layout.bars[0]
        #expect(first.segments.map(\.value) == [Int.max, Int.max, 7])
        #expect(first.segments[1].heightCu == 0 && first.segments[2].heightCu == 0)
        #expect(first.segments.reduce(0) { $0 + $1.heightCu } == layout.plotBottomCu - layout.yCu(UInt64(Int.max)))
        #expect(layout.bars[2].segments.isEmpty)

        let svg = chart.svg(idPrefix: "big")
        #expect(Self.problems(svg) == [])
        #expect(svg.contains("big <tspan font-weight=\"bold\">9,223,372,036,854,775,807</tspan>"))
        #expect(svg.contains(">10,000,000,000,000,000,000</text>"))
        #expect(svg.contains("<title>more: 5 (b)</title>"))
        #expect(!svg.contains("-1"))
    }

    // MARK: Numbers

    @Test("numbers are grouped by three with the separator given")
    func grouping() {
        #expect(BarChart.grouped(0, separator: ",") == "0")
        #expect(BarChart.grouped(999, separator: ",") == "999")
        #expect(BarChart.grouped(1000, separator: ",") == "1,000")
        #expect(BarChart.grouped(1_234_567, separator: ".") == "1.234.567")
        #expect(BarChart.grouped(123_456, separator: "\u{202F}") == "123\u{202F}456")
        #expect(BarChart.grouped(UInt64.max, separator: ",") == "18,446,744,073,709,551,615")

        let chart = BarChart(
            bucketLabels: ["a"], series: [.init(name: "s", values: [12_345])], title: "t", groupingSeparator: "\u{A0}")
        let svg = chart.svg(idPrefix: "g")
        #expect(svg.contains("s <tspan font-weight=\"bold\">12\u{A0}345</tspan>"))
        #expect(svg.contains(">15\u{A0}000</text>"))
    }

    @Test("coordinates: hundredths without exponent or trailing zeros")
    func decimals() {
        #expect(BarChart.decimal(0) == "0")
        #expect(BarChart.decimal(12_300) == "123")
        #expect(BarChart.decimal(12_340) == "123.4")
        #expect(BarChart.decimal(12_345) == "123.45")
        #expect(BarChart.decimal(5) == "0.05")
        #expect(BarChart.decimal(-50) == "-0.5")
    }

    // MARK: Bucket labels

    @Test("at most 8 bucket labels, evenly spaced from the first, for 1 to 800 buckets")
    func labelThinning() {
        for count in 1...800 {
            let drawn = BarChart.drawnLabelIndices(count: count)
            #expect(drawn.count <= 8 && !drawn.isEmpty, "\(count)")
            #expect(drawn.first == 0)
            #expect(drawn == Array(stride(from: 0, to: count, by: BarChart.labelStride(count: count))))
            if count <= 8 { #expect(drawn.count == count) }
        }
        #expect(BarChart.drawnLabelIndices(count: 24) == [0, 3, 6, 9, 12, 15, 18, 21])
        #expect(BarChart.drawnLabelIndices(count: 30) == [0, 4, 8, 12, 16, 20, 24, 28])
        #expect(BarChart.drawnLabelIndices(count: 0) == [])

        let svg = Self.hourly().svg(idPrefix: "h")
        let labels = Self.group("bar-chart-labels", in: svg)
        #expect(Self.count(of: "<text ", in: labels) == 8)
        for i in stride(from: 0, to: 24, by: 3) { #expect(labels.contains(">\(i)h</text>")) }
        #expect(!labels.contains(">1h</text>"))
    }

    @Test("800 buckets: thin bars side by side, 8 labels, well-formed")
    func manyBuckets() {
        let chart = BarChart(
            bucketLabels: (0..<800).map { "b\($0)" },
            series: [.init(name: "a", values: (0..<800).map { $0 % 17 }), .init(name: "b", values: (0..<800).map { $0 % 5 })],
            title: "t")
        let layout = chart.layout()
        for (a, b) in zip(layout.bars, layout.bars.dropFirst()) {
            #expect(a.widthCu > 0 && a.xCu + a.widthCu <= b.xCu)
        }
        let svg = chart.svg(idPrefix: "m")
        #expect(Self.problems(svg) == [])
        #expect(Self.count(of: "<text ", in: Self.group("bar-chart-labels", in: svg)) == 8)
    }

    @Test("a long bucket label is cut to the room between drawn labels; its bar titles keep it whole")
    func longLabels() {
        let long = String(repeating: "Wednesday ", count: 10)
        let chart = BarChart(bucketLabels: Array(repeating: long, count: 30), series: [.init(name: "s", values: Array(repeating: 1, count: 30))], title: "t")
        let svg = chart.svg(idPrefix: "l")
        let labels = Self.group("bar-chart-labels", in: svg)
        #expect(Self.count(of: "…</text>", in: labels) == 8)
        #expect(!labels.contains(long))
        #expect(svg.contains("<title>s: 1 (\(long))</title>"))
        // The cut label fits its room (the estimate the layout uses).
        let layout = chart.layout()
        let room = 4 * (layout.rightCu - layout.leftCu) / 30 - 800
        #expect(BarChart.textWidthCu(BarChart.truncated(long, toWidthCu: room)) <= room)
        #expect(BarChart.truncated("short", toWidthCu: 100_000) == "short")
        #expect(BarChart.truncated("abc", toWidthCu: 1) == "a…")
    }

    // MARK: Legend

    @Test("the legend: swatch, name and total per series, wrapping into rows inside the chart")
    func legend() {
        let svg = Self.hourly().svg(idPrefix: "lg")
        let legend = Self.group("bar-chart-legend", in: svg)
        #expect(legend.contains("fill=\"#0072B2\"/><text "))
        #expect(legend.contains(">Email <tspan font-weight=\"bold\">828</tspan></text>"))
        #expect(legend.contains(">SMS <tspan font-weight=\"bold\">117</tspan></text>"))
        #expect(legend.contains(">Passkey <tspan font-weight=\"bold\">219</tspan></text>"))

        let many = BarChart(
            bucketLabels: ["a"],
            series: (0..<12).map { .init(name: "A rather long series name \($0)", values: [1_000_000]) },
            title: "t")
        let entries = many.legendEntries(totals: many.seriesTotals)
        #expect(entries.count == 12)
        #expect(entries.last!.row > 0, "wraps")
        for entry in entries {
            let width = 1400 + BarChart.textWidthCu(entry.name + " ") + BarChart.textWidthCu(entry.total) * 11 / 10
            #expect(entry.xCu + width <= BarChart.width * 100, "\(entry)")
        }
        let manySVG = many.svg(idPrefix: "m")
        #expect(Self.problems(manySVG) == [])
        let rows = entries.last!.row + 1
        let height = BarChart.plotTop + BarChart.plotHeight + BarChart.legendOffset + (rows - 1) * BarChart.legendRowHeight + BarChart.bottomPadding
        #expect(manySVG.contains("viewBox=\"0 0 640 \(height)\""))

        let longName = BarChart(bucketLabels: ["a"], series: [.init(name: String(repeating: "x", count: 100), values: [1])], title: "t")
        #expect(longName.legendEntries(totals: [1])[0].name == String(repeating: "x", count: 31) + "…")
    }

    // MARK: Empty

    @Test("no buckets (or no series): an empty frame with the empty text, no axis, no legend")
    func empty() {
        let chart = BarChart(bucketLabels: [], series: [.init(name: "s", values: [1, 2])], title: "Sign-ins", emptyText: "Nothing yet")
        #expect(chart.isEmpty)
        let svg = chart.svg(idPrefix: "e")
        #expect(Self.problems(svg) == [])
        #expect(svg.contains("viewBox=\"0 0 640 120\""))
        #expect(svg.contains("role=\"img\" aria-labelledby=\"e-title\""))
        #expect(svg.contains("<title id=\"e-title\">Sign-ins</title>"))
        #expect(svg.contains(">Nothing yet</text>"))
        #expect(svg.contains("fill=\"none\" stroke=\"currentColor\""))
        #expect(!svg.contains("<line"))
        #expect(!svg.contains("bar-chart-legend"))
        #expect(!svg.contains("style"))

        let noSeries = BarChart(bucketLabels: ["a", "b"], series: [], title: "t")
        #expect(noSeries.svg(idPrefix: "n").contains(">No data</text>"))
    }

    @Test("one bucket")
    func oneBucket() {
        let chart = BarChart(bucketLabels: ["today"], series: [.init(name: "a", values: [3, 99])], title: "t")
        let svg = chart.svg(idPrefix: "o")
        #expect(Self.problems(svg) == [])
        #expect(svg.contains("<desc id=\"o-desc\">today. a: 3.</desc>"))
        #expect(chart.layout().axis.ticks == [0, 1, 2, 3])
    }
}
