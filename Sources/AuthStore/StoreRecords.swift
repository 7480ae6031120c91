import AuthEngine
import JSONValue

/// A row of either store's results, read by column index (SQLite's `Row`, PostgreSQL's `PGRow`).
public protocol StoreRow {
    func int(_ i: Int32) -> Int64
    func intOrNil(_ i: Int32) -> Int64?
    func bool(_ i: Int32) -> Bool
    func text(_ i: Int32) -> String
    func textOrNil(_ i: Int32) -> String?
    func blob(_ i: Int32) -> [UInt8]
}

extension Row: StoreRow {}
extension PGRow: StoreRow {}

/// The tables' columns as both stores select them, and the records read from and written to
/// them: one decoder per record, whichever database the row came from.
enum StoreRecords {
    static let emailLinkColumns = """
        code_hash, project_id, request_type, email, local_id, continue_url, can_handle_in_app, ios_bundle_id, android_package,
        lang, browser_binding, created_at, expires_at, consumed_at
        """

    static func emailLink<R: StoreRow>(_ r: R) -> EmailLinkRecord {
        let binding = r.blob(10)
        return EmailLinkRecord(codeHash: r.blob(0), projectID: r.text(1), requestType: OobRequestType(rawValue: r.text(2)) ?? .unspecified,
                               email: r.text(3), localID: r.textOrNil(4), continueURL: r.textOrNil(5), canHandleCodeInApp: r.bool(6),
                               iosBundleID: r.textOrNil(7), androidPackage: r.textOrNil(8), lang: r.text(9),
                               browserBinding: binding.isEmpty ? nil : binding, createdAt: r.int(11), expiresAt: r.int(12),
                               consumedAt: r.intOrNil(13))
    }

    static let outboxColumns = "id, project_id, channel, recipient, subject, body, html_body, metadata, status, attempts, next_attempt_at, last_error, created_at, sent_at"

    static func outbox<R: StoreRow>(_ r: R) -> OutboxMessage {
        OutboxMessage(id: r.int(0), projectID: r.text(1), channel: OutboxMessage.Channel(rawValue: r.text(2)) ?? .sms, recipient: r.text(3),
                      subject: r.textOrNil(4), body: r.text(5), htmlBody: r.textOrNil(6), metadata: r.text(7),
                      status: OutboxMessage.Status(rawValue: r.text(8)) ?? .pending, attempts: Int(r.int(9)), nextAttemptAt: r.int(10),
                      lastError: r.textOrNil(11), createdAt: r.int(12), sentAt: r.intOrNil(13))
    }

    static let mfaPendingColumns = "credential_hash, project_id, local_id, first_factor, auth_time, created_at, expires_at, consumed_at"

    static let phoneColumns = """
        session_hash, project_id, phone_number, app_id, code_hash, nonce, created_at, expires_at, attempts, consumed_at,
        superseded_at, is_test, client_hash, purpose
        """

    static func phoneVerification<R: StoreRow>(_ r: R) -> PhoneVerificationRecord {
        PhoneVerificationRecord(sessionHash: r.blob(0), projectID: r.text(1), phoneNumber: r.text(2), appID: r.text(3),
                                codeHash: r.blob(4), nonce: r.blob(5), createdAt: r.int(6), expiresAt: r.int(7),
                                attempts: Int(r.int(8)), consumedAt: r.intOrNil(9), supersededAt: r.intOrNil(10), isTest: r.bool(11),
                                clientHash: r.blob(12), purpose: r.text(13))
    }

    static let holdColumns = "project_id, kind, key, held_at, expires_at, released_at, recent_count, baseline_count"

    static func hold<R: StoreRow>(_ r: R) -> SMSHold {
        SMSHold(projectID: r.text(0), kind: SMSHold.Kind(rawValue: r.text(1)) ?? .prefix, key: r.text(2), heldAt: r.int(3),
                expiresAt: r.intOrNil(4), releasedAt: r.intOrNil(5), recentCount: Int(r.int(6)), baselineCount: Int(r.int(7)))
    }

    static let iosReceiptColumns = "receipt_hash, project_id, bundle_id, device_token_hash, sandbox, secret_hash, created_at, expires_at, uses"

    static let refreshColumns =
        "token_hash, family_id, project_id, local_id, provider, auth_time, created_at, rotated_at, revoked_at, second_factor, developer_claims"

    static func refresh<R: StoreRow>(_ r: R) -> RefreshTokenRecord {
        RefreshTokenRecord(tokenHash: r.blob(0), familyID: r.text(1), projectID: r.text(2), localID: r.text(3), provider: r.text(4),
                           authTime: r.int(5), createdAt: r.int(6), rotatedAt: r.intOrNil(7), revokedAt: r.intOrNil(8),
                           secondFactor: r.textOrNil(9), developerClaims: r.textOrNil(10))
    }

    static let auditColumns = "id, at, project_id, event, local_id, remote_address, detail, actor, outcome"

    static func audit<R: StoreRow>(_ r: R) -> AuditRecord {
        AuditRecord(id: r.int(0), at: r.int(1),
                    event: AuditEvent(projectID: r.text(2), event: r.text(3), localID: r.textOrNil(4), remoteAddress: r.textOrNil(5),
                                      detail: r.textOrNil(6), actor: r.textOrNil(7), outcome: r.text(8)))
    }

    static let sessionColumns = "sid_hash, project_id, local_id, provider, created_at, last_seen_at, expires_at, idle_timeout_seconds, revoked_at"

