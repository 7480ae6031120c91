import AuthEngine

extension SQLiteStore: PushStore {
    public func insertIOSReceipt(_ r: IOSReceiptRecord) throws {
        try db.run("INSERT INTO ios_receipts (\(StoreRecords.iosReceiptColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [r.receiptHash, r.projectID, r.bundleID, r.deviceTokenHash, r.sandbox, r.secretHash, r.createdAt, r.expiresAt, r.uses])
    }

    public func iosReceipt(hash: [UInt8]) throws -> IOSReceiptRecord? {
        try db.first("SELECT \(StoreRecords.iosReceiptColumns) FROM ios_receipts WHERE receipt_hash = ?", [hash], StoreRecords.iosReceipt)
    }

    public func useIOSReceipt(hash: [UInt8], maxUses: Int, now: Millis) throws -> Bool {
        try db.run("UPDATE ios_receipts SET uses = uses + 1 WHERE receipt_hash = ? AND uses < ? AND expires_at > ?",
                   [hash, maxUses, now]) > 0
    }
}
