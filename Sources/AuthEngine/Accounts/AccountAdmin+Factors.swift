extension AccountAdmin {
    /// Removes one second factor of a user for an administrator (the operator console): no
    /// recent sign-in of the user is asked for, as the admin `accounts:update` asks none. What a
    /// user's own withdrawal does besides happens here too: every credential issued before is
    /// revoked (whatever signed in with the factor is refused at once, `validSince` included),
    /// and the withdrawal is audited (`mfa.withdraw`, with `actor`). `USER_NOT_FOUND`,
    /// `MFA_ENROLLMENT_NOT_FOUND`.
    @discardableResult
    public func removeFactor(project: String, localID: String, enrollmentID: String, remoteAddress: String? = nil) throws -> Account {
        let now = clock.now()
        let updated: Account = try store.transaction {
            guard var a = try store.account(project: project, localID: localID) else { throw AuthError(.userNotFound) }
            guard a.mfaEnrollments.contains(where: { $0.enrollmentID == enrollmentID }) else { throw AuthError(.mfaEnrollmentNotFound) }
            a.mfaEnrollments.removeAll { $0.enrollmentID == enrollmentID }
            let ended = try Revocation.revokeAll(&a, store: store, now: now)
            try store.updateAccount(a)
            try store.audit(AuditEvent(projectID: project, event: .mfaWithdraw, localID: localID, remoteAddress: remoteAddress,
                                       detail: "\(enrollmentID): refreshTokens=\(ended.tokens) sessions=\(ended.sessions)", actor: actor), at: now)
            return a
        }
        cache?.evict(project: project, localID: localID)
        return updated
    }
}
