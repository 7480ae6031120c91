import AuthEngine
import JSONValue

/// A project's new sign-in notice: `new_sign_in_notice: {enabled, per_account_per_day}`
/// (docs/configuration.md; docs/sessions-and-nginx.md "New sign-in notice").
extension Config {
    static let signInNoticeKeys: Set<String> = ["enabled", "per_account_per_day", "$comment"]

    func applySignInNotice(project j: JSON, into p: inout ProjectSettings, prefix pfx: String, problems: inout [String]) {
        guard let k = j["new_sign_in_notice"] else { return }
        let q = pfx + "new_sign_in_notice."
        guard case let .object(pairs) = k else { problems.append("\(pfx)new_sign_in_notice: expected an object"); return }
        for (key, _) in pairs where !Config.signInNoticeKeys.contains(key) { problems.append("\(q)\(key): unknown key") }
        if let v = k["enabled"] {
            if let b = v.boolValue { p.signInNotice.enabled = b } else { problems.append("\(q)enabled: expected true or false") }
        }
        int(k, "per_account_per_day", 1...50, &problems, prefix: q).map { p.signInNotice.perAccountPerDay = $0 }
    }
}
