public import AuthEngine

/// `signing_keys` and `secrets`.
extension SQLStore: SigningKeyStore, SecretStore {
    public func publishedSigningKeys(at now: Millis) throws -> [SigningKeyRecord] {
        try db.rows("""
            \(SigningKeyColumn.table.select) WHERE expires_at IS NULL OR expires_at > ?
            ORDER BY created_at DESC, kid\(db.dialect.byteOrder) DESC
            """, [now], SigningKeyColumn.read)
    }

    public func insertSigningKey(_ k: SigningKeyRecord) throws { try insert(k, SigningKeyColumn.self) }

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
        // Only a committed value is kept: one read inside a transaction may yet be rolled back.
        if let value, !db.inTransaction { secretCache[name] = value }
        return value
    }

    public func insertSecretIfAbsent(named name: String, value: [UInt8], at: Millis) throws -> [UInt8] {
        try db.run("INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING", [name, value, at])
        return try secret(named: name) ?? value
    }
}
