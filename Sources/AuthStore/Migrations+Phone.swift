extension Migrations {
    /// Migration 2 (reserved for this feature); add `(2, """ ... """)` here.
    static let phone: [(version: Int, sql: String)] = []
}
