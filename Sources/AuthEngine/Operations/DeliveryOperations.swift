/// What an operator does to delivery (the console's Delivery page, `gatehouse sms holds
/// release`): retry or discard an outbox message, release an SMS pumping hold. Each change and
/// its audit row (with the operator as actor) commit in one transaction, and only a change that
/// happened is audited.
public struct DeliveryOperations {
    public typealias Store = ConsoleStore & OutboxStore & AuditStore & SMSPumpingStore
    public let store: any Store
    public let clock: any Clock
    /// `cli`, or `operator:<uid>`.
    public let actor: String
    public let remoteAddress: String?

    public init(store: any Store, clock: any Clock, actor: String, remoteAddress: String? = nil) {
        self.store = store; self.clock = clock; self.actor = actor; self.remoteAddress = remoteAddress
    }

    /// Makes a pending message of `project` due now, its attempts reset (`ConsoleStore.retryMessage`);
    /// false when it is not pending (being sent, sent, dead) or not the project's.
    public func retry(id: Int64, project: String) throws -> Bool {
        try store.transaction {
            let now = clock.now()
            guard try store.retryMessage(id: id, project: project, now: now) else { return false }
            try audit(.outboxRetry, project: project, detail: "#\(id)", at: now)
            return true
        }
    }

    /// Makes a pending message dead (its body scrubbed), or deletes a dead one; never one being
    /// sent or sent.
    public func discard(id: Int64, project: String) throws -> Bool {
        try store.transaction {
            let now = clock.now()
            guard try store.discardMessage(id: id, project: project, reason: "discarded by " + actor, at: now) else { return false }
            try audit(.outboxDiscard, project: project, detail: "#\(id)", at: now)
            return true
        }
    }

    /// Releases the hold of `key` (a prefix starting with "+", else a region) in force in `project`.
    public func releaseHold(_ key: String, project: String) throws -> Bool {
        try store.transaction {
            let now = clock.now()
            guard try SMSPumpingGuard.release(key, project: project, store: store, at: now) else { return false }
            try audit(.smsHoldRelease, project: project, detail: key.hasPrefix("+") ? key : key.uppercased(), at: now)
            return true
        }
    }

    func audit(_ event: AuditEventName, project: String, detail: String, at: Millis) throws {
        try store.audit(AuditEvent(projectID: project, event: event, remoteAddress: remoteAddress, detail: detail, actor: actor), at: at)
    }
}
