import AuthEngine
import JSONValue

/// The PostgreSQL implementation of the engine's store ports, for deployments of several
/// instances on several machines (docs/scaling.md). One instance per worker thread (each owns
/// its connection); every instance of every machine shares the database. The SQL mirrors
/// `SQLiteStore`'s, with PostgreSQL's forms where they differ (`ON CONFLICT`, `RETURNING`,
/// `FOR UPDATE SKIP LOCKED`, `jsonb`); records are read by the same decoders (`StoreRecords`).
/// Every single-use consumption and every counter is one conditional statement, so instances
/// never race between a read and a write.
public final class PostgreSQLStore: Transactional, HealthProbe {
    public let db: PostgreSQLConnection
    /// Secrets already read: inserted once (first writer wins), never changed.
    var secretCache: [String: [UInt8]] = [:]
    var lastPhonePurge: Millis?
    /// The accounts the open transaction has read (and locked): only those may be written back.
    let accountRows = AccountRowGuard()

    /// A store on `url` (a libpq URI or `key=value` string; libpq's environment and service files
    /// apply). With `migrate` it connects at once and brings the schema up to date under the
    /// advisory lock; without, it connects on first use, so a worker opened while the database is
    /// down answers 503 and connects once it is back.
    public init(url: String, migrate: Bool = true, statementTimeoutMillis: Int = 10_000, now: Millis = 0) throws {
        db = try PostgreSQLConnection(url: url, statementTimeoutMillis: statementTimeoutMillis, connectNow: migrate)
        if migrate { try PostgreSQLMigrations.migrate(db, now: now) }
    }

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if db.inTransaction { return try body() }
        // Each attempt (a deadlock or serialization failure runs the body again) starts afresh.
        return try db.transaction {
            accountRows.begin()
            return try body()
        }
    }

    public func probe() throws -> Int { try PostgreSQLMigrations.version(db) }
}

// MARK: - Signing keys and secrets

extension PostgreSQLStore: SigningKeyStore, SecretStore, SigningKeyCleanup {
    public func publishedSigningKeys(at now: Millis) throws -> [SigningKeyRecord] {
        try db.rows("""
            SELECT kid, algorithm, private_pem, public_pem, certificate_pem, created_at, retired_at, expires_at
            FROM signing_keys WHERE expires_at IS NULL OR expires_at > ? ORDER BY created_at DESC, kid COLLATE "C" DESC
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
        try db.run("UPDATE signing_keys SET retired_at = ?, expires_at = ? WHERE kid <> ? AND retired_at IS NULL", [at, expiresAt, kid])
    }

    @discardableResult
    public func deleteExpiredSigningKeys(at now: Millis) throws -> Int {
        try db.run("DELETE FROM signing_keys WHERE expires_at IS NOT NULL AND expires_at <= ?", [now])
    }

    public func secret(named name: String) throws -> [UInt8]? {
        if let known = secretCache[name] { return known }
        let value = try db.first("SELECT value FROM secrets WHERE name = ?", [name]) { $0.blob(0) }
        if let value, !db.inTransaction { secretCache[name] = value }
        return value
    }

    public func insertSecretIfAbsent(named name: String, value: [UInt8], at: Millis) throws -> [UInt8] {
        try db.run("INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING", [name, value, at])
        return try secret(named: name) ?? value
    }
}

// MARK: - Accounts

extension PostgreSQLStore: AccountStore {
    /// A uniqueness violation as the wire error naming the conflicting field (by the index).
    func mapConstraint(_ error: Error) -> Error {
        guard let e = error as? PostgreSQLError, e.isUniqueViolation else { return error }
        if e.message.contains("accounts_email") { return AuthError(.emailExists) }
        if e.message.contains("accounts_phone") { return AuthError(.phoneNumberExists) }
        if e.message.contains("accounts_pkey") { return AuthError(.duplicateLocalID) }
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

    /// One account by a condition of this file's. Inside a transaction the row is locked
    /// (`FOR UPDATE`) until it ends: READ COMMITTED would otherwise let a concurrent writer commit
    /// between this read and the flow's write, which would then put the old values back.
    func readAccount(_ condition: String, _ values: [SQLBindable]) throws -> Account? {
        let lock = db.inTransaction ? " FOR UPDATE" : ""
        let a = try db.first("SELECT \(StoreRecords.accountColumns) FROM accounts WHERE project_id = ? AND \(condition)\(lock)", values,
                             StoreRecords.account)
        if db.inTransaction { accountRows.noteRead(a) }
        return a
    }

    public func insertAccount(_ a: Account) throws {
        do {
            try db.run("INSERT INTO accounts (\(StoreRecords.accountColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       StoreRecords.accountValues(a))
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

    /// Byte order (`COLLATE "C"`), as SQLite compares, whatever the database's locale.
    public func listAccounts(project: String, after: String?, limit: Int) throws -> [Account] {
        try db.rows("""
            SELECT \(StoreRecords.accountColumns) FROM accounts WHERE project_id = ? AND local_id COLLATE "C" > ?
            ORDER BY local_id COLLATE "C" LIMIT ?
            """, [project, after ?? "", limit], StoreRecords.account)
    }

    public func countAccounts(project: String) throws -> Int {
        Int(try db.first("SELECT COUNT(*) FROM accounts WHERE project_id = ?", [project]) { $0.int(0) } ?? 0)
    }
}
