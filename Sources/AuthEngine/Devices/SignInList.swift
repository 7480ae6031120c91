import AuthCrypto

/// Where an account is signed in (the account page's list, the console's user page) and the
/// sign-outs offered there. Each revokes exactly what it names:
/// - one browser session (its server-side session: the cookie is refused at once), or one app
///   (its refresh-token family: no more refreshes; its last ID token runs out within the hour);
/// - every other: all sessions but the caller's and every refresh family (ID tokens as above);
/// - everywhere: `Revocation.revokeAll` (`validSince` too, so every ID token and cookie issued
///   before now is refused, the caller's own included).
/// `/__/auth/verify` sees each within its session cache's lifetime (docs/sessions-and-nginx.md).
public struct SignInList {
    public struct Entry: Sendable, Equatable {
        public enum Kind: String, Sendable { case browser, app }
        public let kind: Kind
        /// What a form posts back: `s.<hex of the session hash>` or `a.<family id>`.
        public let id: String
        public let provider: String
        /// The enrollment id of the second factor the sign-in passed.
        public let secondFactor: String?
        public let startedAt: Millis
        public let lastUsedAt: Millis
        public let device: SignInDevice
        /// The request's own session.
        public let isCurrent: Bool
    }

    public let store: any AccountStore & SessionStore & SignInListStore & MFAStore & AuditStore
    public let clock: any Clock

    public init(store: any AccountStore & SessionStore & SignInListStore & MFAStore & AuditStore, clock: any Clock) {
        self.store = store; self.clock = clock
    }

    /// Live sign-ins, newest use first: sessions neither revoked nor expired nor idle, families
    /// with a token that is neither; both issued since the account's `validSince` and bound to
    /// no second factor it has lost (what the checks would refuse anyway is not listed).
    public func list(account: Account, currentSession: [UInt8]?) throws -> [Entry] {
        let now = clock.now()
        var out: [Entry] = []
        for s in try store.activeSessions(project: account.projectID, localID: account.localID, now: now) {
            if s.idleTimeoutSeconds > 0, now - s.lastSeenAt > s.idleTimeoutSeconds * 1000 { continue }
            guard s.createdAt / 1000 >= account.validSince, stillBound(s.secondFactor, account) else { continue }
            out.append(Entry(kind: .browser, id: "s." + Hex.encode(s.sidHash), provider: s.provider, secondFactor: s.secondFactor,
                             startedAt: s.createdAt, lastUsedAt: s.lastSeenAt,
                             device: SignInDevice(storedUserAgent: s.userAgent, network: s.network), isCurrent: s.sidHash == currentSession))
        }
        for t in try store.liveRefreshTokens(project: account.projectID, localID: account.localID) {
            guard t.createdAt / 1000 >= account.validSince, stillBound(t.secondFactor, account) else { continue }
            out.append(Entry(kind: .app, id: "a." + t.familyID, provider: t.provider, secondFactor: t.secondFactor,
                             startedAt: t.authTime * 1000, lastUsedAt: t.createdAt,
                             device: SignInDevice(storedUserAgent: t.userAgent, network: t.network), isCurrent: false))
        }
        return out.sorted { ($0.isCurrent ? 1 : 0, $0.lastUsedAt) > ($1.isCurrent ? 1 : 0, $1.lastUsedAt) }
    }

    func stillBound(_ factor: String?, _ account: Account) -> Bool {
        SensitiveChange.factorStillEnrolled(factor.map { SecondFactor(identifier: $0) }, in: account)
    }

    /// Signs out the one sign-in `id` names (an id of another user's names nothing here);
    /// false when nothing live had that id. `actor`: nil for the user, else who did it.
    @discardableResult
    public func signOut(account: Account, id: String, remoteAddress: String?, actor: String? = nil) throws -> Bool {
        let now = clock.now()
        guard id.utf8.count <= 200 else { return false }
        return try store.transaction {
            // The user's row first, as a refresh takes it: a refresh of this family either
            // commits before (and its successor is revoked here) or waits and finds it revoked.
            // Without it, PostgreSQL's READ COMMITTED would let a successor inserted meanwhile
            // escape this UPDATE.
            _ = try store.account(project: account.projectID, localID: account.localID)
            let revoked: Bool
            if id.hasPrefix("s."), let hash = Hex.decode(String(id.dropFirst(2))), hash.count == 32 {
                revoked = try store.revokeUserSession(project: account.projectID, localID: account.localID, sidHash: hash, at: now)
            } else if id.hasPrefix("a."), id.count > 2 {
                revoked = try store.revokeUserRefreshFamily(project: account.projectID, localID: account.localID,
                                                            familyID: String(id.dropFirst(2)), at: now) > 0
            } else {
                return false
            }
            if revoked {
                try store.audit(AuditEvent(projectID: account.projectID, event: .sessionRevoke, localID: account.localID,
                                           remoteAddress: remoteAddress, detail: id.hasPrefix("s.") ? "browser" : "app", actor: actor), at: now)
            }
            return revoked
        }
    }

    /// Every session but `currentSession`, and every refresh family; how many were live.
    @discardableResult
    public func signOutOthers(account: Account, currentSession: [UInt8]?, remoteAddress: String?, actor: String? = nil) throws -> Int {
        let now = clock.now()
        return try store.transaction {
            _ = try store.account(project: account.projectID, localID: account.localID)     // as in `signOut`
            let n = try store.revokeSignIns(project: account.projectID, localID: account.localID, keepingSession: currentSession, at: now)
            try store.audit(AuditEvent(projectID: account.projectID, event: .sessionRevokeOthers, localID: account.localID,
                                       remoteAddress: remoteAddress, detail: "revoked=\(n)", actor: actor), at: now)
            return n
        }
    }

    /// Everything, ID tokens included (`validSince`); the account as written.
    @discardableResult
    public func signOutEverywhere(account: Account, remoteAddress: String?, actor: String? = nil, reason: String = "signed out everywhere") throws -> Account {
        try store.transaction {
            let now = clock.now()
            guard var fresh = try store.account(project: account.projectID, localID: account.localID) else { throw AuthError(.userNotFound) }
            let ended = try Revocation.revokeAll(&fresh, store: store, now: now)
            try store.updateAccount(fresh)
            try store.audit(AuditEvent(projectID: fresh.projectID, event: .revoke, localID: fresh.localID, remoteAddress: remoteAddress,
                                       detail: "\(reason): refreshTokens=\(ended.tokens) sessions=\(ended.sessions)", actor: actor), at: now)
            return fresh
        }
    }
}
