/// One account of an import (`accounts:batchCreate`, `gatehouse users import`), its uid kept.
/// Password hashes are not imported: Gatehouse has no password sign-in (an imported address
/// signs in by email link).
public struct ImportedAccount: Sendable {
    public var localID: String?
    public var email: String?
    public var emailVerified = false
    public var phoneNumber: String?
    public var displayName: String?
    public var photoURL: String?
    public var disabled = false
    public var customAttributes: String?
    public var createdAt: Millis?
    public var lastLoginAt: Millis?
    public var mfaEnrollments: [AccountChanges.EnrollmentInput] = []
    /// Federated providers (`google.com` …), kept as they are so that the account's data survives.
    public var federatedProviders: [ProviderInfo] = []
    public init() {}
}

extension AccountAdmin {
    /// A row that was not imported and why, in the words of the Identity Toolkit's `error[]`.
    public struct ImportFailure: Sendable, Equatable {
        public let index: Int
        public let message: String
        public init(index: Int, message: String) { self.index = index; self.message = message }
    }

    /// Imports up to `maxBatch` accounts in one transaction: a row that breaks a rule (or whose
    /// uid exists, unless `allowOverwrite`) is reported and skipped, the others are written
    /// together. A store failure writes none. Duplicate uids in one request refuse it whole
    /// (`DUPLICATE_LOCAL_ID : <uid>`), as the Identity Toolkit does.
    public func importAccounts(project: String, _ rows: [ImportedAccount], allowOverwrite: Bool) throws -> [ImportFailure] {
        guard !rows.isEmpty else { throw AuthError(.missingUserAccount) }
        guard rows.count <= AccountAdmin.maxBatch else {
            throw AuthError(.maximumUserCountExceeded, "At most \(AccountAdmin.maxBatch) accounts per request")
        }
        if !allowOverwrite {
            var seen = Set<String>()
            for r in rows {
                let id = r.localID ?? ""
                if !seen.insert(id).inserted { throw AuthError(.duplicateLocalID, id) }
            }
        }
        let now = clock.now()
        var overwritten: [String] = []
        let failures: [ImportFailure] = try store.transaction {
            var failures: [ImportFailure] = []
            var imported = 0
            for (index, row) in rows.enumerated() {
                do {
                    var (account, existed) = try importable(row, project: project, allowOverwrite: allowOverwrite, now: now)
                    if existed {
                        // An overwritten account's earlier credentials end with it: its factors,
                        // email and phone may all be new.
                        try Revocation.revokeAll(&account, store: store, now: now)
                        try store.updateAccount(account)
                        overwritten.append(account.localID)
                    } else {
                        try store.insertAccount(account)
                    }
                    imported += 1
                } catch let e as AuthError {
                    failures.append(ImportFailure(index: index, message: AccountAdmin.importMessage(e)))
                }
            }
            try store.audit(AuditEvent(projectID: project, event: .adminImport, detail: "imported=\(imported) failed=\(failures.count)",
                                       actor: actor), at: now)
            return failures
        }
        for id in overwritten { cache?.evict(project: project, localID: id) }
        return failures
    }

    /// The account a row becomes, checked against the store (inside the import's transaction).
    func importable(_ row: ImportedAccount, project: String, allowOverwrite: Bool, now: Millis) throws -> (Account, existed: Bool) {
        guard let id = row.localID, !id.isEmpty else { throw AuthError(.invalidArgument, "localId is missing") }
        try AccountRules.checkLocalID(id)
        let existing = try store.account(project: project, localID: id)
        if existing != nil, !allowOverwrite { throw AuthError(.invalidArgument, "localId belongs to an existing account - can not overwrite.") }
        var a = Account(projectID: project, localID: id, createdAt: row.createdAt ?? now)
        if let p = row.phoneNumber, !p.isEmpty {
            guard let phone = try? AccountRules.phone(p) else { throw AuthError(.invalidArgument, "phone number format is invalid") }
            if let owner = try store.account(project: project, phoneNumber: phone), owner.localID != id {
                throw AuthError(.invalidArgument, "phone number exists in other account in database")
            }
            a.phoneNumber = phone
        }
        if let e = row.email, !e.isEmpty {
            guard let email = try? AccountRules.email(e) else { throw AuthError(.invalidArgument, "email is invalid") }
            if let owner = try store.account(project: project, email: email), owner.localID != id {
                throw AuthError(.invalidArgument, "email exists in other account in database")
            }
            a.email = email
            a.emailVerified = row.emailVerified
        }
        a.displayName = try AccountRules.text(row.displayName, "displayName")
        a.photoURL = try AccountRules.text(row.photoURL, "photoUrl")
        a.disabled = row.disabled
        a.customAttributes = try row.customAttributes.flatMap(CustomClaims.validate)
        a.lastLoginAt = row.lastLoginAt
        if let existing { a.validSince = existing.validSince }
        if !row.mfaEnrollments.isEmpty {
            guard a.email != nil else { throw AuthError(.invalidArgument, "Second factor account requires email to be presented.") }
            guard a.emailVerified else { throw AuthError(.invalidArgument, "Second factor account requires email to be verified.") }
            a.mfaEnrollments = try enrollments(row.mfaEnrollments, now: now)
        }
        AccountRules.normaliseProviders(&a)
        for p in row.federatedProviders where p.providerID != "phone" && p.providerID != "password" {
            guard !p.providerID.isEmpty, !p.rawID.isEmpty else { throw AuthError(.invalidArgument, "federatedId or (providerId & rawId) is required") }
            a.upsertProvider(p)
        }
        return (a, existing != nil)
    }

    /// The Identity Toolkit's friendlier wording for claim errors; otherwise the error's own.
    static func importMessage(_ e: AuthError) -> String {
        switch e.code {
        case .invalidClaims: return "Invalid custom claims provided."
        case .claimsTooLarge: return "Custom claims provided are too large."
        case .forbiddenClaim: return "Custom claims provided include a reserved claim."
        case .invalidArgument: return e.detail ?? e.message
        default: return e.message
        }
    }
}
