import AuthEngine

/// `email_links` (migration 1, index from migration 4): emailed links stored by the hash of their oobCode.
extension SQLiteStore: EmailLinkStore {
    public func insertEmailLink(_ l: EmailLinkRecord) throws {
        try db.run("INSERT INTO email_links (\(StoreRecords.emailLinkColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [l.codeHash, l.projectID, l.requestType.rawValue, l.email, l.localID, l.continueURL, l.canHandleCodeInApp,
                    l.iosBundleID, l.androidPackage, l.lang, l.browserBinding, l.createdAt, l.expiresAt, l.consumedAt])
    }

    public func emailLink(hash: [UInt8]) throws -> EmailLinkRecord? {
        try db.first("SELECT \(StoreRecords.emailLinkColumns) FROM email_links WHERE code_hash = ?", [hash], StoreRecords.emailLink)
    }

    public func consumeEmailLink(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE email_links SET consumed_at = ? WHERE code_hash = ? AND consumed_at IS NULL AND expires_at > ?",
                   [at, hash, at]) == 1
    }

    public func purgeEmailLinks(expiredBefore before: Millis) throws -> Int {
        try db.run("DELETE FROM email_links WHERE expires_at < ?", [before])
    }
}
