public import AuthEngine

/// `email_links`: emailed links, kept by the hash of their oobCode.
extension SQLStore: EmailLinkStore {
    public func insertEmailLink(_ l: EmailLinkRecord) throws { try insert(l, EmailLinkColumn.self) }

    public func emailLink(hash: [UInt8]) throws -> EmailLinkRecord? { try find(EmailLinkColumn.self, hash) }

    public func consumeEmailLink(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE email_links SET consumed_at = ? WHERE code_hash = ? AND consumed_at IS NULL AND expires_at > ?", [at, hash, at]) == 1
    }

    public func purgeEmailLinks(expiredBefore before: Millis) throws -> Int {
        try db.run("DELETE FROM email_links WHERE expires_at < ?", [before])
    }
}
