import AuthCrypto
import Locking

/// A number accepted for phone sign-in: validated by libphonenumber, or a configured test number.
struct ParsedNumber: Equatable {
    var e164: String
    /// ISO region ("FR"); "ZZ" for a test number libphonenumber does not know.
    var region: String
    /// The fixed code when this is one of the project's test numbers.
    var testCode: String?
    var isTest: Bool { testCode != nil }
}

extension PhoneSignIn {
    /// Parses a number as `accounts:sendVerificationCode` requires (gatehouse.md "Phone sign-in"):
    /// missing or malformed → `INVALID_PHONE_NUMBER : Invalid format.`, and `: TOO_SHORT` /
    /// `: TOO_LONG` when libphonenumber says so. Test numbers are accepted as configured even when
    /// libphonenumber would reject them (fictional ranges such as +1 555 0100).
    static func parse(_ raw: String?, defaultRegion: String? = nil, project: ProjectSettings) throws -> ParsedNumber {
        guard let raw, !raw.isEmpty, raw.utf8.count <= 64 else { throw AuthError(.invalidPhoneNumber, "Invalid format.") }
        // Most requests send E.164 as is: only "+" and ASCII digits, nothing to strip.
        let plain = raw.utf8.allSatisfy { $0 == UInt8(ascii: "+") || ($0 >= 0x30 && $0 <= 0x39) }
        let compact = plain ? raw : String(raw.filter { !" -.()\u{00A0}".contains($0) })
        if let code = project.testPhoneNumbers[compact] { return ParsedNumber(e164: compact, region: "ZZ", testCode: code) }
        // A test number typed in national form on the hosted page ("555 555 0100" with US selected).
        if !compact.hasPrefix("+"), compact.allSatisfy(\.isNumber), let region = defaultRegion,
           let cc = PhoneNumber.countryCode(forRegion: region.uppercased()) {
            for national in [compact, compact.hasPrefix("0") ? String(compact.dropFirst()) : nil].compactMap({ $0 }) {
                let candidate = "+\(cc)\(national)"
                if let code = project.testPhoneNumbers[candidate] { return ParsedNumber(e164: candidate, region: "ZZ", testCode: code) }
            }
        }
        let number: PhoneNumber
        do {
            number = try PhoneNumber(parsing: raw, defaultRegion: defaultRegion)
        } catch {
            switch error {
            case .tooShort: throw AuthError(.invalidPhoneNumber, "TOO_SHORT")
            case .tooLong: throw AuthError(.invalidPhoneNumber, "TOO_LONG")
            case .invalidFormat: throw AuthError(.invalidPhoneNumber, "Invalid format.")
            }
        }
        return ParsedNumber(e164: number.e164, region: number.region, testCode: project.testPhoneNumbers[number.e164])
    }

    /// App identities are free text from headers: keep them short and printable.
    static func normalisedAppID(_ id: String) -> String {
        String(id.unicodeScalars.filter { $0.value > 0x20 && $0.value < 0x7F }.prefix(200).map(Character.init))
    }

    static let sessionPrefix = "ghs1."
    static let proofPrefix = "ghp1."

    static func hash(sessionInfo: String) -> [UInt8] { Digest.sha256(sessionInfo) }
    static func hash(proof: String) -> [UInt8] { Digest.sha256(proof) }

    /// The verification a sessionInfo names, in this project; otherwise `INVALID_SESSION_INFO`.
    func lookUp(_ sessionInfo: String?) throws -> PhoneVerificationRecord {
        guard let sessionInfo, !sessionInfo.isEmpty else { throw AuthError(.missingSessionInfo) }
        guard sessionInfo.hasPrefix(PhoneSignIn.sessionPrefix), sessionInfo.utf8.count <= 512,
              let record = try store.phoneVerification(sessionHash: PhoneSignIn.hash(sessionInfo: sessionInfo)),
              record.projectID == project.id else { throw AuthError(.invalidSessionInfo) }
        return record
    }

    /// Where a verification stands, for the hosted page (attempts left, expiry, resend time).
    public struct Status: Sendable, Equatable {
        public enum State: Sendable { case pending, expired, used, burned }
        public var state: State
        public var phoneNumber: String
        public var attemptsLeft: Int
        public var expiresAt: Millis
        public var resendAvailableAt: Millis
        /// The channel of the current code's message, and what its provider reported (nil: not
        /// yet accepted; a message that died unsent reads `.failed`).
        public var channel: PhoneChannel?
        public var delivery: DeliveryState?
        /// The project's channels a "send again" may take.
        public var channels: [PhoneChannel]

