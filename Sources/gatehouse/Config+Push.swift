import AuthCrypto
import AuthEngine
import Delivery
import JSONValue

/// `projects[].ios_apps[].apns`: the APNs auth key an app's silent pushes are signed with
/// (docs/configuration-app-verification.md "Silent push").
extension Config {
    static let knownAPNsKeys: Set<String> = ["key_id", "key_file", "team_id", "gateway", "sandbox_gateway", "ca_file",
                                             "allow_custom_gateway", "$comment"]

    static func apns(_ j: JSON, appTeam: String, prefix: String, problems: inout [String]) -> APNsSettings? {
        guard case let .object(pairs) = j else { problems.append("\(prefix): expected an object"); return nil }
        for (k, _) in pairs where !knownAPNsKeys.contains(k) { problems.append("\(prefix).\(k): unknown key") }
        func text(_ key: String) -> String? {
            guard let v = j[key] else { return nil }
            guard let s = v.stringValue, !s.isEmpty else { problems.append("\(prefix).\(key): expected a non-empty string"); return nil }
            return s
        }
        let keyID = text("key_id") ?? ""
        if keyID.count != 10 || !keyID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            problems.append("\(prefix).key_id: expected the 10-character key id Apple shows for the key")
        }
        let team = text("team_id") ?? appTeam
        if team.count != 10 { problems.append("\(prefix).team_id: expected a 10-character Apple team id") }
        guard let keyFile = text("key_file") else { problems.append("\(prefix).key_file: required (the .p8 file)"); return nil }
        if !keyFile.hasPrefix("/") { problems.append("\(prefix).key_file: expected an absolute path") }
        var s = APNsSettings(teamID: team, keyID: keyID, keyFile: keyFile, gateway: text("gateway"), sandboxGateway: text("sandbox_gateway"),
                             caFile: text("ca_file"))
        if let allow = j["allow_custom_gateway"] {
            if let b = allow.boolValue { s.allowCustomGateway = b } else { problems.append("\(prefix).allow_custom_gateway: expected true or false") }
        }
        for (key, url) in [("gateway", s.gateway), ("sandbox_gateway", s.sandboxGateway)] {
            guard let url else { continue }
            if APNsSettings.host(of: url) == nil { problems.append("\(prefix).\(key): expected an https:// URL") }
        }
        return s
    }

    /// Outside dev mode a push goes to Apple unless the operator says otherwise: a custom
    /// gateway (a proxy, a test double) must be allowed explicitly.
    func apnsGatewayProblems() -> [String] {
        guard mode == .production else { return [] }
        var out: [String] = []
        for p in projects {
            for app in p.iosApps {
                guard let s = app.apns, !s.allowCustomGateway else { continue }
                for (key, url) in [("gateway", s.gateway), ("sandbox_gateway", s.sandboxGateway)] {
                    guard let url, let host = APNsSettings.host(of: url), !APNsSettings.appleHosts.contains(host) else { continue }
                    out.append("projects[\(p.id)].ios_apps[\(app.bundleID)].apns.\(key): \(host) is not an Apple APNs gateway "
                               + "(set allow_custom_gateway: true to use it in production)")
                }
            }
        }
        return out
    }

    /// Reads and checks an app's auth key: a readable PKCS#8 PEM, EC on P-256.
    static func loadAPNsKey(_ s: APNsSettings) throws -> ES256PrivateKey {
        let bytes: [UInt8]
        do { bytes = try readFile(s.keyFile) } catch { throw ConfigError("cannot read the APNs key file \(s.keyFile): \(error)") }
        do { return try ES256PrivateKey(pem: String(decoding: bytes, as: UTF8.self)) } catch {
            throw ConfigError("the APNs key file \(s.keyFile) is not a usable ES256 key: \(error.detail)")
        }
    }

    /// Every configured auth key that cannot be loaded, and every CA file that cannot be read (for
    /// `config check`).
    func apnsKeyProblems() -> [String] {
        var out: [String] = []
        for p in projects {
            for app in p.iosApps {
                guard let s = app.apns else { continue }
                let prefix = "projects[\(p.id)].ios_apps[\(app.bundleID)].apns"
                do { _ = try Config.loadAPNsKey(s) } catch { out.append("\(prefix).key_file: \(error)") }
                if let ca = s.caFile, (try? Config.readFile(ca)) == nil { out.append("\(prefix).ca_file: cannot read \(ca)") }
            }
        }
        return out
    }

    /// The apps that can push, keys loaded; an app whose key cannot be loaded is left out (its
    /// pushes fail as unconfigured) and logged, so one bad key does not stop the server.
    func apnsApps(log: Log) -> [APNsSender.App] {
        var apps: [APNsSender.App] = []
        for p in projects {
            for app in p.iosApps {
                guard let s = app.apns else { continue }
                do {
                    apps.append(APNsSender.App(projectID: p.id, bundleID: app.bundleID, settings: s, key: try Config.loadAPNsKey(s)))
                } catch {
                    log.error("apns: \(p.id)/\(app.bundleID): \(error); its silent pushes cannot be sent")
                }
            }
        }
        return apps
    }
}
