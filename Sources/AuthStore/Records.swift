import AuthEngine

// Each record read from its table's row by column name (`Reading`), whichever database the row
// came from; a value a column does not allow is refused (`UnreadableColumn`).

extension AccountColumn {
    static func read<R: StoreRow>(_ row: R) throws -> Account {
        let r = Reading(row, AccountColumn.self)
        var a = Account(projectID: r.text(.project_id), localID: r.text(.local_id), createdAt: r.int(.created_at))
        a.email = r.textOrNil(.email)
        a.emailVerified = r.bool(.email_verified)
        a.phoneNumber = r.textOrNil(.phone_number)
        a.displayName = r.textOrNil(.display_name)
        a.photoURL = r.textOrNil(.photo_url)
        a.passwordHash = r.textOrNil(.password_hash)
        a.disabled = r.bool(.disabled)
        a.emailLinkSignin = r.bool(.email_link_signin)
        a.anonymous = r.bool(.anonymous)
        a.customAttributes = r.textOrNil(.custom_attributes)
        a.lastLoginAt = r.intOrNil(.last_login_at)
        a.lastRefreshAt = r.intOrNil(.last_refresh_at)
        a.validSince = r.int(.valid_since)
        a.providers = try AccountJSON.decodeProviders(r.text(.providers)) ?? { throw r.unreadable(.providers, "a list this build cannot read") }()
        a.mfaEnrollments = try AccountJSON.decodeMFA(r.text(.mfa)) ?? { throw r.unreadable(.mfa, "a list this build cannot read") }()
        return a
    }
}

extension PhoneVerificationColumn {
    static func read<R: StoreRow>(_ row: R) throws -> PhoneVerificationRecord {
        let r = Reading(row, PhoneVerificationColumn.self)
        return PhoneVerificationRecord(sessionHash: r.blob(.session_hash), projectID: r.text(.project_id), phoneNumber: r.text(.phone_number),
                                       appID: r.text(.app_id), codeHash: r.blob(.code_hash), nonce: r.blob(.nonce),
                                       createdAt: r.int(.created_at), expiresAt: r.int(.expires_at), attempts: r.count(.attempts),
                                       consumedAt: r.intOrNil(.consumed_at), supersededAt: r.intOrNil(.superseded_at),
                                       isTest: r.bool(.is_test), clientHash: r.blob(.client_hash),
                                       purpose: try PhoneCodePurpose(stored: r.text(.purpose)) ?? { throw r.unreadable(.purpose, "\"\(r.text(.purpose).prefix(40))\"") }())
    }
}

extension PhoneProofColumn {
    static func read<R: StoreRow>(_ row: R) throws -> PhoneProofRecord {
        let r = Reading(row, PhoneProofColumn.self)
        return PhoneProofRecord(proofHash: r.blob(.proof_hash), projectID: r.text(.project_id), phoneNumber: r.text(.phone_number),
                                createdAt: r.int(.created_at), expiresAt: r.int(.expires_at))
    }
}

extension EmailLinkColumn {
    static func read<R: StoreRow>(_ row: R) throws -> EmailLinkRecord {
        let r = Reading(row, EmailLinkColumn.self)
        return EmailLinkRecord(codeHash: r.blob(.code_hash), projectID: r.text(.project_id), requestType: try r.value(.request_type),
                               email: r.text(.email), localID: r.textOrNil(.local_id), continueURL: r.textOrNil(.continue_url),
                               canHandleCodeInApp: r.bool(.can_handle_in_app), iosBundleID: r.textOrNil(.ios_bundle_id),
                               androidPackage: r.textOrNil(.android_package), lang: r.text(.lang),
                               browserBinding: r.blobOrNil(.browser_binding).flatMap { $0.isEmpty ? nil : $0 },
                               createdAt: r.int(.created_at), expiresAt: r.int(.expires_at), consumedAt: r.intOrNil(.consumed_at))
    }
}

extension RefreshTokenColumn {
    static func read<R: StoreRow>(_ row: R) throws -> RefreshTokenRecord {
        let r = Reading(row, RefreshTokenColumn.self)
        return RefreshTokenRecord(tokenHash: r.blob(.token_hash), familyID: r.text(.family_id), projectID: r.text(.project_id),
                                  localID: r.text(.local_id), provider: r.text(.provider), authTime: r.int(.auth_time),
                                  createdAt: r.int(.created_at), rotatedAt: r.intOrNil(.rotated_at), revokedAt: r.intOrNil(.revoked_at),
                                  secondFactor: r.textOrNil(.second_factor), developerClaims: r.textOrNil(.developer_claims))
    }
}