        /// The person should not wait for this code: its message was reported undelivered or
        /// failed, or could not be sent.
        public var notDelivered: Bool { delivery == .undelivered || delivery == .failed }
    }

    /// The status of `sessionInfo`; nil when it names nothing in this project.
    public func status(sessionInfo: String?) throws -> Status? {
        guard let r = try? lookUp(sessionInfo) else { return nil }
        let now = clock.now()
        let left = max(0, policy.maxAttemptsPerSession - r.attempts)
        let state: Status.State
        if r.consumedAt != nil || r.supersededAt != nil { state = .used }
        else if left == 0 { state = .burned }
        else if now >= r.expiresAt { state = .expired }
        else { state = .pending }
        var delivery: DeliveryState?
        if let id = r.messageID, let m = try store.outboxMessage(id: id) {
            delivery = m.delivery ?? (m.status == .dead ? .failed : nil)
        }
        return Status(state: state, phoneNumber: r.phoneNumber, attemptsLeft: left, expiresAt: r.expiresAt,
                      resendAvailableAt: r.createdAt + policy.resendAfterSeconds * 1000, channel: r.channel.flatMap(PhoneChannel.init),
                      delivery: delivery, channels: policy.channels)
    }
}

/// The server keys of phone sign-in, derived from one 32-byte secret (`SecretStore` name
/// `phone`) generated on first use and shared by every instance.
///
/// A repeated send must return the same sessionInfo while only its hash is stored. Gatehouse
/// derives it instead of storing it: each verification keeps a random 18-byte nonce, and
/// sessionInfo = `ghs1.` + base64url(HMAC(k, "1"‖nonce) ‖ HMAC(k, "2"‖nonce) ‖ HMAC(k, "3"‖nonce))
/// with k = HMAC(secret, "phone-session"). A copy of the table alone (nonces and hashes) gives
/// neither sessionInfos nor codes; the secret recomputes the sessionInfo of a pending code.
struct PhoneKeys {
    /// Prepared once per secret (`PhoneKeyCache`): a MAC then hashes only its message.
    let sessionKey: HMACKey
    let codeKey: HMACKey

    static func load(store: any SecretStore, random: any RandomSource, at now: Millis) throws -> PhoneKeys {
        let secret = try store.secret(named: "phone") ?? store.insertSecretIfAbsent(named: "phone", value: random.bytes(32), at: now)
        return derived.keys(for: secret)
    }

    /// Keys derived from the last few secrets seen (one per database in practice), so that each
    /// request does not pay for the two derivations again.
    private static let derived = PhoneKeyCache()

    /// 96 bytes → 128 base64url characters after the prefix: long, opaque, unguessable.
    func sessionInfo(nonce: [UInt8]) -> String {
        var message = [UInt8](repeating: 0, count: 1 + nonce.count)
        message.replaceSubrange(1..., with: nonce)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        for block: UInt8 in 1...3 {
            message[0] = 0x30 + block  // "1", "2", "3"
            bytes += sessionKey.mac(message)
        }
        return PhoneSignIn.sessionPrefix + Base64URL.encode(bytes)
    }

    /// The keyed hash of a code, bound to its verification so equal codes hash differently.
    func codeHash(_ code: String, nonce: [UInt8]) -> [UInt8] {
        var message = nonce
        message.append(UInt8(ascii: "|"))
        message += code.utf8
        return codeKey.mac(message)
    }
}

/// The `PhoneKeys` of recently seen phone secrets, shared by every thread (behind a lock).
final class PhoneKeyCache: Sendable {
    private let entries = Locked<[(secret: [UInt8], keys: PhoneKeys)]>([])

    func keys(for secret: [UInt8]) -> PhoneKeys {
        if let hit = entries.withLock({ $0.first(where: { $0.secret == secret })?.keys }) { return hit }
        let keys = PhoneKeys(sessionKey: HMACKey(Digest.hmacSHA256(key: secret, "phone-session")),
                             codeKey: HMACKey(Digest.hmacSHA256(key: secret, "phone-code")))
        entries.withLock { entries in
            if entries.count >= 8 { entries.removeFirst() }
            entries.append((secret, keys))
        }
        return keys
    }
}
