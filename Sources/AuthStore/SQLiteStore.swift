import AuthEngine
import CSQLite
import JSONValue

/// The SQLite implementation of the engine's store ports. One instance per worker thread
/// (each owns its connection); all instances share the database file in WAL mode.
public final class SQLiteStore: Transactional, HealthProbe {
    public let db: SQLiteConnection
    /// Secrets already read: they are inserted once (first writer wins) and never change.
    var secretCache: [String: [UInt8]] = [:]
    /// The `before` of this connection's last phone-record purge.
    var lastPhonePurge: Millis?
    /// The accounts the open transaction has read: only those may be written back.
    let accountRows = AccountRowGuard()

    /// Opens (creating if needed) and migrates the database at `path`.
    public init(path: String, migrate: Bool = true) throws {
        db = try SQLiteConnection(path: path)
        if migrate { try Migrations.migrate(db) }
    }

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if db.inTransaction { return try body() }
        return try db.transaction {
            accountRows.begin()
            return try body()
        }
    }

    public func probe() throws -> Int { try Migrations.version(db) }
}

extension SQLiteError: StoreFailure {
    /// `SQLITE_FULL`: the disk (or the process's file-size limit) has no room for the write.
    public var isOutOfSpace: Bool { code & 0xFF == SQLITE_FULL }
    /// An embedded file is never unreachable.
    public var isUnavailable: Bool { false }
}

// MARK: - Signing keys and secrets

extension SQLiteStore: SigningKeyStore, SecretStore {
    public func publishedSigningKeys(at now: Millis) throws -> [SigningKeyRecord] {
        try db.rows("""
            SELECT kid, algorithm, private_pem, public_pem, certificate_pem, created_at, retired_at, expires_at
            FROM signing_keys WHERE expires_at IS NULL OR expires_at > ? ORDER BY created_at DESC, kid DESC
            """, [now]) { r in
            SigningKeyRecord(kid: r.text(0), algorithm: r.text(1), privatePEM: r.text(2), publicPEM: r.text(3),
                             certificatePEM: r.text(4), createdAt: r.int(5), retiredAt: r.intOrNil(6), expiresAt: r.intOrNil(7))
        }
    }

    public func insertSigningKey(_ k: SigningKeyRecord) throws {
        try db.run("""
            INSERT INTO signing_keys (kid, algorithm, private_pem, public_pem, certificate_pem, created_at, retired_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [k.kid, k.algorithm, k.privatePEM, k.publicPEM, k.certificatePEM, k.createdAt, k.retiredAt, k.expiresAt])
    }

    public func retireSigningKeys(except kid: String, at: Millis, expiresAt: Millis) throws {
        try db.run("UPDATE signing_keys SET retired_at = ?, expires_at = ? WHERE kid <> ? AND retired_at IS NULL",
                   [at, expiresAt, kid])
    }

    public func secret(named name: String) throws -> [UInt8]? {
        if let known = secretCache[name] { return known }
        let value = try db.first("SELECT value FROM secrets WHERE name = ?", [name]) { $0.blob(0) }
        // Only a committed value is kept: one read inside a transaction may yet be rolled back.
        if let value, !db.inTransaction { secretCache[name] = value }
        return value
    }

    public func insertSecretIfAbsent(named name: String, value: [UInt8], at: Millis) throws -> [UInt8] {
        try db.run("INSERT OR IGNORE INTO secrets (name, value, created_at) VALUES (?, ?, ?)", [name, value, at])
        return try secret(named: name) ?? value
    }
}

// MARK: - Accounts

extension SQLiteStore: AccountStore {
    /// Maps a uniqueness violation to the wire error naming the conflicting field.
    func mapConstraint(_ error: Error) -> Error {
        guard let e = error as? SQLiteError, e.isConstraint else { return error }
        if e.message.contains("accounts.email") { return AuthError(.emailExists) }
        if e.message.contains("accounts.phone_number") { return AuthError(.phoneNumberExists) }
        if e.message.contains("accounts.local_id") || e.message.contains("accounts.project_id") { return AuthError(.duplicateLocalID) }
        return error
    }

    public func account(project: String, localID: String) throws -> Account? {
        try readAccount("local_id = ?", [project, localID])
    }

    public func account(project: String, email: String) throws -> Account? {
        try readAccount("email = ?", [project, email.lowercased()])
    }

    public func account(project: String, phoneNumber: String) throws -> Account? {
        try readAccount("phone_number = ?", [project, phoneNumber])
    }

    /// One account by a condition of this file's; inside a transaction it may then be written back.
    func readAccount(_ condition: String, _ values: [SQLBindable]) throws -> Account? {
        let a = try db.first("SELECT \(StoreRecords.accountColumns) FROM accounts WHERE project_id = ? AND \(condition)", values,
                             StoreRecords.account)
        if db.inTransaction { accountRows.noteRead(a) }
        return a
    }

    public func insertAccount(_ a: Account) throws {
        do {
            try db.run("INSERT INTO accounts (\(StoreRecords.accountColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", StoreRecords.accountValues(a))
        } catch { throw mapConstraint(error) }
        if db.inTransaction { accountRows.noteRead(a) }
    }

    public func updateAccount(_ a: Account) throws {
        try accountRows.checkUpdate(a, inTransaction: db.inTransaction)
        do {
            try db.run("""
                UPDATE accounts SET email = ?, email_verified = ?, phone_number = ?, display_name = ?, photo_url = ?, password_hash = ?,
                disabled = ?, email_link_signin = ?, anonymous = ?, custom_attributes = ?, created_at = ?, last_login_at = ?,
                last_refresh_at = ?, valid_since = ?, providers = ?, mfa = ? WHERE project_id = ? AND local_id = ?
                """, Array(StoreRecords.accountValues(a).dropFirst(2)) + [a.projectID, a.localID])
        } catch { throw mapConstraint(error) }
    }

    public func deleteAccount(project: String, localID: String) throws -> Bool {
        try db.run("DELETE FROM accounts WHERE project_id = ? AND local_id = ?", [project, localID]) > 0
    }

    public func listAccounts(project: String, after: String?, limit: Int) throws -> [Account] {
        try db.rows("SELECT \(StoreRecords.accountColumns) FROM accounts WHERE project_id = ? AND local_id > ? ORDER BY local_id LIMIT ?",
                    [project, after ?? "", limit], StoreRecords.account)
    }

    public func countAccounts(project: String) throws -> Int {
        Int(try db.first("SELECT COUNT(*) FROM accounts WHERE project_id = ?", [project]) { $0.int(0) } ?? 0)
    }
}
