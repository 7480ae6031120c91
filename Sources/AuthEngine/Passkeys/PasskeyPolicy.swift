public import AuthCrypto

/// A project's passkeys (docs/passkeys.md): off unless enabled. The relying party is the
/// project's web domain (`rp_id`; by default its SMS origin domain, `localhost` in dev mode, as
/// an IP address cannot be one); assertions are accepted from the origins on that domain the
/// project allows (`PasskeyOrigins`) plus any listed in `origins`.
public struct PasskeyPolicy: Sendable, Equatable {
    public var enabled = false
    /// nil: `ProjectSettings.passkeyRelyingPartyID`'s default.
    public var rpID: String? = nil
    /// What an authenticator shows beside the account; nil: the relying party id.
    public var rpName: String? = nil
    /// Further exact origins accepted (e.g. another site on a related origin).
    public var origins: [String] = []
    public var maxPerUser = 10
    /// How long a challenge may be answered, seconds (1…600).
    public var challengeSeconds: Int64 = 300
    /// A user with a phone or TOTP second factor who signs in with a passkey (always verified:
    /// the authenticator checked a PIN or a biometric) skips the second factor; false asks for it.
    public var skipSecondFactor = true
    /// The roots attestation must chain to (`attestation_roots_file`): with them, only
    /// authenticators whose maker vouches for them enrol (`direct` attestation, `packed` format);
    /// nil takes every authenticator and trusts no attestation.
    public var attestationRoots: AttestationRoots? = nil
    /// Challenges (sign-in and enrolment) one client may ask for in five minutes.
    public var challengesPerIPPer5Min = 60
    public init() {}
}

extension ProjectSettings {
    /// The relying party id: the configured one, else `localhost` in dev mode, else the
    /// project's domain.
    public var passkeyRelyingPartyID: String {
        if let id = passkeys.rpID, !id.isEmpty { return id.lowercased() }
        return devMode ? "localhost" : smsOriginDomain.lowercased()
    }
}
