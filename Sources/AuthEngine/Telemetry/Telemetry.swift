import CoreMetrics
#if canImport(Glibc)
import Glibc
#endif

/// Every metric Gatehouse records, named once (docs/operations.md lists them). Recorded through
/// swift-metrics: a process that bootstraps no backend (CGI mode, tests, the CLI) records into
/// swift-metrics' no-op handlers. Each name keeps one fixed set of label names, and every label
/// value comes from a closed set (route patterns, error codes, channels, provider names), never
/// from a request's own text, so a client cannot grow the series.
public enum Telemetry {
    public enum Name {
        public static let requests = "gatehouse_http_requests_total"
        public static let requestDuration = "gatehouse_http_request_duration_seconds"
        public static let flows = "gatehouse_flows_total"
        public static let rateLimited = "gatehouse_rate_limited_total"
        public static let pumpingRefusals = "gatehouse_sms_pumping_refusals_total"
        public static let pumpingHolds = "gatehouse_sms_pumping_holds_total"
        public static let deliveries = "gatehouse_outbox_deliveries_total"
        public static let outboxDepth = "gatehouse_outbox_depth"
        public static let outboxOldest = "gatehouse_outbox_oldest_age_seconds"
        public static let verifications = "gatehouse_session_verifications_total"
        public static let tokenVerifications = "gatehouse_token_verifications_total"
        public static let signingKeyAge = "gatehouse_signing_key_age_seconds"
    }

    /// One answered request: its route pattern (`unmatched` for none), status and duration.
    public static func request(route: String, status: Int, nanoseconds: Int64) {
        Counter(label: Name.requests, dimensions: [("route", route), ("status", String(status))]).increment()
        Timer(label: Name.requestDuration, dimensions: [("route", route)]).recordNanoseconds(nanoseconds)
    }

    /// A step of a flow (`phone`, `email_link`, `mfa`, `app_verification`, `push`): `start` or
    /// `complete`, and its outcome (`ok`, or the error code it failed with).
    public static func flow(_ flow: String, step: String, outcome: String) {
        Counter(label: Name.flows, dimensions: [("flow", flow), ("step", step), ("outcome", outcome)]).increment()
    }

    public static func rateLimited(route: String) {
        Counter(label: Name.rateLimited, dimensions: [("route", route)]).increment()
    }

    /// The SMS pumping guard refused a send (`kind`: `prefix`, `region` or `project`) or placed a hold.
    public static func pumpingRefused(kind: String) {
        Counter(label: Name.pumpingRefusals, dimensions: [("kind", kind)]).increment()
    }

    public static func pumpingHold(kind: String) {
        Counter(label: Name.pumpingHolds, dimensions: [("kind", kind)]).increment()
    }

    /// One delivery attempt's outcome: `sent`, `failed` (to be retried) or `dead`.
    public static func delivery(channel: String, provider: String, result: String) {
        Counter(label: Name.deliveries, dimensions: [("channel", channel), ("provider", provider), ("result", result)]).increment()
    }

    /// A session check (`/__/auth/verify`): `ok`, `forbidden`, `mfa_required` or why it was signed out.
    public static func verification(result: String) {
        Counter(label: Name.verifications, dimensions: [("result", result)]).increment()
    }

    /// A token checked by its signature and claims (`id_token`, `session_cookie`): `ok` or `invalid`.
    public static func tokenVerification(kind: String, ok: Bool) {
        Counter(label: Name.tokenVerifications, dimensions: [("kind", kind), ("result", ok ? "ok" : "invalid")]).increment()
    }

    /// Values read when metrics are scraped rather than counted as they happen.
    public static func gauge(_ name: String, _ dimensions: [(String, String)], _ value: Double) {
        Gauge(label: name, dimensions: dimensions).record(value)
    }

    /// Nanoseconds on the monotonic clock, for durations.
    public static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }
}
