#if canImport(Glibc)
import Glibc
#endif

/// Every metric Gatehouse records, named once (docs/operations.md lists them). Each name keeps
/// one fixed set of label names, and every label value comes from a closed set (route patterns,
/// error codes, channels, provider names), never from a request's own text, so a client cannot
/// grow the series. One instance per process, made by the composition root and held by
/// `AuthServices`: a long-running responder's records (`Telemetry(enabled: true)`); CGI mode, the
/// CLI and the tests hold `Telemetry.off`, which records nothing.
public final class Telemetry: Sendable {
    public enum Name {
        public static let requests = "gatehouse_http_requests_total"
        public static let requestDuration = "gatehouse_http_request_duration_seconds"
        public static let flows = "gatehouse_flows_total"
        public static let rateLimited = "gatehouse_rate_limited_total"
        public static let pumpingRefusals = "gatehouse_sms_pumping_refusals_total"
        public static let pumpingHolds = "gatehouse_sms_pumping_holds_total"
        public static let deliveries = "gatehouse_outbox_deliveries_total"
        public static let receipts = "gatehouse_delivery_receipts_total"
        public static let fallbacks = "gatehouse_phone_fallbacks_total"
        public static let breakerState = "gatehouse_sms_breaker_state"
        public static let outboxDepth = "gatehouse_outbox_depth"
        public static let outboxOldest = "gatehouse_outbox_oldest_age_seconds"
        public static let verifications = "gatehouse_session_verifications_total"
        public static let tokenVerifications = "gatehouse_token_verifications_total"
        public static let signingKeyAge = "gatehouse_signing_key_age_seconds"
    }

    /// Request durations from 0.5 ms to 10 s: verify answers in well under a millisecond, a phone
    /// send with a synchronous store commit in a few.
    public static let durationBuckets: [Double] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

    /// The registry `/__/auth/metrics` reads; nil when off.
    public let registry: MetricsRegistry?
    public var isEnabled: Bool { registry != nil }
    /// The families' ids in the registry, for the per-request path (no name lookups).
    private let ids: [String: Int]
    private let requestsID: Int, durationID: Int, verificationsID: Int

    /// Records nothing.
    public static let off = Telemetry(enabled: false)

    /// With `enabled`, a registry with every family declared.
    public init(enabled: Bool) {
        guard enabled else {
            registry = nil
            ids = [:]
            (requestsID, durationID, verificationsID) = (-1, -1, -1)
            return
        }
        let r = MetricsRegistry()
        r.declare(Name.requests, .counter, help: "Answered requests by route pattern and status.", labels: ["route", "status"])
        r.declare(Name.requestDuration, .histogram, help: "Time in the responder by route pattern.", labels: ["route"],
                  buckets: Telemetry.durationBuckets)
        r.declare(Name.flows, .counter, help: "Flow steps by flow, step and outcome (ok or the error code).",
                  labels: ["flow", "step", "outcome"])
        r.declare(Name.rateLimited, .counter, help: "Answers refused by a budget, by route pattern.", labels: ["route"])
        r.declare(Name.pumpingRefusals, .counter, help: "SMS sends refused by the pumping guard, by what refused them.", labels: ["kind"])
        r.declare(Name.pumpingHolds, .counter, help: "Holds placed by the SMS pumping guard.", labels: ["kind"])
        r.declare(Name.deliveries, .counter, help: "Delivery attempts by channel, provider and result (sent, failed, dead).",
                  labels: ["channel", "provider", "result"])
        r.declare(Name.receipts, .counter, help: "Providers' delivery receipts applied, by channel, provider, destination region and state "
                  + "(delivered, undelivered, failed, sent, queued): the delivery ratio is delivered over the three ends.",
                  labels: ["channel", "provider", "region", "state"])
        r.declare(Name.fallbacks, .counter, help: "Phone codes' automatic fallbacks by the channel taken and outcome (sent, refused).",
                  labels: ["channel", "outcome"])
        r.declare(Name.breakerState, .gauge, help: "The breaker on the first SMS provider when a second is configured, in this process: "
                  + "0 closed, 1 open (messages go to the second), 2 half-open (one message probes the first).", labels: ["provider"])
        r.declare(Name.outboxDepth, .gauge, help: "Undelivered messages by channel.", labels: ["channel"])
        r.declare(Name.outboxOldest, .gauge, help: "Age of the oldest undelivered message by channel (0: none).", labels: ["channel"])
        r.declare(Name.verifications, .counter, help: "Session checks of /__/auth/verify by result.", labels: ["result"])
        r.declare(Name.tokenVerifications, .counter, help: "Full token checks by kind and result.", labels: ["kind", "result"])
        r.declare(Name.signingKeyAge, .gauge, help: "Age of the key signing tokens now.")
        var ids: [String: Int] = [:]
        for name in [Name.requests, Name.requestDuration, Name.flows, Name.rateLimited, Name.pumpingRefusals, Name.pumpingHolds,
                     Name.deliveries, Name.receipts, Name.fallbacks, Name.breakerState, Name.outboxDepth, Name.outboxOldest, Name.verifications, Name.tokenVerifications, Name.signingKeyAge] {
            ids[name] = r.id(name)
        }
        self.ids = ids
        requestsID = ids[Name.requests] ?? -1
        durationID = ids[Name.requestDuration] ?? -1
        verificationsID = ids[Name.verifications] ?? -1
        registry = r
    }

