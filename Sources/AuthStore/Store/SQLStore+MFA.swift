public import AuthEngine

/// `mfa_pending` (first factors passed, awaiting the second) and `ios_receipts` (silent-push receipts).
extension SQLStore: MFAStore, PushStore {
    public func insertMFAPending(_ r: MFAPendingRecord) throws { try insert(r, MFAPendingColumn.self) }

    public func mfaPending(hash: [UInt8]) throws -> MFAPendingRecord? { try find(MFAPendingColumn.self, hash) }

    public func consumeMFAPending(hash: [UInt8], now: Millis) throws -> Bool {
        try db.run("UPDATE mfa_pending SET consumed_at = ? WHERE credential_hash = ? AND consumed_at IS NULL AND expires_at > ?",
                   [now, hash, now]) > 0
    }

    public func purgeMFAPending(before: Millis) throws {
        try db.run("DELETE FROM mfa_pending WHERE expires_at < ?", [before])
    }

    @discardableResult
    public func revokeMFAPending(project: String, localID: String, at: Millis) throws -> Int {
        try db.run("UPDATE mfa_pending SET consumed_at = ? WHERE project_id = ? AND local_id = ? AND consumed_at IS NULL", [at, project, localID])
    }

    public func insertIOSReceipt(_ r: IOSReceiptRecord) throws { try insert(r, IOSReceiptColumn.self) }

    public func iosReceipt(hash: [UInt8]) throws -> IOSReceiptRecord? { try find(IOSReceiptColumn.self, hash) }

    public func useIOSReceipt(hash: [UInt8], maxUses: Int, now: Millis) throws -> Bool {
        try db.run("UPDATE ios_receipts SET uses = uses + 1 WHERE receipt_hash = ? AND uses < ? AND expires_at > ?", [hash, maxUses, now]) > 0
    }
}
