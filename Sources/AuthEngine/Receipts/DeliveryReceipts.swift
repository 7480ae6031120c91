/// Applies a provider's report on one of its messages (a delivery receipt). The callback
/// endpoints check the report's signature first; this checks that the message is the one the
/// report names: it exists, belongs to the project the report was sent for, was accepted by this
/// provider and, when the provider gave it an id, under that id. So a provider's report can
/// change only its own messages of that project. States only move forward
/// (`DeliveryStore.recordReceipt`): a replayed or stale report changes nothing.
public struct DeliveryReceipts {
    public let store: any DeliveryStore
    public let clock: any Clock
    public let telemetry: Telemetry

    public init(store: any DeliveryStore, clock: any Clock, telemetry: Telemetry) {
        self.store = store; self.clock = clock; self.telemetry = telemetry
    }

    public enum Outcome: Equatable, Sendable {
        case applied
        /// The message is this provider's, but the report does not move it forward.
        case replayed
        /// No such message of that project and provider.
        case unknown
    }

    public func apply(project: String, messageID: Int64, provider: String, providerMessageID: String?, state: DeliveryState,
                      error: String?) throws -> Outcome {
        // A report can outrun the worker's record of the acceptance (the provider answered and
        // reported at once): a message still being sent, with no provider yet, takes it.
        guard let m = try store.outboxMessage(id: messageID), m.projectID == project,
              m.provider == provider || (m.provider == nil && m.status == .sending) else { return .unknown }
        if let known = m.providerMessageID, let named = providerMessageID, known != named { return .unknown }
        let error = error.flatMap { e -> String? in
            let kept = String(e.unicodeScalars.filter { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }.prefix(32).map(Character.init))
            return kept.isEmpty || kept == "0" ? nil : kept
        }
        guard try store.recordReceipt(id: messageID, state: state, error: error, at: clock.now(), from: provider) else { return .replayed }
        telemetry.receipt(channel: m.channel.rawValue, provider: provider, region: m.region ?? "", state: state.rawValue)
        return .applied
    }
}