    /// One answered request: its route pattern (`unmatched` for none), status and duration.
    public func request(route: String, status: Int, nanoseconds: Int64) {
        registry?.add(requestsID, [route, String(status)], observe: durationID, [route], Double(nanoseconds) / 1e9)
    }

    /// A step of a flow (`phone`, `email_link`, `mfa`, `app_verification`, `push`, `custom_token`, `passkey`):
    /// `start`, `complete`, …, and its outcome (`ok`, or the error code it failed with).
    public func flow(_ flow: String, step: String, outcome: String) {
        count(Name.flows, [flow, step, outcome])
    }

    public func rateLimited(route: String) { count(Name.rateLimited, [route]) }

    /// The SMS pumping guard refused a send (`kind`: `prefix`, `region`, `project`, or a hold of one) or placed a hold.
    public func pumpingRefused(kind: String) { count(Name.pumpingRefusals, [kind]) }

    public func pumpingHold(kind: String) { count(Name.pumpingHolds, [kind]) }

    /// One delivery attempt's outcome: `sent`, `failed` (to be retried) or `dead`.
    public func delivery(channel: String, provider: String, result: String) {
        count(Name.deliveries, [channel, provider, result])
    }

    /// A provider's receipt that moved a message to `state`.
    public func receipt(channel: String, provider: String, region: String, state: String) {
        count(Name.receipts, [channel, provider, region, state])
    }

    /// An automatic fallback of a phone code to `channel`: `sent` or `refused`.
    public func fallback(channel: String, outcome: String) { count(Name.fallbacks, [channel, outcome]) }

    /// A session check (`/__/auth/verify`): `ok`, `forbidden`, `mfa_required`, `passkey_required` or why it was signed out.
    public func verification(result: String) { registry?.add(verificationsID, [result], 1) }

    /// A token checked by its signature and claims (`id_token`, `session_cookie`): `ok` or `invalid`.
    public func tokenVerification(kind: String, ok: Bool) {
        count(Name.tokenVerifications, [kind, ok ? "ok" : "invalid"])
    }

    /// Values read when metrics are scraped rather than counted as they happen.
    public func gauge(_ name: String, _ labels: [String], _ value: Double) { if let id = ids[name] { registry?.set(id, labels, value) } }

    func count(_ name: String, _ labels: [String]) {
        guard let registry, let id = ids[name] else { return }
        registry.add(id, labels, 1)
    }

    /// Nanoseconds on the monotonic clock, for durations.
    public static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }
}
