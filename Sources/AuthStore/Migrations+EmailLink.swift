extension Migrations {
    /// Migration 4 (reserved for this feature); add `(4, """ ... """)` here.
    static let emailLink: [(version: Int, sql: String)] = []
}
