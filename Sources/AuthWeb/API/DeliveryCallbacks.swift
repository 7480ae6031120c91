import AuthCrypto
import AuthEngine
import HTTP
import JSONValue
import TextCoding

/// Providers' delivery receipts (docs/operations.md "Delivery receipts"): public, server to
/// server, and refused unless signed by a configured provider.
/// - `POST /__/auth/delivery/twilio?p=<project>&m=<message>&n=<provider>`: Twilio's status
///   callback (form body), `X-Twilio-Signature` over the provider's configured
///   `status_callback_url` plus this request's query, never over the Host the request names.
/// - `POST /__/auth/delivery/webhook`: the webhook gateway's report, JSON `{"id", "project",
///   "status", "error_code"?}` signed as its requests are (`WebhookSignature`), within 5 minutes.
/// Answers: 200 `{}` applied; 400 malformed; 403 not signed by a known provider; 404 no such
/// message of that project and provider; 409 a report that does not move the message forward
/// (replayed or stale); 429 past the client's budget.
enum DeliveryCallbacksAPI {
    /// Refused reports per client network (and 8 × per block) per minute, after which every
    /// report from there is refused (429). Only refusals count: a provider's genuine reports cost
    /// their one write and no counter, while a stranger's forged, replayed or unknown ones each
    /// count, and nobody can forge reports from a provider's own network.
    static let budget = Limits.Rule("receipts-refused-client-minute", max: 600, per: 60)
    /// How old a webhook report's timestamp may be (either way).
    static let skewSeconds: Int64 = 300

    static func twilio(_ ctx: inout Context) throws -> Response {
        if let refused = try overBudget(ctx) { return refused }
        return try counted(ctx, try twilioReport(&ctx))
    }

    static func twilioReport(_ ctx: inout Context) throws -> Response {
        let q = ctx.request
        guard let name = q.query("n"), let source = ctx.app.settings.receiptSources.first(where: { $0.name == name && $0.kind == "twilio" }) else {
            return answer(403, "PERMISSION_DENIED", "Not signed by a configured provider.")
        }
        let params = q.contentType == "application/x-www-form-urlencoded" ? q.formFields : []
        let url = source.callbackURL + (q.rawQuery.isEmpty ? "" : "?" + q.rawQuery)
        guard TwilioSignature.verify(q.header("x-twilio-signature"), authToken: source.secret, url: url, params: params) else {
            return answer(403, "PERMISSION_DENIED", "Not signed by a configured provider.")
        }
        func field(_ n: String) -> String? { params.first(where: { $0.0 == n })?.1 }
        let state: DeliveryState?
        let sid: String?
        if let status = field("CallStatus") {
            state = TwilioStatus.state(callStatus: status)
            sid = field("CallSid")
        } else {
            state = field("MessageStatus").flatMap(TwilioStatus.state(messageStatus:))
            sid = field("MessageSid") ?? field("SmsSid")
        }
        guard let project = q.query("p"), let id = q.query("m").flatMap({ Int64($0) }), let state else {
            return answer(400, "INVALID_ARGUMENT", "A report names its project, message and a known status.")
        }
        return try apply(&ctx, project: project, id: id, provider: source.name, providerID: sid, state: state, error: field("ErrorCode"))
    }

    static func webhook(_ ctx: inout Context) throws -> Response {
        if let refused = try overBudget(ctx) { return refused }
        return try counted(ctx, try webhookReport(&ctx))
    }

    static func webhookReport(_ ctx: inout Context) throws -> Response {
        let q = ctx.request
        let now = ctx.app.clock.nowSeconds
        // At most 12 characters: |ts| < 10¹², so `now - ts` neither overflows nor is Int64.min.
        guard let stamp = q.header("x-gatehouse-timestamp"), stamp.utf8.count <= 12, let ts = Int64(stamp), abs(now - ts) <= skewSeconds,
              let signature = q.header("x-gatehouse-signature"),
              let source = ctx.app.settings.receiptSources.first(where: { s in
                  s.kind == "webhook" && Digest.constantTimeEqual(signature, WebhookSignature.sign(secret: s.secret, timestamp: ts, body: q.body))
              }) else {
            return answer(403, "PERMISSION_DENIED", "Not signed by a configured provider, or too old.")
        }
        guard let json = try? JSONParser().parse(q.body), let project = json["project"]?.stringValue,
              let id = json["id"]?.stringValue.flatMap({ Int64($0) }) ?? json["id"]?.int64Value,
              let state = json["status"]?.stringValue.flatMap(DeliveryState.init(rawValue:)) else {
            return answer(400, "INVALID_ARGUMENT", "A report is {\"id\", \"project\", \"status\", \"error_code\"?} with a known status.")
        }
        return try apply(&ctx, project: project, id: id, provider: source.name, providerID: nil, state: state,
                         error: json["error_code"]?.stringValue)
    }

    static func apply(_ ctx: inout Context, project: String, id: Int64, provider: String, providerID: String?, state: DeliveryState,
                      error: String?) throws -> Response {
        let receipts = DeliveryReceipts(store: ctx.store, clock: ctx.app.clock, telemetry: ctx.app.services.telemetry)
        switch try receipts.apply(project: project, messageID: id, provider: provider, providerMessageID: providerID, state: state, error: error) {
        case .applied:
            // A failed or undelivered code may fall back to the next channel now.
            if state == .undelivered || state == .failed { ctx.app.outboxNotifier() }
            return .json(.object([]))
        case .replayed: return answer(409, "ABORTED", "The message is already past this state.")
        case .unknown: return answer(404, "NOT_FOUND", "No such message of this project and provider.")
        }
    }

    /// A read: whether this client network still has refusals left.
    static func overBudget(_ ctx: Context) throws -> Response? {
        let client = ctx.project.client(ctx.request.remoteAddress)
        guard try !Limits(store: ctx.store, clock: ctx.app.clock).allows(budget, client: client, scope: "receipts") else { return nil }
        return answer(429, "RESOURCE_EXHAUSTED", "Too many refused reports from this network.")
    }

    /// Counts a refusal on the client's budget; an applied report passes as it is.
    static func counted(_ ctx: Context, _ response: Response) throws -> Response {
        if response.status >= 400 {
            _ = try Limits(store: ctx.store, clock: ctx.app.clock).record(budget, client: ctx.project.client(ctx.request.remoteAddress),
                                                                          scope: "receipts")
        }
        return response
    }

    /// A small error body in the wire's envelope.
    static func answer(_ code: Int, _ status: String, _ message: String) -> Response {
        .json(JSON.obj(("error", JSON.obj(("code", code), ("message", message), ("status", status)))), status: code)
    }
}
