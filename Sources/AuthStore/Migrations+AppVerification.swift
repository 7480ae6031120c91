extension Migrations {
    /// Migration 3 (reserved for this feature); add `(3, """ ... """)` here.
    static let appVerification: [(version: Int, sql: String)] = []
}
