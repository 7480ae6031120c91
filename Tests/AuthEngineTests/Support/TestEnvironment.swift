import AuthEngine
import AuthStore

/// A real store on a private in-memory SQLite database (same code as production, no server).
func makeStore() throws -> SQLiteStore { try SQLiteStore(path: ":memory:") }