extension SessionColumn {
    static func read<R: StoreRow>(_ row: R) throws -> SessionRecord {
        let r = Reading(row, SessionColumn.self)
        return SessionRecord(sidHash: r.blob(.sid_hash), projectID: r.text(.project_id), localID: r.text(.local_id), provider: r.text(.provider),
                             createdAt: r.int(.created_at), lastSeenAt: r.int(.last_seen_at), expiresAt: r.int(.expires_at),
                             idleTimeoutSeconds: r.int(.idle_timeout_seconds), revokedAt: r.intOrNil(.revoked_at))
    }
}

extension SigningKeyColumn {
    static func read<R: StoreRow>(_ row: R) throws -> SigningKeyRecord {
        let r = Reading(row, SigningKeyColumn.self)
        return SigningKeyRecord(kid: r.text(.kid), algorithm: r.text(.algorithm), privatePEM: r.text(.private_pem), publicPEM: r.text(.public_pem),
                                certificatePEM: r.text(.certificate_pem), createdAt: r.int(.created_at), retiredAt: r.intOrNil(.retired_at),
                                expiresAt: r.intOrNil(.expires_at))
    }
}

extension OutboxColumn {
    static func read<R: StoreRow>(_ row: R) throws -> OutboxMessage {
        let r = Reading(row, OutboxColumn.self)
        return OutboxMessage(id: r.int(.id), projectID: r.text(.project_id), channel: try r.value(.channel), recipient: r.text(.recipient),
                             subject: r.textOrNil(.subject), body: r.text(.body), htmlBody: r.textOrNil(.html_body), metadata: r.text(.metadata),
                             status: try r.value(.status), attempts: r.count(.attempts), nextAttemptAt: r.int(.next_attempt_at),
                             lastError: r.textOrNil(.last_error), createdAt: r.int(.created_at), sentAt: r.intOrNil(.sent_at))
    }
}

extension OutboxColumn {
    static func lease<R: StoreRow>(_ row: R, until: Millis) throws -> OutboxLease {
        OutboxLease(message: try read(row), token: Reading(row, OutboxColumn.self).int(.lease_token), until: until)
    }
}

extension AuditColumn {
    static func read<R: StoreRow>(_ row: R) throws -> AuditRecord {
        let r = Reading(row, AuditColumn.self)
        return AuditRecord(id: r.int(.id), at: r.int(.at),
                           event: AuditEvent(projectID: r.text(.project_id), event: try r.value(.event), localID: r.textOrNil(.local_id),
                                             remoteAddress: r.textOrNil(.remote_address), detail: r.textOrNil(.detail),
                                             actor: r.textOrNil(.actor), outcome: r.text(.outcome)))
    }
}

extension AppTokenColumn {
    static func read<R: StoreRow>(_ row: R) throws -> AppTokenRecord {
        let r = Reading(row, AppTokenColumn.self)
        return AppTokenRecord(tokenHash: r.blob(.token_hash), projectID: r.text(.project_id), apiKey: r.text(.api_key), appID: r.text(.app_id),
                              expiresAt: r.int(.expires_at))
    }
}

extension SMSHoldColumn {
    static func read<R: StoreRow>(_ row: R) throws -> SMSHold {
        let r = Reading(row, SMSHoldColumn.self)
        return SMSHold(projectID: r.text(.project_id), kind: try r.value(.kind), key: r.text(.key), heldAt: r.int(.held_at),
                       expiresAt: r.intOrNil(.expires_at), releasedAt: r.intOrNil(.released_at), recentCount: r.count(.recent_count),
                       baselineCount: r.count(.baseline_count))
    }
}

extension MFAPendingColumn {
    static func read<R: StoreRow>(_ row: R) throws -> MFAPendingRecord {
        let r = Reading(row, MFAPendingColumn.self)
        return MFAPendingRecord(credentialHash: r.blob(.credential_hash), projectID: r.text(.project_id), localID: r.text(.local_id),
                                firstFactor: r.text(.first_factor), authTime: r.int(.auth_time), createdAt: r.int(.created_at),
                                expiresAt: r.int(.expires_at), consumedAt: r.intOrNil(.consumed_at))
    }
}

extension IOSReceiptColumn {
    static func read<R: StoreRow>(_ row: R) throws -> IOSReceiptRecord {
        let r = Reading(row, IOSReceiptColumn.self)
        return IOSReceiptRecord(receiptHash: r.blob(.receipt_hash), projectID: r.text(.project_id), bundleID: r.text(.bundle_id),
                                deviceTokenHash: r.blob(.device_token_hash), sandbox: r.bool(.sandbox), secretHash: r.blob(.secret_hash),
                                createdAt: r.int(.created_at), expiresAt: r.int(.expires_at), uses: r.count(.uses))
    }
}
