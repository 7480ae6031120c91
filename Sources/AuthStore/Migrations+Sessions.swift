extension Migrations {
    /// Migration 5 (reserved for this feature); add `(5, """ ... """)` here.
    static let sessions: [(version: Int, sql: String)] = []
}
