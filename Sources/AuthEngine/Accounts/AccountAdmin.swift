import Locking
/// Fields of an admin `accounts` create or `accounts:update` (firebase-wire.md §2.7, §2.9).
/// nil = not sent.
public struct AccountChanges: Sendable {
    public var localID: String?
    public var email: String?
    public var phoneNumber: String?
    public var displayName: String?
    public var photoURL: String?
    public var password: String?
    public var emailVerified: Bool?
    public var disabled: Bool?
    /// Seconds; tokens issued before it are revoked.
    public var validSince: Int64?
    public var customAttributes: String?
    /// `DISPLAY_NAME`, `PHOTO_URL`, `EMAIL`, `PASSWORD`.
    public var deleteAttributes: [String] = []
    /// Provider ids, e.g. `phone`, `password`.
    public var deleteProviders: [String] = []
    /// The account's second factors as a whole (`mfa.enrollments`; empty clears them).
    public var mfaEnrollments: [EnrollmentInput]?
    public init() {}

    /// One factor as an admin sets it: the id and time are kept when given.
    public struct EnrollmentInput: Sendable {
        public var enrollmentID: String?
        public var phoneNumber: String?
        public var displayName: String?
        public var enrolledAt: Millis?
        /// A `totpInfo` entry: an existing TOTP factor kept by its id (none can be made here: its
        /// secret is the user's, from their own enrolment).
        public var keepsTOTP = false
        public init(enrollmentID: String?, phoneNumber: String?, displayName: String?, enrolledAt: Millis?) {
            self.enrollmentID = enrollmentID; self.phoneNumber = phoneNumber; self.displayName = displayName; self.enrolledAt = enrolledAt
        }
    }
}

/// Account management for the Admin SDKs and the `gatehouse users` command: create, update,
/// revoke, delete, list. Every flow is one transaction; changes that affect signed-in sessions
/// evict them from `cache`.
public struct AccountAdmin {
    public static let maxBatch = 1000
    public static let defaultPageSize = 20

    public let store: any AccountStore & SessionStore & AuditStore & MFAStore
    public let clock: any Clock
    public let random: any RandomSource
    public let cache: SessionCache?
    /// Who the audit log names for these changes: `admin` (the Admin API), `cli`, or nil when
    /// users act on their own account.
    public let actor: String?

    public init(store: any AccountStore & SessionStore & AuditStore & MFAStore, clock: any Clock, random: any RandomSource, cache: SessionCache? = nil,
                actor: String? = "admin") {
        self.store = store; self.clock = clock; self.random = random; self.cache = cache; self.actor = actor
    }

    /// Admin create (`POST …/accounts`). `DUPLICATE_LOCAL_ID`, `INVALID_PHONE_NUMBER : …`,
    /// `PHONE_NUMBER_EXISTS`, `INVALID_EMAIL`, `EMAIL_EXISTS`; a password →
    /// `OPERATION_NOT_ALLOWED` (Gatehouse has no password sign-in).
    public func create(project: String, _ c: AccountChanges) throws -> Account {
        let now = clock.now()
        return try store.transaction {
            if let id = c.localID {
                try AccountRules.checkLocalID(id)
                if try store.account(project: project, localID: id) != nil { throw AuthError(.duplicateLocalID) }
            }
            if c.password != nil { throw AccountRules.noPasswords }
            let id = try c.localID ?? newLocalID(project: project)
            var a = Account(projectID: project, localID: id, createdAt: now)
            if let p = c.phoneNumber, !p.isEmpty {
                a.phoneNumber = try AccountRules.phone(p)
                if try store.account(project: project, phoneNumber: a.phoneNumber!) != nil { throw AuthError(.phoneNumberExists) }
            }
            if let e = c.email, !e.isEmpty {
                a.email = try AccountRules.email(e)
                if try store.account(project: project, email: a.email!) != nil { throw AuthError(.emailExists) }
            }
            a.displayName = try AccountRules.text(c.displayName, "displayName")
            a.photoURL = try AccountRules.text(c.photoURL, "photoUrl")
            a.emailVerified = a.email != nil && (c.emailVerified ?? false)
            a.disabled = c.disabled ?? false
            AccountRules.normaliseProviders(&a)
            try store.insertAccount(a)
            try store.audit(AuditEvent(projectID: project, event: .adminCreate, localID: id, actor: actor), at: now)
            return a
        }
    }

