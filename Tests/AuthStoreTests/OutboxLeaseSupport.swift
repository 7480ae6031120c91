import AuthEngine

extension OutboxStore {
    /// A lease for tests that are not about the attempt limit (one no test reaches): the lease,
    /// or nil when the message was not leased.
    func lease(id: Int64, now: Millis, until: Millis) throws -> OutboxLease? {
        guard case let .leased(lease) = try lease(id: id, now: now, until: until, maxAttempts: 1_000) else { return nil }
        return lease
    }
}
