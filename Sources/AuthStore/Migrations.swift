/// Numbered schema migrations, applied in order and recorded in `schema_migrations`.
/// Never edit a released migration: add the next number.
/// Numbers: 1 foundation; 2 phone sign-in; 3 app verification; 4 email link; 5 tokens/sessions;
/// 6 phone open-code index; 7 fewer pages per sign-in (audit log, refresh-token indexes); 8 the
/// client a pending phone code belongs to; 9 SMS pumping holds; 10 the outbox's lease token; 11 phone
/// second factor (enrolments, pending credentials, code purpose, refresh tokens' factor); 12 silent-push
/// receipts. New
/// migrations take the next free number.
public enum Migrations {
    public static let all: [(version: Int, sql: String)] = ([
        (1, """
        CREATE TABLE accounts (
            project_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            email TEXT,
            email_verified INTEGER NOT NULL DEFAULT 0,
            phone_number TEXT,
            display_name TEXT,
            photo_url TEXT,
            password_hash TEXT,
            disabled INTEGER NOT NULL DEFAULT 0,
            email_link_signin INTEGER NOT NULL DEFAULT 0,
            anonymous INTEGER NOT NULL DEFAULT 0,
            custom_attributes TEXT,
            created_at INTEGER NOT NULL,
            last_login_at INTEGER,
            last_refresh_at INTEGER,
            valid_since INTEGER NOT NULL DEFAULT 0,
            providers TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (project_id, local_id)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX accounts_email ON accounts(project_id, email) WHERE email IS NOT NULL;
        CREATE UNIQUE INDEX accounts_phone ON accounts(project_id, phone_number) WHERE phone_number IS NOT NULL;

        CREATE TABLE phone_verifications (
            session_hash BLOB PRIMARY KEY,
            project_id TEXT NOT NULL,
            phone_number TEXT NOT NULL,
            app_id TEXT NOT NULL DEFAULT '',
            code_hash BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            consumed_at INTEGER,
            is_test INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE INDEX phone_verifications_pending ON phone_verifications(project_id, phone_number, app_id, expires_at);

        CREATE TABLE email_links (
            code_hash BLOB PRIMARY KEY,
            project_id TEXT NOT NULL,
            request_type TEXT NOT NULL,
            email TEXT NOT NULL,
            local_id TEXT,
            continue_url TEXT,
            can_handle_in_app INTEGER NOT NULL DEFAULT 0,
            ios_bundle_id TEXT,
            android_package TEXT,
            lang TEXT NOT NULL DEFAULT 'en',
            browser_binding BLOB,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            consumed_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX email_links_email ON email_links(project_id, email, created_at);

        CREATE TABLE refresh_tokens (
            token_hash BLOB PRIMARY KEY,
            family_id TEXT NOT NULL,
            project_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            provider TEXT NOT NULL,
            auth_time INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            rotated_at INTEGER,
            revoked_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
        CREATE INDEX refresh_tokens_user ON refresh_tokens(project_id, local_id);

        CREATE TABLE signing_keys (
            kid TEXT PRIMARY KEY,
            algorithm TEXT NOT NULL,
            private_pem TEXT NOT NULL,
            public_pem TEXT NOT NULL,
            certificate_pem TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            retired_at INTEGER,
            expires_at INTEGER
        ) WITHOUT ROWID;

        CREATE TABLE secrets (
            name TEXT PRIMARY KEY,
            value BLOB NOT NULL,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE limit_counters (
            bucket TEXT NOT NULL,
            window_start INTEGER NOT NULL,
            count INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (bucket, window_start)
        ) WITHOUT ROWID;

        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project_id TEXT NOT NULL,
            channel TEXT NOT NULL,
            recipient TEXT NOT NULL,
            subject TEXT,
            body TEXT NOT NULL,
            html_body TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            lease_until INTEGER,
            last_error TEXT,
            created_at INTEGER NOT NULL,
            sent_at INTEGER
        );
        CREATE INDEX outbox_due ON outbox(status, next_attempt_at);

        CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at INTEGER NOT NULL,
            project_id TEXT NOT NULL,
            event TEXT NOT NULL,
            local_id TEXT,
            remote_address TEXT,
            detail TEXT
        );
        CREATE INDEX audit_log_user ON audit_log(project_id, local_id, at);

        CREATE TABLE app_tokens (
            token_hash BLOB PRIMARY KEY,
            project_id TEXT NOT NULL,
            api_key TEXT NOT NULL,
            app_id TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """),
    ] + phone + appVerification + emailLink + sessions + flowPages + pumping + outboxLease + mfa + push + customTokens + auditActors).sorted { $0.version < $1.version }

    /// Applies every migration newer than the recorded version, each in its own transaction.
    /// Returns the resulting version. Concurrent starters serialise on the write lock.
    @discardableResult
    public static func migrate(_ db: SQLiteConnection, upTo target: Int = Int.max) throws -> Int {
        try db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)")
        for m in all where m.version <= target {
            try db.transaction {
                let done = try db.first("SELECT 1 FROM schema_migrations WHERE version = ?", [m.version]) { _ in true } ?? false
                guard !done else { return }
                try db.execute(m.sql)
                try db.run("INSERT INTO schema_migrations (version, applied_at) VALUES (?, strftime('%s','now'))", [m.version])
            }
        }
        return try version(db)
    }

    public static func version(_ db: SQLiteConnection) throws -> Int {
        Int(try db.first("SELECT COALESCE(MAX(version), 0) FROM schema_migrations") { $0.int(0) } ?? 0)
    }
}