    /// Admin update by `localId` (`MISSING_LOCAL_ID`, `USER_NOT_FOUND`, plus the field errors of
    /// `create`, `CLAIMS_TOO_LARGE`, `INVALID_CLAIMS`, `FORBIDDEN_CLAIM : <name>`).
    public func update(project: String, _ c: AccountChanges) throws -> Account {
        guard let id = c.localID, !id.isEmpty else { throw AuthError(.missingLocalID) }
        let now = clock.now()
        let updated: Account = try store.transaction {
            guard var a = try store.account(project: project, localID: id) else { throw AuthError(.userNotFound) }
            if c.password != nil { throw AccountRules.noPasswords }
            let claims = try c.customAttributes.map(CustomClaims.validate)
            if let e = c.email, !e.isEmpty {
                let email = try AccountRules.email(e)
                if email != a.email {
                    if try store.account(project: project, email: email) != nil { throw AuthError(.emailExists) }
                    a.email = email
                    a.emailVerified = false
                }
            }
            if let p = c.phoneNumber, !p.isEmpty {
                let phone = try AccountRules.phone(p)
                if phone != a.phoneNumber {
                    if try store.account(project: project, phoneNumber: phone) != nil { throw AuthError(.phoneNumberExists) }
                    a.phoneNumber = phone
                }
            }
            if let n = c.displayName { a.displayName = try AccountRules.text(n, "displayName") }
            if let u = c.photoURL { a.photoURL = try AccountRules.text(u, "photoUrl") }
            if let v = c.emailVerified { a.emailVerified = a.email != nil && v }
            if let d = c.disabled { a.disabled = d }
            if let claims { a.customAttributes = claims }
            try AccountRules.apply(deleteAttributes: c.deleteAttributes, deleteProviders: c.deleteProviders, to: &a)
            if let list = c.mfaEnrollments {
                let before = a.mfaEnrollments
                a.mfaEnrollments = try enrollments(list, now: now, existing: before)
                // A factor removed or replaced: whatever signed in with it is revoked, as a withdrawal does.
                let same = { (x: MFAEnrollment, y: MFAEnrollment) in
                    x.enrollmentID == y.enrollmentID && x.phoneNumber == y.phoneNumber && x.totp?.sealedSecret == y.totp?.sealedSecret
                }
                if before.contains(where: { b in !a.mfaEnrollments.contains { same($0, b) } }) {
                    let ended = try Revocation.revokeAll(&a, store: store, now: now)
                    try store.audit(AuditEvent(projectID: project, event: .revoke, localID: id,
                                               detail: "second factor removed: refreshTokens=\(ended.tokens) sessions=\(ended.sessions)",
                                               actor: actor), at: now)
                }
            }
            if let v = c.validSince { try revokeLocked(&a, validSince: v, now: now) }
            try store.updateAccount(a)
            try store.audit(AuditEvent(projectID: project, event: .adminUpdate, localID: id, actor: actor), at: now)
            return a
        }
        cache?.evict(project: project, localID: id)
        return updated
    }

    /// An admin's list of factors: valid E.164 numbers, each once, at most `MFAEnrollment.maxPerAccount`,
    /// ids as given (valid and distinct) or new.
    func enrollments(_ list: [AccountChanges.EnrollmentInput], now: Millis, existing: [MFAEnrollment] = []) throws -> [MFAEnrollment] {
        guard list.count <= MFAEnrollment.maxPerAccount else { throw AuthError(.secondFactorLimitExceeded) }
        var out: [MFAEnrollment] = []
        for e in list {
            if e.keepsTOTP {
                guard var kept = existing.first(where: { $0.totp != nil && $0.enrollmentID == e.enrollmentID }),
                      !out.contains(where: { $0.enrollmentID == kept.enrollmentID }) else {
                    throw AuthError(.invalidArgument, "mfa.enrollments: a TOTP factor can only be kept, by the mfaEnrollmentId it has")
                }
                if let name = e.displayName { kept.displayName = try AccountRules.text(name, "displayName") }
                out.append(kept)
                continue
            }
            guard let raw = e.phoneNumber, !raw.isEmpty else { throw AuthError(.invalidArgument, "mfa.enrollments: phoneInfo is required") }
            let phone = try AccountRules.phone(raw)
            if out.contains(where: { $0.phoneNumber == phone }) {
                throw AuthError(.secondFactorExists, "Phone number already enrolled as second factor for this account.")
            }
            var id = e.enrollmentID ?? ""
            if id.isEmpty {
                repeat { id = random.userID() } while out.contains(where: { $0.enrollmentID == id })
            } else {
                try AccountRules.checkLocalID(id)
                if out.contains(where: { $0.enrollmentID == id }) { throw AuthError(.invalidArgument, "mfa.enrollments: duplicate mfaEnrollmentId") }
            }
            let name = try AccountRules.text(e.displayName, "displayName")
            out.append(MFAEnrollment(enrollmentID: id, phoneNumber: phone, displayName: name, enrolledAt: e.enrolledAt ?? now))
        }
        return out
    }

