public import AuthEngine

/// `accounts`.
extension SQLStore: AccountStore {
    public func account(project: String, localID: String) throws -> Account? {
        try readAccount("local_id = ?", [project, localID])
    }

    public func account(project: String, email: String) throws -> Account? {
        try readAccount("email = ?", [project, email.lowercased()])
    }

    public func account(project: String, phoneNumber: String) throws -> Account? {
        try readAccount("phone_number = ?", [project, phoneNumber])
    }

    public func account(project: String, providerID: String, rawID: String) throws -> Account? {
        try readAccount(db.dialect.jsonArrayHas("accounts.providers", fields: ["providerId", "rawId"]), [project, providerID, rawID])
    }

    /// One account by a condition of this file's. Inside a transaction the row may then be written
    /// back, and on PostgreSQL it is locked until the transaction ends: READ COMMITTED would
    /// otherwise let a concurrent writer commit between this read and the flow's write, which
    /// would then put the old values back (`AccountRowGuard`).
    func readAccount(_ condition: String, _ values: [any SQLBindable]) throws -> Account? {
        let lock = db.inTransaction ? db.dialect.lockRows : ""
        let a = try db.first("\(AccountColumn.table.select) WHERE project_id = ? AND \(condition)\(lock)", values, AccountColumn.read)
        if db.inTransaction { accountRows.noteRead(a) }
        return a
    }

    public func insertAccount(_ a: Account) throws {
        do {
            try insert(a, AccountColumn.self)
        } catch { throw accountConflict(error) }
        if db.inTransaction { accountRows.noteRead(a) }
    }

    public func updateAccount(_ a: Account) throws {
        try accountRows.checkUpdate(a, inTransaction: db.inTransaction)
        do {
            try db.run(AccountColumn.update, AccountColumn.updated.map { $0.column.1(a) } + ([a.projectID, a.localID] as [any SQLBindable]))
        } catch { throw accountConflict(error) }
    }

    /// A uniqueness violation as the wire error naming the field taken (both databases' messages
    /// name the index or its columns).
    func accountConflict(_ error: any Error) -> any Error {
        guard let message = db.uniqueViolation(error), message.contains("accounts") else { return error }
        if message.contains("email") { return AuthError(.emailExists) }
        if message.contains("phone") { return AuthError(.phoneNumberExists) }
        return AuthError(.duplicateLocalID)
    }

    public func deleteAccount(project: String, localID: String) throws -> Bool {
        try db.run("DELETE FROM accounts WHERE project_id = ? AND local_id = ?", [project, localID]) > 0
    }

    /// In byte order of the ids, whatever the database's locale.
    public func listAccounts(project: String, after: String?, limit: Int) throws -> [Account] {
        let id = "local_id" + db.dialect.byteOrder
        return try db.rows("\(AccountColumn.table.select) WHERE project_id = ? AND \(id) > ? ORDER BY \(id) LIMIT ?",
                           [project, after ?? "", limit], AccountColumn.read)
    }

    public func countAccounts(project: String) throws -> Int {
        try db.count("SELECT COUNT(*) FROM accounts WHERE project_id = ?", [project])
    }

    /// A phone sign-in of an existing account writes only its times (and its providers when the
    /// phone provider changed): no rewrite of the index entries of its email and number.
    public func recordPhoneSignIn(_ a: Account, providersChanged: Bool) throws {
        if providersChanged {
            try db.run("UPDATE accounts SET last_login_at = ?, last_refresh_at = ?, providers = ? WHERE project_id = ? AND local_id = ?",
                       [a.lastLoginAt, a.lastRefreshAt, AccountJSON.encodeProviders(a.providers), a.projectID, a.localID])
        } else {
            try db.run("UPDATE accounts SET last_login_at = ?, last_refresh_at = ? WHERE project_id = ? AND local_id = ?",
                       [a.lastLoginAt, a.lastRefreshAt, a.projectID, a.localID])
        }
    }
}

extension AccountColumn {
    /// Every column but the key, in the order `update` binds them.
    static let updated = allCases.filter { $0 != .project_id && $0 != .local_id }
    /// `UPDATE accounts SET email = ?, … WHERE project_id = ? AND local_id = ?`.
    static let update = "UPDATE accounts SET " + updated.map { "\($0.name) = ?" }.joined(separator: ", ")
        + " WHERE project_id = ? AND local_id = ?"
}
