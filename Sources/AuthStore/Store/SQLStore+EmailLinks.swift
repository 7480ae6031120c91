public import AuthEngine

/// `email_links`: emailed links, kept by the hash of their oobCode.
extension SQLStore: EmailLinkStore {
    public func insertEmailLink(_ l: EmailLinkRecord) throws { try insert(l, EmailLinkColumn.self) }

    public func emailLink(hash: [UInt8]) throws -> EmailLinkRecord? { try find(EmailLinkColumn.self, hash) }

    public func consumeEmailLink(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE email_links SET consumed_at = ? WHERE code_hash = ? AND consumed_at IS NULL AND expires_at > ?", [at, hash, at]) == 1
    }

    public func emailLinksWithCodes(project: String, email: String, since: Millis, limit: Int) throws -> [EmailLinkRecord] {
        // `email_links_email` (project_id, email, created_at): one range, newest first.
        try db.rows("""
            \(EmailLinkColumn.table.select)
            WHERE project_id = ? AND email = ? AND created_at >= ? AND short_code_hash IS NOT NULL
            ORDER BY created_at DESC LIMIT ?
            """, [project, email, since, limit], EmailLinkColumn.read)
    }

    public func takeEmailCodeAttempt(hash: [UInt8], maxAttempts: Int) throws -> Bool {
        try db.run("""
            UPDATE email_links SET short_code_attempts = short_code_attempts + 1
            WHERE code_hash = ? AND short_code_hash IS NOT NULL AND consumed_at IS NULL AND short_code_attempts < ?
            """, [hash, maxAttempts]) == 1
    }

    public func consumeEmailCode(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("""
            UPDATE email_links SET consumed_at = ?
            WHERE code_hash = ? AND short_code_hash IS NOT NULL AND consumed_at IS NULL AND expires_at > ? AND short_code_expires_at > ?
            """, [at, hash, at, at]) == 1
    }

    public func purgeEmailLinks(expiredBefore before: Millis) throws -> Int {
        try db.run("DELETE FROM email_links WHERE expires_at < ?", [before])
    }
}
