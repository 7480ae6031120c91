public import AuthEngine

/// The store's schema: the tables (`Schema+Tables.swift`), the version they make, and the
/// migrations that bring an older database to it. A new database is created from the
/// declarations; an existing one runs each migration it lacks. Both databases, one list.
public enum Schema {
    /// The version the declarations describe.
    public static let version = 18
    /// The oldest version this build upgrades in place. Versions 1–13 were upgraded by the releases
    /// of their time; such a database is brought to 14 by one of those first (docs/operations.md).
    public static let oldestUpgradable = 14

    /// Every table holding data, in `store copy`'s order (no foreign keys: any order would do).
    static let tables: [Table] = [
        AccountColumn.table, PhoneVerificationColumn.table, PhoneProofColumn.table, EmailLinkColumn.table, RefreshTokenColumn.table,
        SessionColumn.table, SigningKeyColumn.table, SecretColumn.table, LimitCounterColumn.table, OutboxColumn.table,
        AppTokenColumn.table, ChallengeReplayColumn.table, AuditColumn.table, SMSHoldColumn.table, MFAPendingColumn.table,
        IOSReceiptColumn.table, PasskeyColumn.table, PasskeyChallengeColumn.table, UserDeviceColumn.table, OperatorColumn.table,
    ]

    /// One step from version − 1 to `version`. Steps name the declarations (a column added is
    /// declared in its table and added here by name), or are SQL both databases read.
    struct Migration {
        enum Step {
            case sql(String)
            case createTable(Table)
            case addColumn(Table, String)
            case createIndex(Table, String)
        }
        let version: Int
        let steps: [Step]
    }

    /// Newer than `oldestUpgradable`, in order. Never edit one that has been released: add the next.
    static let migrations: [Migration] = [
        // Version 14 recorded `applied_at` in seconds on SQLite and in milliseconds on PostgreSQL:
        // both in milliseconds, as every other time.
        // Audit events under one naming style (`AuditEventName`): the rows already written renamed.
        Migration(version: 15, steps: [
            .sql("UPDATE schema_migrations SET applied_at = applied_at * 1000 WHERE applied_at > 0 AND applied_at < 100000000000"),
            .sql("""
                UPDATE audit_log SET event = CASE event
                WHEN 'signin.email_link.new' THEN 'email_link.sign_up'
                WHEN 'signin.email_link.first_factor' THEN 'email_link.first_factor'
                WHEN 'signin.email_link' THEN 'email_link.sign_in'
                WHEN 'sign_up_anonymous' THEN 'anonymous.sign_up'
                WHEN 'sign_out' THEN 'session.sign_out'
                WHEN 'profile_update' THEN 'account.update'
                WHEN 'revoke' THEN 'tokens.revoke'
                WHEN 'refresh_token_reuse' THEN 'refresh_token.reuse'
                WHEN 'admin_create' THEN 'admin.create'
                WHEN 'admin_update' THEN 'admin.update'
                WHEN 'delete' THEN 'admin.delete'
                WHEN 'batch_delete' THEN 'admin.batch_delete'
                WHEN 'admin_import' THEN 'admin.import'
                ELSE event END
                WHERE event IN ('signin.email_link.new', 'signin.email_link.first_factor', 'signin.email_link', 'sign_up_anonymous', 'sign_out', 'profile_update', 'revoke', 'refresh_token_reuse', 'admin_create', 'admin_update', 'delete', 'batch_delete', 'admin_import')
                """),
        ]),
        // Passkeys and their challenges.
        Migration(version: 16, steps: [.createTable(PasskeyColumn.table), .createTable(PasskeyChallengeColumn.table)]),
        // Where an account is signed in (device and network of each session and refresh family),
        // the devices it used, the console's operators and the indexes of its lists.
        Migration(version: 17, steps: [
            .addColumn(RefreshTokenColumn.table, "user_agent"), .addColumn(RefreshTokenColumn.table, "network"),
            .addColumn(SessionColumn.table, "second_factor"), .addColumn(SessionColumn.table, "user_agent"),
            .addColumn(SessionColumn.table, "network"),
            .createIndex(AccountColumn.table, "accounts_created"), .createIndex(AccountColumn.table, "accounts_last_sign_in"),
            .createIndex(AuditColumn.table, "audit_log_user"),
            .createTable(UserDeviceColumn.table), .createTable(OperatorColumn.table),
        ]),
        // Codes that arrive: what providers report of each message (receipts), the phone codes'
        // channels and automatic fallback, and the code beside every email link.
        Migration(version: 18, steps: [
            .addColumn(OutboxColumn.table, "provider"), .addColumn(OutboxColumn.table, "provider_message_id"),
            .addColumn(OutboxColumn.table, "delivery"), .addColumn(OutboxColumn.table, "delivery_error"),
            .addColumn(OutboxColumn.table, "delivery_at"), .addColumn(OutboxColumn.table, "region"),
            .addColumn(OutboxColumn.table, "language"), .addColumn(OutboxColumn.table, "fallback_at"),
            .addColumn(OutboxColumn.table, "session_hash"),
            .createIndex(OutboxColumn.table, "outbox_fallback"), .createIndex(OutboxColumn.table, "outbox_project_created"),
            .addColumn(PhoneVerificationColumn.table, "message_id"), .addColumn(PhoneVerificationColumn.table, "channel"),
            .addColumn(EmailLinkColumn.table, "short_code_hash"), .addColumn(EmailLinkColumn.table, "short_code_binding"),
            .addColumn(EmailLinkColumn.table, "short_code_expires_at"), .addColumn(EmailLinkColumn.table, "short_code_attempts"),
        ]),
    ]