    /// Revokes every session and refresh token of a user issued before `validSince` (default now).
    @discardableResult
    public func revoke(project: String, localID: String, validSince: Int64? = nil) throws -> Account {
        let now = clock.now()
        let a: Account = try store.transaction {
            guard var a = try store.account(project: project, localID: localID) else { throw AuthError(.userNotFound) }
            try revokeLocked(&a, validSince: validSince ?? now / 1000, now: now)
            try store.updateAccount(a)
            return a
        }
        cache?.evict(project: project, localID: localID)
        return a
    }

    /// Sets `validSince` and marks stored refresh tokens and sessions revoked. A `validSince` of
    /// the current second (or later) revokes every credential that exists when this transaction
    /// commits, also one a concurrent refresh wrote a moment ago (`Revocation`); an earlier one
    /// those issued before it.
    func revokeLocked(_ a: inout Account, validSince: Int64, now: Millis) throws {
        guard validSince >= 0 else { throw AuthError(.invalidArgument, "validSince must be a non-negative number of seconds") }
        let tokens: Int, sessions: Int
        if validSince >= now / 1000 {
            (tokens, sessions) = try Revocation.revokeAll(&a, store: store, now: now)
            a.validSince = validSince
        } else {
            a.validSince = validSince
            tokens = try store.revokeRefreshTokens(project: a.projectID, localID: a.localID, createdBefore: validSince * 1000, at: now)
            sessions = try store.revokeSessions(project: a.projectID, localID: a.localID, createdBefore: validSince * 1000, at: now)
        }
        try store.audit(AuditEvent(projectID: a.projectID, event: .revoke, localID: a.localID,
                                   detail: "validSince=\(validSince) refreshTokens=\(tokens) sessions=\(sessions)", actor: actor), at: now)
    }

    /// Deletes a user with its tokens and sessions (`USER_NOT_FOUND` if absent).
    public func delete(project: String, localID: String) throws {
        let now = clock.now()
        try store.transaction {
            guard try store.deleteAccount(project: project, localID: localID) else { throw AuthError(.userNotFound) }
            try store.deleteTokensAndSessions(project: project, localID: localID)
            try store.audit(AuditEvent(projectID: project, event: .adminDelete, localID: localID, actor: actor), at: now)
        }
        cache?.evict(project: project, localID: localID)
    }

    /// One refusal of `batchDelete`.
    public struct BatchDeleteError: Sendable, Equatable {
        public let index: Int
        public let localID: String
        public let message: String
    }

    /// `accounts:batchDelete`: 1…1000 ids (`LOCAL_ID_LIST_EXCEEDS_LIMIT`); unknown ids are
    /// skipped; enabled accounts are refused unless `force`.
    public func batchDelete(project: String, localIDs: [String], force: Bool) throws -> [BatchDeleteError] {
        guard (1...AccountAdmin.maxBatch).contains(localIDs.count) else { throw AuthError(.localIDListExceedsLimit) }
        let now = clock.now()
        var deleted: [String] = []
        let errors: [BatchDeleteError] = try store.transaction {
            var errors: [BatchDeleteError] = []
            for (i, id) in localIDs.enumerated() {
                guard let a = try store.account(project: project, localID: id) else { continue }
                if !a.disabled && !force {
                    errors.append(BatchDeleteError(index: i, localID: id, message: "NOT_DISABLED : Disable the account before batch deletion."))
                    continue
                }
                _ = try store.deleteAccount(project: project, localID: id)
                try store.deleteTokensAndSessions(project: project, localID: id)
                deleted.append(id)
            }
            try store.audit(AuditEvent(projectID: project, event: .adminBatchDelete, detail: "deleted=\(deleted.count)", actor: actor), at: now)
            return errors
        }
        for id in deleted { cache?.evict(project: project, localID: id) }
        return errors
    }

    /// One page of users ordered by `localId`; the page token is opaque to callers.
    public func list(project: String, maxResults: Int?, pageToken: String?) throws -> (users: [Account], nextPageToken: String?) {
        let size = min(max(maxResults ?? AccountAdmin.defaultPageSize, 1), AccountAdmin.maxBatch)
        var after: String?
        if let t = pageToken, !t.isEmpty {
            guard let id = AccountRules.decodePageToken(t) else { throw AuthError(.invalidArgument, "INVALID_PAGE_SELECTION") }
            after = id
        }
        var users = try store.listAccounts(project: project, after: after, limit: size + 1)
        var next: String?
        if users.count > size {
            users.removeLast(users.count - size)
            next = users.last.map { AccountRules.encodePageToken($0.localID) }
        }
        return (users, next)
    }

    /// Deletes every account of the project (emulator helper, dev mode only).
    @discardableResult
    public func deleteAll(project: String) throws -> Int {
        let n = try store.deleteAllAccounts(project: project)
        cache?.removeAll()
        return n
    }

    func newLocalID(project: String) throws -> String {
        while true {
            let id = random.userID()
            if try store.account(project: project, localID: id) == nil { return id }
        }
    }
}
