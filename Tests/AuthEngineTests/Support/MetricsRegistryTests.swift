import AuthEngine
import Foundation
import Testing

/// The hand-written registry (BENCHMARKS.md "Metrics": why not swift-prometheus), tested on the
/// rules swift-prometheus's own suite checks: counters, gauges and histograms with and without
/// labels, families sharing a name, the same series asked twice, escaping of label values and
/// help text, valid names, and concurrent updates.
@Suite("Metrics registry and its exposition")
struct MetricsRegistryTests {
    func text(_ r: MetricsRegistry) -> String { String(decoding: r.exposition(), as: UTF8.self) }

    @Test("a counter without labels: declared but unused, it has its TYPE line; each increment shows")
    func counterWithoutLabels() {
        let r = MetricsRegistry()
        #expect(r.declare("foo", .counter, help: "") != nil)
        #expect(text(r) == "# TYPE foo counter\n")
        r.add("foo")
        #expect(text(r) == "# TYPE foo counter\nfoo 1\n")
        r.add("foo")
        r.add("foo", [], 3)
        #expect(text(r) == "# TYPE foo counter\nfoo 5\n")
        r.add("foo", [], -2)   // counters never go down
        #expect(r.value("foo") == 5)
    }

    @Test("a counter with labels; one family, one TYPE and HELP line, its series sorted by label values")
    func counterWithLabels() {
        let r = MetricsRegistry()
        r.declare("requests_total", .counter, help: "Requests.", labels: ["route", "status"])
        r.add("requests_total", ["/b", "200"])
        r.add("requests_total", ["/a", "404"])
        r.add("requests_total", ["/a", "200"], 2)
        r.add("requests_total", ["/a", "200"])
        #expect(text(r) == """
            # HELP requests_total Requests.
            # TYPE requests_total counter
            requests_total{route="/a",status="200"} 3
            requests_total{route="/a",status="404"} 1
            requests_total{route="/b",status="200"} 1

            """)
        // Wrong label count: ignored, never a second family shape.
        r.add("requests_total", ["/a"])
        #expect(r.value("requests_total", ["/a", "200"]) == 3)
    }

    @Test("gauges: set replaces, add moves both ways; values keep their fraction")
    func gauges() {
        let r = MetricsRegistry()
        r.declare("temperature_celsius", .gauge, help: "", labels: ["room"])
        r.set("temperature_celsius", ["a"], 21.5)
        r.set("temperature_celsius", ["b"], 3)
        r.add("temperature_celsius", ["b"], -5)
        #expect(text(r) == "# TYPE temperature_celsius gauge\ntemperature_celsius{room=\"a\"} 21.5\ntemperature_celsius{room=\"b\"} -2\n")
        r.declare("up", .gauge, help: "")
        r.set("up", [], 1)
        #expect(text(r).contains("# TYPE up gauge\nup 1\n"))
    }

    @Test("histograms: cumulative buckets by bound, +Inf, sum and count, per label set")
    func histograms() {
        let r = MetricsRegistry()
        r.declare("size_bytes", .histogram, help: "", labels: ["file"], buckets: [10, 1, 5])
        r.observe("size_bytes", ["x"], 0.5)
        r.observe("size_bytes", ["x"], 5)
        r.observe("size_bytes", ["x"], 7)
        r.observe("size_bytes", ["x"], 100)
        r.observe("size_bytes", ["y"], 2)
        #expect(text(r) == """
            # TYPE size_bytes histogram
            size_bytes_bucket{file="x",le="1.0"} 1
            size_bytes_bucket{file="x",le="5.0"} 2
            size_bytes_bucket{file="x",le="10.0"} 3
            size_bytes_bucket{file="x",le="+Inf"} 4
            size_bytes_sum{file="x"} 112.5
            size_bytes_count{file="x"} 4
            size_bytes_bucket{file="y",le="1.0"} 0
            size_bytes_bucket{file="y",le="5.0"} 1
            size_bytes_bucket{file="y",le="10.0"} 1
            size_bytes_bucket{file="y",le="+Inf"} 1
            size_bytes_sum{file="y"} 2
            size_bytes_count{file="y"} 1

            """)
        r.declare("latency_seconds", .histogram, help: "", buckets: [0.0005])
        r.observe("latency_seconds", [], 0.0001)
        #expect(text(r).hasPrefix("# TYPE latency_seconds histogram\nlatency_seconds_bucket{le=\"0.0005\"} 1\nlatency_seconds_bucket{le=\"+Inf\"} 1\n"))
        r.observe("latency_seconds", [], .nan)   // refused
        #expect(text(r).contains("latency_seconds_count 1\n"))
    }

    @Test("families sorted by name; a second declaration of a name keeps the first")
    func families() {
        let r = MetricsRegistry()
        r.declare("b_total", .counter, help: "")
        r.declare("a_total", .counter, help: "first")
        r.declare("a_total", .gauge, help: "second")
        r.add("a_total")
        r.add("b_total")
        #expect(text(r) == "# HELP a_total first\n# TYPE a_total counter\na_total 1\n# TYPE b_total counter\nb_total 1\n")
        r.set("a_total", [], 9)   // a counter cannot be set
        #expect(r.value("a_total") == 1)
    }

    @Test("label values escape backslash, quote and line feed; other text (UTF-8) passes; help escapes backslash and line feed")
    func escaping() {
        let r = MetricsRegistry()
        r.declare("requests_total", .counter, help: "Files read from C:\\DIR\nper host", labels: ["path", "name"])
        r.add("requests_total", ["a\"b\\c\nd", "café ☕"])
        #expect(text(r) == """
            # HELP requests_total Files read from C:\\\\DIR\\nper host
            # TYPE requests_total counter
            requests_total{path="a\\"b\\\\c\\nd",name="café ☕"} 1

            """)
    }

    @Test("invalid metric and label names are refused, and `le` on a histogram")
    func names() {
        let r = MetricsRegistry()
        for bad in ["", "1abc", "a-b", "a b", "ä"] { #expect(r.declare(bad, .counter, help: "") == nil, "\(bad)") }
        for bad in ["", "1a", "a:b", "__reserved", "a-b"] { #expect(r.declare("ok_total", .counter, help: "", labels: [bad]) == nil, "\(bad)") }
        #expect(r.declare("dup_total", .counter, help: "", labels: ["a", "a"]) == nil)
        #expect(r.declare("h", .histogram, help: "", labels: ["le"]) == nil)
        #expect(r.declare("ns:sub_total", .counter, help: "", labels: ["_x1"]) != nil)
        #expect(text(r) == "# TYPE ns:sub_total counter\n")
    }

    @Test("concurrent updates from many threads add up exactly")
    func concurrency() {
        let r = MetricsRegistry()
        r.declare("hits_total", .counter, help: "", labels: ["t"])
        r.declare("g", .gauge, help: "")
        r.declare("h", .histogram, help: "", buckets: [1])
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            for _ in 0..<1000 {
                r.add("hits_total", [String(i % 2)])
                r.add("g", [], 1)
                r.observe("h", [], 0.5)
            }
        }
        #expect(r.value("hits_total", ["0"]) == 4000 && r.value("hits_total", ["1"]) == 4000)
        #expect(r.value("g") == 8000)
        #expect(text(r).contains("h_count 8000\n"))
    }

    @Test("a counter and a histogram under one lock: both move; an unknown id or a wrong label count moves nothing")
    func pairedUpdate() throws {
        let r = MetricsRegistry()
        let c = try #require(r.declare("req_total", .counter, help: "", labels: ["route", "status"]))
        let h = try #require(r.declare("req_seconds", .histogram, help: "", labels: ["route"], buckets: [0.1]))
        r.add(c, ["/a", "200"], observe: h, ["/a"], 0.05)
        r.add(99, ["/a"], observe: -1, ["/a"], 0.05)
        r.add(c, ["/a"], 1)
        #expect(r.value("req_total", ["/a", "200"]) == 1)
        #expect(text(r).contains("req_seconds_count{route=\"/a\"} 1\n"))
    }
}