    static func session<R: StoreRow>(_ r: R) -> SessionRecord {
        SessionRecord(sidHash: r.blob(0), projectID: r.text(1), localID: r.text(2), provider: r.text(3), createdAt: r.int(4),
                      lastSeenAt: r.int(5), expiresAt: r.int(6), idleTimeoutSeconds: r.int(7), revokedAt: r.intOrNil(8))
    }

    static let accountColumns = """
        project_id, local_id, email, email_verified, phone_number, display_name, photo_url, password_hash, disabled,
        email_link_signin, anonymous, custom_attributes, created_at, last_login_at, last_refresh_at, valid_since, providers, mfa
        """

    static func account<R: StoreRow>(_ r: R) -> Account {
        var a = Account(projectID: r.text(0), localID: r.text(1), createdAt: r.int(12))
        a.email = r.textOrNil(2)
        a.emailVerified = r.bool(3)
        a.phoneNumber = r.textOrNil(4)
        a.displayName = r.textOrNil(5)
        a.photoURL = r.textOrNil(6)
        a.passwordHash = r.textOrNil(7)
        a.disabled = r.bool(8)
        a.emailLinkSignin = r.bool(9)
        a.anonymous = r.bool(10)
        a.customAttributes = r.textOrNil(11)
        a.lastLoginAt = r.intOrNil(13)
        a.lastRefreshAt = r.intOrNil(14)
        a.validSince = r.int(15)
        a.providers = decodeProviders(r.text(16))
        a.mfaEnrollments = decodeMFA(r.text(17))
        return a
    }

    static func encodeProviders(_ ps: [ProviderInfo]) -> String {
        JSON.array(ps.map { p in
            .obj(("providerId", p.providerID), ("rawId", p.rawID), ("email", p.email), ("phoneNumber", p.phoneNumber),
                 ("displayName", p.displayName), ("photoUrl", p.photoURL))
        }).serialized()
    }

    static func decodeProviders(_ text: String) -> [ProviderInfo] {
        guard let arr = (try? JSONParser().parse(text))?.arrayValue else { return [] }
        return arr.compactMap { p in
            guard let id = p["providerId"]?.stringValue, let raw = p["rawId"]?.stringValue else { return nil }
            return ProviderInfo(providerID: id, rawID: raw, email: p["email"]?.stringValue, phoneNumber: p["phoneNumber"]?.stringValue,
                                displayName: p["displayName"]?.stringValue, photoURL: p["photoUrl"]?.stringValue)
        }
    }

    /// A phone factor keeps `phoneInfo`; a TOTP factor `totp: {sealed, lastStep}` (the secret only
    /// ever sealed, see `TOTPFactor`).
    static func encodeMFA(_ es: [MFAEnrollment]) -> String {
        JSON.array(es.map { e in
            .obj(("mfaEnrollmentId", e.enrollmentID), ("phoneInfo", e.phoneNumber),
                 ("totp", e.totp.map { JSON.obj(("sealed", $0.sealedSecret), ("lastStep", $0.lastStep)) }),
                 ("displayName", e.displayName), ("enrolledAt", e.enrolledAt))
        }).serialized()
    }

    static func decodeMFA(_ text: String) -> [MFAEnrollment] {
        guard text != "[]", let arr = (try? JSONParser().parse(text))?.arrayValue else { return [] }
        return arr.compactMap { e in
            guard let id = e["mfaEnrollmentId"]?.stringValue, let at = e["enrolledAt"]?.int64Value else { return nil }
            let name = e["displayName"]?.stringValue
            if let phone = e["phoneInfo"]?.stringValue {
                return MFAEnrollment(enrollmentID: id, phoneNumber: phone, displayName: name, enrolledAt: at)
            }
            guard let t = e["totp"], let sealed = t["sealed"]?.stringValue, let step = t["lastStep"]?.int64Value else { return nil }
            return MFAEnrollment(enrollmentID: id, totp: TOTPFactor(sealedSecret: sealed, lastStep: step), displayName: name, enrolledAt: at)
        }
    }

    static func mfaPending<R: StoreRow>(_ r: R) -> MFAPendingRecord {
        MFAPendingRecord(credentialHash: r.blob(0), projectID: r.text(1), localID: r.text(2), firstFactor: r.text(3),
                         authTime: r.int(4), createdAt: r.int(5), expiresAt: r.int(6), consumedAt: r.intOrNil(7))
    }

    static func iosReceipt<R: StoreRow>(_ r: R) -> IOSReceiptRecord {
        IOSReceiptRecord(receiptHash: r.blob(0), projectID: r.text(1), bundleID: r.text(2), deviceTokenHash: r.blob(3),
                         sandbox: r.int(4) != 0, secretHash: r.blob(5), createdAt: r.int(6), expiresAt: r.int(7),
                         uses: Int(clamping: r.int(8)))
    }

    static func accountValues(_ a: Account) -> [SQLBindable] {
        [a.projectID, a.localID, a.email, a.emailVerified, a.phoneNumber, a.displayName, a.photoURL, a.passwordHash, a.disabled,
         a.emailLinkSignin, a.anonymous, a.customAttributes, a.createdAt, a.lastLoginAt, a.lastRefreshAt, a.validSince,
         StoreRecords.encodeProviders(a.providers), StoreRecords.encodeMFA(a.mfaEnrollments)]
    }
}
