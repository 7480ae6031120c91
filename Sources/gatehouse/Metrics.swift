import AuthEngine

/// The metrics of a long-running responder (`serve`, `dev`): the registry whose text
/// `/__/auth/metrics` answers. A CGI process makes none (one request per process: nothing would
/// be scraped).
enum MetricsBackend {
    static func exposition() -> @Sendable () -> [UInt8] {
        let registry = Telemetry.enable()
        return { registry.exposition() }
    }
}
