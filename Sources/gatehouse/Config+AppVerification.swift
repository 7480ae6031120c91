import AuthEngine
import JSONValue

/// `projects[].app_verification` (docs/configuration-app-verification.md): the proof of work's
/// difficulty and rates, or an external verifier (`recaptcha`, `hcaptcha`, `turnstile`).
extension Config {
    static let knownAppVerificationKeys: Set<String> = [
        "provider", "site_key", "secret", "verify_url", "recaptcha_version", "min_score", "enforcement",
        "min_difficulty", "max_difficulty", "challenge_lifetime_seconds", "window_seconds",
        "free_challenges_per_ip", "free_challenges_per_key", "redemptions_per_ip", "$comment",
    ]

    static func appVerification(_ j: JSON, prefix: String, dev: Bool, problems: inout [String]) -> AppVerificationPolicy {
        var p = AppVerificationPolicy()
        let q = prefix + "app_verification."
        guard case let .object(pairs) = j else { problems.append("\(q.dropLast()): expected an object"); return p }
        for (k, _) in pairs where !knownAppVerificationKeys.contains(k) { problems.append("\(q)\(k): unknown key") }
        let c = Config()
        if let name = c.str(j, "provider", &problems, prefix: q) {
            if let provider = AppVerificationPolicy.Provider(rawValue: name) { p.provider = provider } else {
                problems.append("\(q)provider: expected one of " + AppVerificationPolicy.Provider.allCases.map(\.rawValue).joined(separator: ", "))
            }
        }
        p.siteKey = c.str(j, "site_key", &problems, prefix: q)
        p.secret = c.str(j, "secret", &problems, prefix: q)
        p.verifyURL = c.str(j, "verify_url", &problems, prefix: q)
        if let v = c.str(j, "recaptcha_version", &problems, prefix: q) {
            if v == "v2" || v == "v3" { p.recaptchaVersion = v } else { problems.append("\(q)recaptcha_version: expected \"v2\" or \"v3\"") }
        }
        if let s = j["min_score"] {
            if let d = s.doubleValue, (0...1).contains(d) { p.minScore = d } else { problems.append("\(q)min_score: expected a number in 0…1") }
        }
        if let e = c.str(j, "enforcement", &problems, prefix: q) {
            if let state = AppVerificationPolicy.Enforcement(rawValue: e) { p.enforcement = state } else {
                problems.append("\(q)enforcement: expected OFF, AUDIT or ENFORCE")
            }
        }
        c.int(j, "min_difficulty", 1_000...10_000_000, &problems, prefix: q).map { p.minDifficulty = $0 }
        c.int(j, "max_difficulty", 1_000...100_000_000, &problems, prefix: q).map { p.maxDifficulty = $0 }
        c.int(j, "challenge_lifetime_seconds", 30...3600, &problems, prefix: q).map { p.challengeLifetimeSeconds = Int64($0) }
        c.int(j, "window_seconds", 60...86_400, &problems, prefix: q).map { p.windowSeconds = Int64($0) }
        c.int(j, "free_challenges_per_ip", 1...100_000, &problems, prefix: q).map { p.freeChallengesPerIP = $0 }
        c.int(j, "free_challenges_per_key", 1...10_000_000, &problems, prefix: q).map { p.freeChallengesPerKey = $0 }
        c.int(j, "redemptions_per_ip", 1...1_000_000, &problems, prefix: q).map { p.redemptionsPerIP = $0 }

        if p.maxDifficulty < p.minDifficulty { problems.append("\(q)max_difficulty: must be at least min_difficulty") }
        if p.provider == .pow {
            for key in ["site_key", "secret", "verify_url"] where j[key] != nil { problems.append("\(q)\(key): only used with an external provider") }
        } else {
            if (p.siteKey ?? "").isEmpty { problems.append("\(q)site_key: required for provider \(p.provider.rawValue)") }
            if (p.secret ?? "").isEmpty { problems.append("\(q)secret: required for provider \(p.provider.rawValue)") }
        }
        if let url = p.verifyURL {
            let https = url.hasPrefix("https://"), http = url.hasPrefix("http://")
            if !(https || (dev && http)) || url.contains(" ") {
                problems.append("\(q)verify_url: expected an https:// URL" + (dev ? " (http:// is allowed in dev mode)" : ""))
            }
        }
        if p.enforcement != .off, p.provider != .recaptcha {
            problems.append("\(q)enforcement: only meaningful with provider recaptcha")
        }
        return p
    }
}
