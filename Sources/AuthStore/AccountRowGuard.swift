import AuthEngine

/// The accounts a transaction has read (or inserted), so that `updateAccount` writes only a row
/// the same transaction read: a flow that wrote back an account read outside its transaction, or
/// in an earlier one, would silently undo what a concurrent request (an admin's disable, a
/// revocation, a claim or factor change) committed in between. On PostgreSQL the read inside the
/// transaction also takes the row's lock (`FOR UPDATE`), so under READ COMMITTED a concurrent
/// writer waits for this transaction and then reads what it wrote; on SQLite `BEGIN IMMEDIATE`
/// already serialises every write transaction. Both stores refuse the update otherwise.
final class AccountRowGuard {
    private var read: Set<String> = []

    /// A transaction (or one attempt of it) begins.
    func begin() { read.removeAll(keepingCapacity: true) }

    func noteRead(_ account: Account?) {
        if let account { read.insert(AccountRowGuard.key(account.projectID, account.localID)) }
    }

    func noteRead(project: String, localID: String) { read.insert(AccountRowGuard.key(project, localID)) }

    /// Throws unless the row was read in this transaction (`inTransaction` false: no transaction at all).
    func checkUpdate(_ account: Account, inTransaction: Bool) throws {
        guard inTransaction, read.contains(AccountRowGuard.key(account.projectID, account.localID)) else {
            throw PortError("store", "an account was written back without being read in the same transaction")
        }
    }

    private static func key(_ project: String, _ localID: String) -> String { project + "\u{1}" + localID }
}
