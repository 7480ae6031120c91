@testable import AuthWeb
import AuthEngine
import HTTP
import Testing

@Suite("Metrics endpoint")
struct MetricsAPITests {
    @Test("without a metrics backend (CGI mode) the path is not found")
    func noBackend() throws {
        let web = try WebClient()
        let r = web.request("GET", "/__/auth/metrics")
        #expect(r.status == 404)
    }

    @Test("with a backend: its text, as Prometheus text format, never cached; the scrape reads the outbox and the key")
    func withBackend() throws {
        let web = try WebClient(metricsExposition: { Array("gatehouse_up 1\n".utf8) })
        _ = try web.store.enqueue(OutboxMessage(projectID: "prod", channel: .sms, recipient: "+15555550199", body: "x",
                                                nextAttemptAt: web.clock.now(), createdAt: web.clock.now() - 90_000))
        let backlog = try web.store.outboxBacklog()
        #expect(backlog == [OutboxBacklog(channel: .sms, count: 1, oldestCreatedAt: web.clock.now() - 90_000)])
        let r = web.request("GET", "/__/auth/metrics")
        #expect(r.status == 200)
        #expect(r.text == "gatehouse_up 1\n")
        #expect(r.headers.contains { $0.0 == "Content-Type" && $0.1.hasPrefix("text/plain; version=0.0.4") })
        #expect(r.headers.contains { $0 == ("Cache-Control", "no-store") })
    }

    @Test("flow outcomes are labelled with error codes from a closed set")
    func reasons() {
        #expect(WebApp.metricReason(AuthError(.invalidCode)) == "INVALID_CODE")
        #expect(WebApp.metricReason(WireFailure.notFound) == "INVALID_REQUEST")
        struct Other: Error {}
        #expect(WebApp.metricReason(Other()) == "INTERNAL")
    }
}
