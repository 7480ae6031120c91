import AuthEngine

/// `email_links` (migration 1, index from migration 4): emailed links stored by the hash of their oobCode.
extension SQLiteStore: EmailLinkStore {
    static let emailLinkColumns = """
        code_hash, project_id, request_type, email, local_id, continue_url, can_handle_in_app, ios_bundle_id, android_package,
        lang, browser_binding, created_at, expires_at, consumed_at
        """

    static func emailLink(_ r: Row) -> EmailLinkRecord {
        let binding = r.blob(10)
        return EmailLinkRecord(codeHash: r.blob(0), projectID: r.text(1), requestType: OobRequestType(rawValue: r.text(2)) ?? .unspecified,
                               email: r.text(3), localID: r.textOrNil(4), continueURL: r.textOrNil(5), canHandleCodeInApp: r.bool(6),
                               iosBundleID: r.textOrNil(7), androidPackage: r.textOrNil(8), lang: r.text(9),
                               browserBinding: binding.isEmpty ? nil : binding, createdAt: r.int(11), expiresAt: r.int(12),
                               consumedAt: r.intOrNil(13))
    }

    public func insertEmailLink(_ l: EmailLinkRecord) throws {
        try db.run("INSERT INTO email_links (\(SQLiteStore.emailLinkColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [l.codeHash, l.projectID, l.requestType.rawValue, l.email, l.localID, l.continueURL, l.canHandleCodeInApp,
                    l.iosBundleID, l.androidPackage, l.lang, l.browserBinding, l.createdAt, l.expiresAt, l.consumedAt])
    }

    public func emailLink(hash: [UInt8]) throws -> EmailLinkRecord? {
        try db.first("SELECT \(SQLiteStore.emailLinkColumns) FROM email_links WHERE code_hash = ?", [hash], SQLiteStore.emailLink)
    }

    public func consumeEmailLink(hash: [UInt8], at: Millis) throws -> Bool {
        try db.run("UPDATE email_links SET consumed_at = ? WHERE code_hash = ? AND consumed_at IS NULL AND expires_at > ?",
                   [at, hash, at]) == 1
    }

    public func purgeEmailLinks(expiredBefore before: Millis) throws -> Int {
        try db.run("DELETE FROM email_links WHERE expires_at < ?", [before])
    }
}
