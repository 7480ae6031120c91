import AuthEngine
import HTTP

/// `GET /__/auth/metrics`: the Prometheus text exposition of every metric (docs/operations.md).
/// The shipped nginx snippets answer it only to internal addresses. Values that are states
/// rather than events (the outbox's backlog, the signing key's age) are read at the scrape.
/// Not found where no metrics backend runs (CGI mode).
enum MetricsAPI {
    static func scrape(_ ctx: inout Context) throws -> Response {
        guard let emit = ctx.app.metricsExposition else { throw WireFailure.notFound }
        let now = ctx.app.clock.now()
        let backlog = try ctx.store.outboxBacklog()
        for channel in OutboxMessage.Channel.allCases {
            let b = backlog.first { $0.channel == channel }
            ctx.app.services.telemetry.gauge(Telemetry.Name.outboxDepth, [channel.rawValue], Double(b?.count ?? 0))
            ctx.app.services.telemetry.gauge(Telemetry.Name.outboxOldest, [channel.rawValue],
                            b.map { Double(max(now - $0.oldestCreatedAt, 0)) / 1000 } ?? 0)
        }
        let signer = try ctx.app.keyRing.signer(store: ctx.store)
        ctx.app.services.telemetry.gauge(Telemetry.Name.signingKeyAge, [], Double(max(now - signer.record.createdAt, 0)) / 1000)
        return Response(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")],
                        body: emit())
    }
}
