/// How hard a challenge is: `maxnumber` starts at the policy's minimum and doubles for every
/// block of "free" challenges the caller's network (or the API key, all callers together) has
/// already taken in the current window, up to the policy's cap. The network counts on both
/// tiers: a client (IPv4 address, IPv6 /64) gets the free challenges, its block (IPv4 /24, IPv6
/// /48) `wideFactor` times as many, so rotating addresses inside a block does not reset the price.
extension AppVerification {
    static func challengeRuleIP(_ p: AppVerificationPolicy) -> Limits.Rule {
        Limits.Rule("appverify.challenges.ip", max: Int.max, per: p.windowSeconds)
    }

    static func challengeRuleKey(_ p: AppVerificationPolicy) -> Limits.Rule {
        Limits.Rule("appverify.challenges.key", max: Int.max, per: p.windowSeconds)
    }

    static func redemptionRuleIP(_ p: AppVerificationPolicy) -> Limits.Rule {
        Limits.Rule("appverify.redemptions.ip", max: p.redemptionsPerIP, per: p.windowSeconds)
    }

    /// Difficulty for a caller whose IP has taken `ipCount` and whose API key has taken
    /// `keyCount` challenges this window (both counting the one being issued).
    public static func difficulty(_ policy: AppVerificationPolicy, ipCount: Int, keyCount: Int) -> Int {
        func level(_ count: Int, _ free: Int) -> Int { free > 0 ? max(0, count - 1) / free : 0 }
        let steps = min(max(level(ipCount, policy.freeChallengesPerIP), level(keyCount, policy.freeChallengesPerKey)), 40)
        var d = max(1, policy.minDifficulty)
        for _ in 0..<steps {
            let (doubled, overflow) = d.multipliedReportingOverflow(by: 2)
            d = overflow ? Int.max : doubled
            if d >= policy.maxDifficulty { break }
        }
        return max(1, min(d, max(policy.maxDifficulty, policy.minDifficulty)))
    }

    /// Counts this request against the caller's network and API key and returns the difficulty.
    func nextDifficulty(_ policy: AppVerificationPolicy, project: String, apiKey: String?, client: ClientAddress) throws -> Int {
        let limits = Limits(store: store, clock: clock)
        let ipRule = AppVerification.challengeRuleIP(policy)
        _ = try limits.record(ipRule, client: client, scope: project)
        let narrow = try limits.count(ipRule, key: project + "|" + client.narrow)
        let wide = try limits.count(ipRule, key: project + "|" + client.wide)
        let ipCount = max(narrow, (wide + client.wideFactor - 1) / client.wideFactor)
        var keyCount = 0
        if let apiKey, !apiKey.isEmpty {
            let keyRule = AppVerification.challengeRuleKey(policy)
            let bucket = project + "/" + AppVerification.scope(project: project, apiKey: apiKey)
            try limits.hit(keyRule, key: bucket)
            keyCount = try limits.count(keyRule, key: bucket)
        }
        return AppVerification.difficulty(policy, ipCount: ipCount, keyCount: keyCount)
    }
}
