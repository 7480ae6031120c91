import AuthEngine
import CoreMetrics
import Prometheus

/// The metrics backend of a long-running responder (`serve`, `dev`): swift-metrics bootstrapped
/// once per process with the Prometheus registry whose text `/__/auth/metrics` answers. A CGI
/// process bootstraps none (one request per process: nothing would be scraped).
enum MetricsBackend {
    /// Request durations from 0.5 ms to 10 s: verify answers in well under a millisecond, a
    /// phone send with a synchronous store commit in a few.
    static let durationBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10),
    ]

    private static let started = Lock()
    nonisolated(unsafe) private static var registry: PrometheusCollectorRegistry?

    /// The process's registry, bootstrapping swift-metrics with it on the first call.
    static func exposition() -> @Sendable () -> [UInt8] {
        let registry: PrometheusCollectorRegistry = started.withLock {
            if let r = MetricsBackend.registry { return r }
            let r = PrometheusCollectorRegistry()
            var factory = PrometheusMetricsFactory(registry: r)
            factory.defaultDurationHistogramBuckets = durationBuckets
            MetricsSystem.bootstrap(factory)
            MetricsBackend.registry = r
            return r
        }
        return { registry.emitToBuffer() }
    }
}
