import AuthEngine
import AuthStore

/// A real store on a private in-memory SQLite database (same code as production, no server).
func makeStore() throws -> SQLStore { try SQLStore(path: ":memory:") }

extension AccountStore {
    /// Changes an account as a flow does: read and written back in one transaction (the stores
    /// refuse to write back an account the transaction did not read).
    func change(project: String, localID: String, _ edit: (inout Account) -> Void) throws {
        try transaction {
            guard var a = try account(project: project, localID: localID) else { throw AuthError(.userNotFound) }
            edit(&a)
            try updateAccount(a)
        }
    }
}
