import AuthCrypto
import AuthEngine
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// The TOTP second factor's configuration: per project `mfa_totp: {enabled, adjacent_intervals}`,
/// and for the deployment the key that seals the secrets (`totp_key_file`, or
/// `GATEHOUSE_TOTP_KEY_FILE`): a file of its own, never the database, so a copy of the database
/// alone reveals no secret. The file holds the 32 key bytes, or their standard base64 on one
/// line. Dev mode makes one in the data folder when none is named.
extension Config {
    static let totpKeyFileName = "totp.key"

    func applyTOTP(project j: JSON, into p: inout ProjectSettings, prefix pfx: String, problems: inout [String]) {
        guard let t = j["mfa_totp"] else { return }
        guard case let .object(pairs) = t else { problems.append("\(pfx)mfa_totp: expected an object"); return }
        for (k, _) in pairs where k != "enabled" && k != "adjacent_intervals" && k != "$comment" {
            problems.append("\(pfx)mfa_totp.\(k): unknown key")
        }
        if let e = t["enabled"] {
            if let b = e.boolValue { p.totp.enabled = b } else { problems.append("\(pfx)mfa_totp.enabled: expected true or false") }
        }
        int(t, "adjacent_intervals", 0...10, &problems, prefix: pfx + "mfa_totp.").map { p.totp.adjacentIntervals = $0 }
    }

    /// The key every TOTP project uses, read (or, in dev mode with `create`, made) now. Problems
    /// are returned rather than thrown so `config check` lists them with the rest.
    mutating func loadTOTPKey(create: Bool) -> [String] {
        guard projects.contains(where: { $0.totp.enabled }) else { return [] }
        let path: String
        if let named = totpKeyFile {
            path = named
        } else if mode == .dev {
            path = dataDir + "/" + Config.totpKeyFileName
            if create, !Files.exists(path) {
                do {
                    try Runtime.makeDirectories(dataDir)
                    try Files.write(Array(Base64URL.encodeStandard(SecureRandom.bytes(SealedBox.keyLength)).utf8) + [10], to: path, mode: 0o600,
                                    exclusive: true)
                } catch { return ["totp_key_file: cannot create \(path): \(error)"] }
            }
            if !Files.exists(path) { return [] }
        } else {
            return ["totp_key_file: a project enables mfa_totp, so the deployment needs a TOTP key file (32 random bytes, or their base64)"]
        }
        let bytes: [UInt8]
        do { bytes = try Config.readFile(path) } catch { return ["totp_key_file: cannot read \(path): \(error)"] }
        let text = String(decoding: bytes, as: UTF8.self).trimmingSpaces.filter { $0 != "\n" && $0 != "\r" }
        let key: [UInt8]
        if bytes.count == SealedBox.keyLength {
            key = bytes
        } else if let decoded = Base64URL.decodeStandard(lines: Array(text.utf8)), decoded.count == SealedBox.keyLength {
            key = decoded
        } else {
            return ["totp_key_file: \(path) must hold 32 bytes, or their base64"]
        }
        for i in projects.indices where projects[i].totp.enabled { projects[i].totp.sealingKey = key }
        return []
    }
}
