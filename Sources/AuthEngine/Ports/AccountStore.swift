/// Account persistence. Email and phone are unique per project.
public protocol AccountStore: Transactional {
    func account(project: String, localID: String) throws -> Account?
    func account(project: String, email: String) throws -> Account?
    func account(project: String, phoneNumber: String) throws -> Account?
    /// Inserts; throws `AuthError(.duplicateLocalID/.emailExists/.phoneNumberExists)` on conflict.
    func insertAccount(_ account: Account) throws
    /// Replaces the stored account (same project + localID); same uniqueness errors.
    func updateAccount(_ account: Account) throws
    func deleteAccount(project: String, localID: String) throws -> Bool
    /// Accounts ordered by localID after `after`, at most `limit`.
    func listAccounts(project: String, after: String?, limit: Int) throws -> [Account]
    func countAccounts(project: String) throws -> Int
}
