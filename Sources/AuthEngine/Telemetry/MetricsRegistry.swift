import Locking
/// Counters, gauges and histograms by name and label values, and their Prometheus text
/// exposition (format 0.0.4). Written here rather than taken from swift-metrics and
/// swift-prometheus: swift-metrics' task-local factory links Swift Concurrency and with it
/// libdispatch, whose start-up every CGI request would pay (+4.7 % of a CGI verify's CPU and ~50
/// page faults, BENCHMARKS.md "Metrics"). One lock; a family keeps one fixed list of label names.
public final class MetricsRegistry: Sendable {
    public enum Kind: String, Sendable { case counter, gauge, histogram }

    struct Family {
        let kind: Kind
        let help: String
        let labelNames: [String]
        /// Histograms: upper bounds, ascending (+Inf is implied).
        let buckets: [Double]
        var series: [[String]: Series] = [:]
    }

    struct Series {
        var value: Double = 0
        /// Histograms: per-bucket (not cumulative) counts, then the count above the last bound.
        var counts: [UInt64] = []
        var sum: Double = 0
    }

    /// Families in declaration order (a family's index is its id), and their ids by name.
    private struct Table {
        var families: [Family] = []
        var names: [String] = []
        var ids: [String: Int] = [:]

        mutating func add(_ id: Int, _ labels: [String], _ amount: Double) {
            guard families.indices.contains(id), families[id].kind != .histogram, labels.count == families[id].labelNames.count,
                  families[id].kind == .gauge || amount >= 0 else { return }
            families[id].series[labels, default: Series()].value += amount
        }

        mutating func observe(_ id: Int, _ labels: [String], _ value: Double) {
            guard families.indices.contains(id), families[id].kind == .histogram, labels.count == families[id].labelNames.count,
                  !value.isNaN else { return }
            let bounds = families[id].buckets
            let i = bounds.firstIndex(where: { value <= $0 }) ?? bounds.count
            families[id].series[labels, default: Series(counts: Array(repeating: 0, count: bounds.count + 1))].counts[i] &+= 1
            families[id].series[labels, default: Series()].sum += value
        }
    }
    private let table = Locked(Table())

    public init() {}

    /// Declares a family and returns its id (a name already declared keeps its first
    /// declaration). nil — nothing made — for a name or label that is not a valid Prometheus
    /// name, a repeated label, or `le` on a histogram.
    @discardableResult
    public func declare(_ name: String, _ kind: Kind, help: String, labels: [String] = [], buckets: [Double] = []) -> Int? {
        guard MetricsRegistry.isValidMetricName(name), labels.allSatisfy(MetricsRegistry.isValidLabelName),
              Set(labels).count == labels.count, kind != .histogram || !labels.contains("le") else { return nil }
        let bounds = Array(Set(buckets.filter { $0.isFinite })).sorted()
        return table.withLock { t in
            if let id = t.ids[name] { return id }
            t.families.append(Family(kind: kind, help: help, labelNames: labels, buckets: bounds))
            t.names.append(name)
            t.ids[name] = t.families.count - 1
            return t.families.count - 1
        }
    }

    public func id(_ name: String) -> Int? { table.withLock { $0.ids[name] } }

    /// Adds to a counter (negative amounts are ignored: counters only go up) or a gauge.
    public func add(_ id: Int, _ labels: [String] = [], _ amount: Double = 1) {
        table.withLock { $0.add(id, labels, amount) }
    }

    public func set(_ id: Int, _ labels: [String] = [], _ value: Double) {
        table.withLock { t in
            guard t.families.indices.contains(id), t.families[id].kind == .gauge, labels.count == t.families[id].labelNames.count else { return }
            t.families[id].series[labels, default: Series()].value = value
        }
    }

    public func observe(_ id: Int, _ labels: [String] = [], _ value: Double) {
        table.withLock { $0.observe(id, labels, value) }
    }

    /// A counter and a histogram updated under one lock (a request: its count and its duration).
    public func add(_ counter: Int, _ counterLabels: [String], observe histogram: Int, _ histogramLabels: [String], _ value: Double) {
        table.withLock { t in
            t.add(counter, counterLabels, 1)
            t.observe(histogram, histogramLabels, value)
        }
    }

    // By name, for the tests and the occasional caller.
    public func add(_ name: String, _ labels: [String] = [], _ amount: Double = 1) { if let id = id(name) { add(id, labels, amount) } }
    public func set(_ name: String, _ labels: [String] = [], _ value: Double) { if let id = id(name) { set(id, labels, value) } }
    public func observe(_ name: String, _ labels: [String] = [], _ value: Double) { if let id = id(name) { observe(id, labels, value) } }

    /// The current value of a counter or gauge series.
    public func value(_ name: String, _ labels: [String] = []) -> Double? {
        table.withLock { t in t.ids[name].flatMap { t.families[$0].series[labels]?.value } }
    }

    /// Every family, by name, then its series by label values: `# HELP`, `# TYPE`, samples.
    public func exposition() -> [UInt8] {
        let (snapshot, declared) = table.withLock { ($0.families, $0.names) }
        var out = ""
        out.reserveCapacity(4096)
        for (name, f) in zip(declared, snapshot).sorted(by: { $0.0 < $1.0 }) {
            if !f.help.isEmpty { out += "# HELP \(name) \(MetricsRegistry.escapeHelp(f.help))\n" }
            out += "# TYPE \(name) \(f.kind.rawValue)\n"
            for labels in f.series.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                guard let s = f.series[labels] else { continue }
                let pairs = zip(f.labelNames, labels).map { "\($0)=\"\(MetricsRegistry.escapeLabel($1))\"" }
                switch f.kind {
                case .counter, .gauge:
                    out += name + MetricsRegistry.braces(pairs) + " " + MetricsRegistry.number(s.value) + "\n"
                case .histogram:
                    var cumulative: UInt64 = 0
                    for (i, bound) in f.buckets.enumerated() {
                        cumulative &+= s.counts[i]
                        out += name + "_bucket" + MetricsRegistry.braces(pairs + ["le=\"\(bound)\""]) + " \(cumulative)\n"
                    }
                    cumulative &+= s.counts[f.buckets.count]
                    out += name + "_bucket" + MetricsRegistry.braces(pairs + ["le=\"+Inf\""]) + " \(cumulative)\n"
                    out += name + "_sum" + MetricsRegistry.braces(pairs) + " " + MetricsRegistry.number(s.sum) + "\n"
                    out += name + "_count" + MetricsRegistry.braces(pairs) + " \(cumulative)\n"
                }
            }
        }
        return Array(out.utf8)
    }

    static func braces(_ pairs: [String]) -> String { pairs.isEmpty ? "" : "{" + pairs.joined(separator: ",") + "}" }

    /// Integral values without a fraction (`3`, not `3.0`); others as Swift prints them.
    static func number(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
        if abs(v) < 1e15, let whole = Int64(exactly: v) { return String(whole) }
        return String(v)
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    static func isValidMetricName(_ s: String) -> Bool {
        guard let first = s.utf8.first, isNameStart(first) || first == UInt8(ascii: ":") else { return false }
        return s.utf8.allSatisfy { isNameStart($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ":") }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved by Prometheus).
    static func isValidLabelName(_ s: String) -> Bool {
        guard let first = s.utf8.first, isNameStart(first), !s.hasPrefix("__") else { return false }
        return s.utf8.allSatisfy { isNameStart($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    static func isNameStart(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_") }

    /// Label values: `\` `"` and line feed escaped.
    static func escapeLabel(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A }) else { return s }
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// Help text: `\` and line feed escaped.
    static func escapeHelp(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
