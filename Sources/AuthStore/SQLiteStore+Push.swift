import AuthEngine

extension SQLiteStore: PushStore {
    static let iosReceiptColumns = "receipt_hash, project_id, bundle_id, device_token_hash, sandbox, secret_hash, created_at, expires_at, uses"

    public func insertIOSReceipt(_ r: IOSReceiptRecord) throws {
        try db.run("INSERT INTO ios_receipts (\(SQLiteStore.iosReceiptColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [r.receiptHash, r.projectID, r.bundleID, r.deviceTokenHash, r.sandbox, r.secretHash, r.createdAt, r.expiresAt, r.uses])
    }

    public func iosReceipt(hash: [UInt8]) throws -> IOSReceiptRecord? {
        try db.first("SELECT \(SQLiteStore.iosReceiptColumns) FROM ios_receipts WHERE receipt_hash = ?", [hash]) { r in
            IOSReceiptRecord(receiptHash: r.blob(0), projectID: r.text(1), bundleID: r.text(2), deviceTokenHash: r.blob(3),
                             sandbox: r.int(4) != 0, secretHash: r.blob(5), createdAt: r.int(6), expiresAt: r.int(7),
                             uses: Int(clamping: r.int(8)))
        }
    }

    public func useIOSReceipt(hash: [UInt8], maxUses: Int, now: Millis) throws -> Bool {
        try db.run("UPDATE ios_receipts SET uses = uses + 1 WHERE receipt_hash = ? AND uses < ? AND expires_at > ?",
                   [hash, maxUses, now]) > 0
    }
}
