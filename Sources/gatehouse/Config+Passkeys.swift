import AuthCrypto
import AuthEngine
import JSONValue

/// A project's passkeys: `passkeys: {enabled, rp_id, rp_name, origins, max_per_user,
/// challenge_seconds, challenges_per_ip_per_5min, skip_second_factor, attestation_roots_file}`
/// (docs/passkeys.md).
extension Config {
    static let passkeyKeys: Set<String> = ["enabled", "rp_id", "rp_name", "origins", "max_per_user", "challenge_seconds",
                                           "challenges_per_ip_per_5min", "skip_second_factor", "attestation_roots_file", "$comment"]

    func applyPasskeys(project j: JSON, into p: inout ProjectSettings, prefix pfx: String, problems: inout [String]) {
        guard let k = j["passkeys"] else { return }
        let q = pfx + "passkeys."
        guard case let .object(pairs) = k else { problems.append("\(pfx)passkeys: expected an object"); return }
        for (key, _) in pairs where !Config.passkeyKeys.contains(key) { problems.append("\(q)\(key): unknown key") }
        for flag in ["enabled", "skip_second_factor"] {
            guard let v = k[flag] else { continue }
            guard let b = v.boolValue else { problems.append("\(q)\(flag): expected true or false"); continue }
            if flag == "enabled" { p.passkeys.enabled = b } else { p.passkeys.skipSecondFactor = b }
        }
        if let id = str(k, "rp_id", &problems, prefix: q) {
            // A registrable domain name: letters, digits, hyphens and dots; never an IP address.
            let ok = !id.isEmpty && id.utf8.count <= 253 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
                && !id.split(separator: ".").allSatisfy { $0.allSatisfy(\.isNumber) }
            if ok { p.passkeys.rpID = id.lowercased() } else { problems.append("\(q)rp_id: expected a domain name (not an IP address)") }
        }
        if let name = str(k, "rp_name", &problems, prefix: q) {
            if name.isEmpty || name.utf8.count > 128 { problems.append("\(q)rp_name: expected 1 to 128 bytes") } else { p.passkeys.rpName = name }
        }
        let origins = Config.strings(k, "origins", q, &problems)
        for o in origins where PasskeyOrigins.schemeAndHost(o) == nil && !o.hasPrefix(PasskeyOrigins.androidPrefix) {
            problems.append("\(q)origins: \(o) is not an origin (scheme://host[:port])")
        }
        p.passkeys.origins = origins
        int(k, "max_per_user", 1...100, &problems, prefix: q).map { p.passkeys.maxPerUser = $0 }
        int(k, "challenge_seconds", 1...600, &problems, prefix: q).map { p.passkeys.challengeSeconds = Int64($0) }
        int(k, "challenges_per_ip_per_5min", 1...10000, &problems, prefix: q).map { p.passkeys.challengesPerIPPer5Min = $0 }
        if let path = str(k, "attestation_roots_file", &problems, prefix: q) {
            // Only authenticators whose maker's roots are listed may enrol (docs/passkeys.md "Attestation").
            do {
                let bytes = try Config.readFile(path)
                p.passkeys.attestationRoots = try AttestationRoots(pem: String(decoding: bytes, as: UTF8.self))
            } catch {
                problems.append("\(q)attestation_roots_file: cannot read certificates from \(path): \(error)")
            }
        }
    }
}
