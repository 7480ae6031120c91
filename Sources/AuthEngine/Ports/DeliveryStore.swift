/// What became of the messages: providers' receipts, the phone codes' automatic fallback, and
/// the delivery ratios of metrics and the console. Every change is conditional, so a receipt
/// racing another, or two workers racing for one fallback, changes a row once.
public protocol DeliveryStore: Transactional {
    func outboxMessage(id: Int64) throws -> OutboxMessage?
    /// Moves message `id` to `state` if that is forward of its current one (`DeliveryState.rank`;
    /// or the provider's first `sent` report on a message its acceptance made `sent`)
    /// and the message was accepted by a provider; a delivered message's planned fallback is
    /// cancelled, an undelivered or failed one's brought forward to `at`. True when it moved.
    /// `from`: the provider reporting. It must be the one that took the message, or, while the
    /// message is still being sent (its acceptance not yet recorded), the report is its first
    /// word: the callback URL it was given names this message, and only the provider the send
    /// went to has it. Nil: whichever provider took it.
    func recordReceipt(id: Int64, state: DeliveryState, error: String?, at: Millis, from: String?) throws -> Bool
    /// Ids of messages whose fallback is due at `now`, the earliest first.
    func dueFallbacks(now: Millis, limit: Int) throws -> [Int64]
    /// Takes message `id`'s due fallback (clears it) and returns the message; nil when it was not
    /// due or another worker took it.
    func claimFallback(id: Int64, now: Millis) throws -> OutboxMessage?
    /// Messages of a project created at or after `since`, counted by channel, provider, region
    /// and delivery state (pending ones as `queued`, dead ones never accepted as `failed`).
    func deliveryCounts(project: String, since: Millis) throws -> [DeliveryCount]
}

/// One line of `DeliveryStore.deliveryCounts`.
public struct DeliveryCount: Sendable, Equatable {
    public var channel: OutboxMessage.Channel
    public var provider: String
    public var region: String
    public var state: DeliveryState
    public var count: Int
    public init(channel: OutboxMessage.Channel, provider: String, region: String, state: DeliveryState, count: Int) {
        self.channel = channel; self.provider = provider; self.region = region; self.state = state; self.count = count
    }
}

extension DeliveryStore {
    public func recordReceipt(id: Int64, state: DeliveryState, error: String?, at: Millis) throws -> Bool {
        try recordReceipt(id: id, state: state, error: error, at: at, from: nil)
    }
}