    /// The database's version: 0 when it has no schema yet.
    public static func recordedVersion(_ db: any SQLDatabase) throws -> Int {
        do {
            return try db.count("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
        } catch {
            // Only a missing table means "none"; any other failure is the caller's to see.
            guard (try? db.count(db.dialect.tableExists, ["schema_migrations"])) == 0 else { throw error }
            return 0
        }
    }

    /// Brings the database to `version`, in one transaction (on PostgreSQL under an advisory lock,
    /// so instances starting together migrate once; on SQLite the write lock does the same).
    /// A current database costs one read. Returns the versions applied.
    @discardableResult
    public static func migrate(_ db: any SQLDatabase, now: Millis) throws -> [Int] {
        if try recordedVersion(db) == version { return [] }
        return try db.transaction {
            if let lock = db.dialect.migrationLock { _ = try db.rows(lock, []) { _ in 0 } }
            let exists = try db.count(db.dialect.tableExists, ["schema_migrations"]) != 0
            let current = exists ? try db.count("SELECT COALESCE(MAX(version), 0) FROM schema_migrations") : 0
            if current == version { return [] }
            if current > version {
                throw PortError("store", "the database's schema (\(current)) is newer than this build's (\(version))")
            }
            if current == 0 {
                for t in [SchemaMigrationColumn.table] + tables { try db.script(createTable(t, db.dialect)) }
                try db.run("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", [version, now])
                return [version]
            }
            guard current >= oldestUpgradable else {
                throw PortError("store", "the database's schema (\(current)) is older than \(oldestUpgradable), the oldest this build upgrades: "
                                + "start the previous release on it once first")
            }
            var applied: [Int] = []
            for m in migrations where m.version > current {
                for step in m.steps { try db.script(sql(step, db.dialect)) }
                try db.run("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", [m.version, now])
                applied.append(m.version)
            }
            return applied
        }
    }

    static func sql(_ step: Migration.Step, _ d: SQLDialect) -> String {
        switch step {
        case let .sql(text): return text
        case let .createTable(t): return createTable(t, d)
        case let .addColumn(t, name):
            guard let c = t.columns.first(where: { $0.name == name }) else { preconditionFailure("\(t.name) declares no \(name)") }
            return "ALTER TABLE \(t.name) ADD COLUMN \(definition(c, d, neverReuseIDs: false))"
        case let .createIndex(t, name):
            guard let i = t.indexes.first(where: { $0.name == name }) else { preconditionFailure("\(t.name) declares no index \(name)") }
            return createIndex(i, on: t)
        }
    }

    // MARK: - DDL

    /// The table and its indexes, as `d` writes them.
    static func createTable(_ t: Table, _ d: SQLDialect) -> String {
        var parts = t.columns.map { definition($0, d, neverReuseIDs: t.neverReuseIDs) }
        let hasIdentity = t.columns.contains { $0.type == .identity }
        if !hasIdentity { parts.append("PRIMARY KEY (\(t.primaryKey.joined(separator: ", ")))") }
        // SQLite: a table keyed by its own columns is stored in its primary key's b-tree.
        let tail = d.kind == .sqlite && !hasIdentity ? " WITHOUT ROWID" : ""
        let create = "CREATE TABLE \(t.name) (\n    " + parts.joined(separator: ",\n    ") + "\n)\(tail);"
        return ([create] + t.indexes.map { createIndex($0, on: t) }).joined(separator: "\n")
    }

    static func createIndex(_ i: IndexSpec, on t: Table) -> String {
        "CREATE \(i.unique ? "UNIQUE " : "")INDEX \(i.name) ON \(t.name)(\(i.columns.joined(separator: ", ")))"
            + (i.condition.map { " WHERE \($0)" } ?? "") + ";"
    }

    static func definition(_ c: Table.Column, _ d: SQLDialect, neverReuseIDs: Bool) -> String {
        if c.type == .identity {
            switch d.kind {
            // `INTEGER PRIMARY KEY` is SQLite's rowid, which may reuse the id of the last row deleted
            // unless AUTOINCREMENT keeps the highest id ever given.
            case .sqlite: return "\(c.name) INTEGER PRIMARY KEY" + (neverReuseIDs ? " AUTOINCREMENT" : "")
            case .postgresql: return "\(c.name) BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
            }
        }
        let type: String
        switch (c.type, d.kind) {
        case (.integer, .sqlite): type = "INTEGER"
        case (.integer, .postgresql): type = "BIGINT"
        case (.text, _): type = "TEXT"
        case (.blob, .sqlite): type = "BLOB"
        case (.blob, .postgresql): type = "BYTEA"
        case (.identity, _): type = ""
        }
        var out = "\(c.name) \(type)"
        if !c.nullable { out += " NOT NULL" }
        switch c.defaultValue {
        case nil: break
        case let .integer(n): out += " DEFAULT \(n)"
        case let .text(s): out += " DEFAULT '" + s.replacingAll("'", with: "''") + "'"
        case .emptyBlob: out += d.kind == .sqlite ? " DEFAULT x''" : " DEFAULT ''::bytea"
        }
        return out
    }
}

extension String {
    /// Every `target` replaced (the declarations' defaults; no Foundation here).
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for ch in self { if ch == target { out += replacement } else { out.append(ch) } }
        return out
    }
}
