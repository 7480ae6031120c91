/// Who may open the operator console (`operators`), changed with its audit row in one
/// transaction: `gatehouse operators add|remove` and dev mode's demo operator.
public enum Operators {
    /// False (nothing written, nothing audited) when it already was one.
    @discardableResult
    public static func add(project: String, localID: String, actor: String, store: any OperatorStore & AuditStore, at now: Millis) throws -> Bool {
        try store.transaction {
            guard try store.addOperator(OperatorRecord(projectID: project, localID: localID, addedAt: now, addedBy: actor)) else { return false }
            try store.audit(AuditEvent(projectID: project, event: .operatorAdd, localID: localID, actor: actor), at: now)
            return true
        }
    }

    /// False (nothing written, nothing audited) when it was not one.
    public static func remove(project: String, localID: String, actor: String, store: any OperatorStore & AuditStore, at now: Millis) throws -> Bool {
        try store.transaction {
            guard try store.removeOperator(project: project, localID: localID) else { return false }
            try store.audit(AuditEvent(projectID: project, event: .operatorRemove, localID: localID, actor: actor), at: now)
            return true
        }
    }
}
