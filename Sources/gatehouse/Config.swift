import AuthEngine
import AuthWeb
import Delivery
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import JSONValue

/// The configuration file (JSON; every key documented in docs/configuration.md) plus
/// `GATEHOUSE_*` environment overrides. With no file, the embedded dev default.
struct Config {
    enum Mode: String { case dev, production }

    var mode: Mode = .dev
    var dataDir = ".gatehouse"
    var database = "gatehouse.db"
    var socket: String? = nil
    var socketMode: mode_t = 0o660
    var listen: String? = nil
    /// A TCP `listen` address off loopback is allowed only when the operator says the network
    /// lets nothing but nginx reach it (`listen.trusted_network`).
    var trustedNetwork = false
    /// Above nginx's kept-connection pool (keepalive × worker_processes), each kept connection holding a thread.
    /// (The processor count is asked only when the default is read: a CGI request never does.)
    var workers: Int {
        get { workersSetting ?? max(16, 2 * sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
        set { workersSetting = newValue }
    }
    private var workersSetting: Int?
    var maxBodyBytes = WebSettings.defaultMaxBodyBytes
    var maxImportBodyBytes = WebSettings.defaultMaxImportBodyBytes
    var publicOrigin: String? = nil
    var adminToken: String? = nil
    var templatesDir: String? = nil
    /// The file of the key that seals TOTP secrets (Config+TOTP.swift).
    var totpKeyFile: String? = nil
    var logLevel: Log.Level = .info
    var logFormat: Log.Format = .text
    /// The process's log, as configured.
    var log: Log { Log(level: logLevel, format: logFormat) }
    /// `/__/auth/metrics` and the metrics backend of a long-running responder (`metrics.enabled`).
    var metricsEnabled = true
    var projects: [ProjectSettings] = [ProjectSettings.devDefault()]
    var sms: JSON = .object([("provider", .string("dev"))])
    var email: JSON = .object([("transport", .string("dev"))])
    var retention = Housekeeping.Retention()
    var source = "embedded dev default"

    var databasePath: String { database.hasPrefix("/") ? database : dataDir + "/" + database }
    /// `store.url` (or `GATEHOUSE_STORE_URL`, `--store`): see `store` (Config+Store.swift).
    var storeURL: String? = nil

    /// Loads `path` (or the embedded default when nil), applies the environment, and returns
    /// the config with every problem found (empty when valid).
    static func load(path: String?, environment: [String: String] = Config.environment()) -> (Config, [String]) {
        var c = Config()
        var problems: [String] = []
        let file = path ?? environment["GATEHOUSE_CONFIG"]
        if let file {
            c.source = file
            do {
                let data = try readFile(file)
                let json = try JSONParser(maxBytes: 1 << 20, maxDepth: 16).parse(data)
                c.apply(json, problems: &problems)
            } catch let e as JSONError {
                problems.append("\(file): invalid JSON: \(e)")
            } catch {
                problems.append("\(file): cannot read: \(error)")
            }
        }
        c.applyEnvironment(environment, problems: &problems)
        c.validate(&problems)
        problems += c.loadTOTPKey(create: false)
        return (c, problems)
    }

    /// The variables the configuration reads (`getenv` each, rather than copying the whole
    /// environment into a dictionary).
    static let environmentNames = ["GATEHOUSE_CONFIG", "GATEHOUSE_MODE", "GATEHOUSE_DATA_DIR", "GATEHOUSE_DATABASE", "GATEHOUSE_SOCKET",
                                   "GATEHOUSE_LISTEN", "GATEHOUSE_PUBLIC_ORIGIN", "GATEHOUSE_ADMIN_TOKEN", "GATEHOUSE_TEMPLATES_DIR",
                                   "GATEHOUSE_WORKERS", "GATEHOUSE_STORE_URL", "GATEHOUSE_TOTP_KEY_FILE"]

    static func environment() -> [String: String] {
        var env: [String: String] = [:]
        for name in environmentNames { if let v = getenv(name) { env[name] = String(cString: v) } }
        return env
    }

    /// The whole file (read with the C library: no Foundation `Data`/`URL`).
    static func readFile(_ path: String) throws -> [UInt8] {
        do { return try LocalFile.read(path) } catch { throw ConfigError("\(error)") }
    }

    static let knownTopKeys: Set<String> = ["mode", "data_dir", "database", "listen", "public_origin", "admin_token", "templates_dir",
                                            "log_level", "log", "metrics", "projects", "sms", "email", "limits", "retention", "store",
                                            "totp_key_file", "$comment"]

    mutating func apply(_ json: JSON, problems: inout [String]) {
        guard case let .object(pairs) = json else { problems.append("top level must be a JSON object"); return }
        for (k, _) in pairs where !Config.knownTopKeys.contains(k) { problems.append("unknown key '\(k)'") }
        if let m = json["mode"] {
            if let s = m.stringValue, let mode = Mode(rawValue: s) { self.mode = mode } else { problems.append("mode: expected \"dev\" or \"production\"") }
        }
        str(json, "data_dir", &problems).map { dataDir = $0 }
        str(json, "database", &problems).map { database = $0 }
        if let st = json["store"] {
            if case let .object(pairs) = st {
                for (k, _) in pairs where k != "url" && k != "$comment" { problems.append("store.\(k): unknown key") }
                str(st, "url", &problems, prefix: "store.").map { storeURL = $0 }
            } else { problems.append("store: expected an object") }
        }
        str(json, "public_origin", &problems).map { publicOrigin = $0 }
        str(json, "admin_token", &problems).map { adminToken = $0 }
        str(json, "templates_dir", &problems).map { templatesDir = $0 }
        str(json, "totp_key_file", &problems).map { totpKeyFile = $0 }
        if let l = str(json, "log_level", &problems) { setLogLevel(l, key: "log_level", &problems) }
        applyOperations(json, problems: &problems)
        if let listen = json["listen"] {
            if case .object = listen {
                str(listen, "socket", &problems, prefix: "listen.").map { socket = $0 }
                str(listen, "tcp", &problems, prefix: "listen.").map { self.listen = $0 }
                if let t = listen["trusted_network"] {
                    if let b = t.boolValue { trustedNetwork = b } else { problems.append("listen.trusted_network: expected true or false") }
                }
                if let m = str(listen, "socket_mode", &problems, prefix: "listen.") {
                    if let v = mode_t(m, radix: 8), v <= 0o777 { socketMode = v } else { problems.append("listen.socket_mode: expected an octal mode like \"0660\"") }
                }
                int(listen, "workers", 1...256, &problems, prefix: "listen.").map { workers = $0 }
                int(listen, "max_body_bytes", 1024...(16 << 20), &problems, prefix: "listen.").map { maxBodyBytes = $0 }
                int(listen, "max_import_body_bytes", 1024...(64 << 20), &problems, prefix: "listen.").map { maxImportBodyBytes = $0 }
            } else { problems.append("listen: expected an object") }
        }
        if let projects = json["projects"] {
            if let arr = projects.arrayValue, !arr.isEmpty {
                self.projects = arr.enumerated().map { i, p in Config.project(p, index: i, dev: mode == .dev, problems: &problems) }
            } else { problems.append("projects: expected a non-empty array") }
        } else if mode == .production {
            problems.append("projects: production mode needs at least one project")
        }
        if let s = json["sms"] { sms = s }
        if let e = json["email"] { email = e }
        if let r = json["retention"] { retention = Config.retention(r, problems: &problems) }
        if let l = json["limits"] {
            var n = NetworkPolicy()
            int(l, "ipv6_prefix_bits", 32...128, &problems, prefix: "limits.").map { n.ipv6PrefixBits = $0 }
            int(l, "ipv4_block_prefix_bits", 8...32, &problems, prefix: "limits.").map { n.ipv4WidePrefixBits = $0 }
            int(l, "ipv6_block_prefix_bits", 16...128, &problems, prefix: "limits.").map { n.ipv6WidePrefixBits = $0 }
            int(l, "block_factor", 1...1000, &problems, prefix: "limits.").map { n.wideFactor = $0 }
            if n.ipv6WidePrefixBits > n.ipv6PrefixBits { problems.append("limits.ipv6_block_prefix_bits: must not exceed ipv6_prefix_bits") }
            for i in projects.indices { projects[i].network = n }
        }
    }

    mutating func applyEnvironment(_ env: [String: String], problems: inout [String]) {
        if let m = env["GATEHOUSE_MODE"] {
            if let mode = Mode(rawValue: m) {
                self.mode = mode
                for i in projects.indices { projects[i].devMode = mode == .dev }
            } else { problems.append("GATEHOUSE_MODE: expected dev or production") }
        }
        env["GATEHOUSE_DATA_DIR"].map { dataDir = $0 }
        env["GATEHOUSE_DATABASE"].map { database = $0 }
        env["GATEHOUSE_SOCKET"].map { socket = $0 }
        env["GATEHOUSE_LISTEN"].map { listen = $0 }
        env["GATEHOUSE_PUBLIC_ORIGIN"].map { publicOrigin = $0 }
        env["GATEHOUSE_ADMIN_TOKEN"].map { adminToken = $0 }
        env["GATEHOUSE_TEMPLATES_DIR"].map { templatesDir = $0 }
        env["GATEHOUSE_STORE_URL"].map { storeURL = $0 }
        env["GATEHOUSE_TOTP_KEY_FILE"].map { totpKeyFile = $0 }
        if let w = env["GATEHOUSE_WORKERS"] {
            if let n = Int(w), (1...256).contains(n) { workers = n } else { problems.append("GATEHOUSE_WORKERS: expected 1…256") }
        }
    }

    func validate(_ problems: inout [String]) {
        problems += SMSProviders.problems(sms) + EmailTransports.problems(email) + Config.storeProblems(storeURL)
        if let o = publicOrigin, !(o.hasPrefix("https://") || o.hasPrefix("http://")) || o.hasSuffix("/") {
            problems.append("public_origin: expected an origin like https://auth.example.com (no trailing slash)")
        }
        var ids = Set<String>()
        // A channel a project offers needs a provider that carries it (the dev outbox and a webhook
        // gateway carry all; a command, texts only).
        let sections = [sms, sms["secondary"]].compactMap { $0 }
        func carries(_ key: String) -> Bool {
            sections.contains { s in
                switch s["provider"]?.stringValue ?? "dev" {
                case "twilio": s[key] != nil
                case "command": false
                default: true
                }
            }
        }
        for (i, p) in projects.enumerated() {
            if p.phone.channels.contains(.whatsapp), !carries("whatsapp_from") {
                problems.append("projects[\(i)].phone.channels: whatsapp needs sms.whatsapp_from and a content SID")
            }
            if p.phone.channels.contains(.voice), !carries("voice_from") {
                problems.append("projects[\(i)].phone.channels: voice needs sms.voice_from")
            }
        }
        for p in projects {
            if !ids.insert(p.id).inserted { problems.append("projects: duplicate id '\(p.id)'") }
            // Every code gets its attempts, and a number gets its daily sends: their product is the
            // guesses anyone gets against one number per day (twice that across a day boundary),
            // kept within NIST SP 800-63B's 100.
            if p.phone.sendsPerNumberPerDay * p.phone.maxAttemptsPerSession > 50 {
                problems.append("projects[\(p.id)].phone: sends_per_number_per_day × max_attempts_per_code must be at most 50")
            }
            if !Cookie.isToken(p.session.cookieName) { problems.append("projects[\(p.id)].session.cookie_name: not a valid cookie name") }
            if let d = p.session.cookieDomain, d.isEmpty || !d.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0 != ";" && $0 != "," }) {
                problems.append("projects[\(p.id)].session.cookie_domain: not a valid domain")
            }
        }
        // libfcgi parses the records of whoever connects, and a malformed one can abort it (a
        // parameter length past INT_MAX: RELIABILITY.md "Fuzzing"); only nginx may reach it.
        if let l = listen, !trustedNetwork, !Config.isLoopback(listenAddress: l) {
            problems.append("listen.tcp: \(l) is not a loopback address; FastCGI must be reachable only by nginx (use 127.0.0.1 or a unix socket, or set listen.trusted_network: true when a firewall keeps everyone else out)")
        }
        problems += apnsGatewayProblems()
        guard mode == .production else { return }
        if (adminToken ?? "").count < 32 { problems.append("admin_token: production mode needs an admin token of at least 32 characters") }
        if publicOrigin == nil || !(publicOrigin ?? "").hasPrefix("https://") { problems.append("public_origin: production mode needs an https:// origin") }
        if (sms["provider"]?.stringValue ?? "dev") == "dev" { problems.append("sms.provider: \"dev\" (the default) is a dev-only setting") }
        if (email["transport"]?.stringValue ?? "dev") == "dev" { problems.append("email.transport: \"dev\" (the default) is a dev-only setting") }
        for p in projects {
            if p.apiKeys.isEmpty { problems.append("projects[\(p.id)].api_keys: production mode needs at least one API key") }
            if p.id == "demo-gatehouse" || p.id.hasPrefix("demo-") { problems.append("projects[\(p.id)]: demo- project ids are dev-only") }
        }
    }

    /// `127.x.x.x:port`, `localhost:port`, `[::1]:port`.
    static func isLoopback(listenAddress a: String) -> Bool {
        var host = Substring(a)
        if host.hasPrefix("["), let end = host.firstIndex(of: "]") { host = host[host.index(after: host.startIndex)..<end] }
        else if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// `https://host[:port]` or `http://…`, nothing after the authority.
    static func isOrigin(_ s: String) -> Bool {
        guard let sep = s.firstRange(of: "://") else { return false }
        let scheme = s[..<sep.lowerBound].lowercased()
        let rest = s[sep.upperBound...]
        return (scheme == "https" || scheme == "http") && !rest.isEmpty && !rest.contains("/") && !rest.contains("@")
            && rest.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }
    }

    // MARK: - Projects

    static let knownProjectKeys: Set<String> = ["id", "api_keys", "authorized_domains", "ios_apps", "android_apps", "test_phone_numbers",
                                                "sms_regions", "default_locale", "sms_origin_domain", "phone", "email_link", "session", "push", "$comment",
                                                "app_verification", "mfa", "mfa_totp", "custom_token_signers", "api_key_origins", "passkeys",
                                                "new_sign_in_notice"]

    static func project(_ j: JSON, index: Int, dev: Bool, problems: inout [String]) -> ProjectSettings {
        let pfx = "projects[\(index)]."
        guard case let .object(pairs) = j else { problems.append("projects[\(index)]: expected an object"); return .devDefault() }
        for (k, _) in pairs where !knownProjectKeys.contains(k) { problems.append("\(pfx)\(k): unknown key") }
        let c = Config()
        let id = c.str(j, "id", &problems, prefix: pfx) ?? ""
        if id.isEmpty || !id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) || id.count > 63 {
            problems.append("\(pfx)id: required, letters, digits and '-' only (≤ 63)")
        }
        var p = ProjectSettings(id: id, devMode: dev)
        p.apiKeys = strings(j, "api_keys", pfx, &problems)
        p.authorizedDomains = strings(j, "authorized_domains", pfx, &problems)
        if dev, p.authorizedDomains.isEmpty { p.authorizedDomains = ["localhost", "127.0.0.1"] }
        for d in p.authorizedDomains where d.contains("/") || d.contains(":") || d.isEmpty {
            problems.append("\(pfx)authorized_domains: '\(d)' must be a bare host name")
        }
        if let origins = j["api_key_origins"] {
            if case let .object(pairs) = origins {
                for (key, list) in pairs {
                    guard p.apiKeys.contains(key) else { problems.append("\(pfx)api_key_origins.\(key): not one of api_keys"); continue }
                    let texts = (list.arrayValue ?? []).compactMap(\.stringValue)
                    guard list.arrayValue != nil, texts.count == list.arrayValue?.count else {
                        problems.append("\(pfx)api_key_origins.\(key): expected a list of origins"); continue
                    }
                    for o in texts where !Config.isOrigin(o) {
                        problems.append("\(pfx)api_key_origins.\(key): '\(o)' is not an origin (scheme://host[:port], no path)")
                    }
                    p.apiKeyOrigins[key] = texts
                }
            } else {
                problems.append("\(pfx)api_key_origins: expected an object of API key → origins")
            }
        }
        if let apps = j["ios_apps"]?.arrayValue {
            for (i, a) in apps.enumerated() {
                guard let bundle = a["bundle_id"]?.stringValue, !bundle.isEmpty else {
                    problems.append("\(pfx)ios_apps[\(i)].bundle_id: required"); continue
                }
                let team = a["team_id"]?.stringValue ?? ""
                if team.count != 10 { problems.append("\(pfx)ios_apps[\(i)].team_id: expected a 10-character Apple team id") }
                let schemes = (a["url_schemes"]?.arrayValue ?? []).compactMap(\.stringValue)
                var app = IOSApp(bundleID: bundle, teamID: team, appID: a["app_id"]?.stringValue, clientID: a["client_id"]?.stringValue,
                                 extraSchemes: schemes)
                if let apns = a["apns"] { app.apns = Config.apns(apns, appTeam: team, prefix: "\(pfx)ios_apps[\(i)].apns", problems: &problems) }
                if app.schemes.isEmpty { problems.append("\(pfx)ios_apps[\(i)]: needs app_id, client_id or url_schemes") }
                p.iosApps.append(app)
            }
        } else if dev { p.iosApps = ProjectSettings.devDefault().iosApps }
        for (i, a) in (j["android_apps"]?.arrayValue ?? []).enumerated() {
            guard let pkg = a["package_name"]?.stringValue, !pkg.isEmpty else { problems.append("\(pfx)android_apps[\(i)].package_name: required"); continue }
            let prints = (a["sha256_cert_fingerprints"]?.arrayValue ?? []).compactMap(\.stringValue)
            p.androidApps.append(AndroidApp(packageName: pkg, sha256Fingerprints: prints, appID: a["app_id"]?.stringValue,
                                            extraSchemes: (a["url_schemes"]?.arrayValue ?? []).compactMap(\.stringValue)))
        }
        if let tests = j["test_phone_numbers"] {
            if case let .object(nums) = tests {
                if nums.count > 10 { problems.append("\(pfx)test_phone_numbers: at most 10") }
                for (num, code) in nums {
                    guard num.hasPrefix("+"), num.dropFirst().allSatisfy(\.isNumber), (8...16).contains(num.count) else {
                        problems.append("\(pfx)test_phone_numbers: '\(num)' is not an E.164 number"); continue
                    }
                    guard let c = code.stringValue, c.count == 6, c.allSatisfy(\.isNumber) else {
                        problems.append("\(pfx)test_phone_numbers[\(num)]: the code must be 6 digits"); continue
                    }
                    p.testPhoneNumbers[num] = c
                }
            } else { problems.append("\(pfx)test_phone_numbers: expected an object of number → code") }
        }
        if j["sms_regions"] != nil {
            p.phone.allowedRegions = strings(j, "sms_regions", pfx, &problems).map { $0.uppercased() }
        } else {
            p.phone.allowedRegions = dev ? nil : []
        }
        if let l = c.str(j, "default_locale", &problems, prefix: pfx) { p.defaultLocale = l }
        if let d = c.str(j, "sms_origin_domain", &problems, prefix: pfx) { p.smsOriginDomain = d } else if let first = p.authorizedDomains.first {
            p.smsOriginDomain = first
        }
        if let m = c.str(j, "mfa", &problems, prefix: pfx) {
            if let state = MFAState(rawValue: m.uppercased()) { p.mfa = state } else {
                problems.append("\(pfx)mfa: expected DISABLED, ENABLED or MANDATORY")
            }
        }
        c.applyTOTP(project: j, into: &p, prefix: pfx, problems: &problems)
        c.applyPasskeys(project: j, into: &p, prefix: pfx, problems: &problems)
        c.applySignInNotice(project: j, into: &p, prefix: pfx, problems: &problems)
        if let ph = j["phone"] {
            let q = pfx + "phone."
            c.int(ph, "code_lifetime_seconds", 60...600, &problems, prefix: q).map { p.phone.codeLifetimeSeconds = Int64($0) }
            c.int(ph, "max_attempts_per_code", 1...10, &problems, prefix: q).map { p.phone.maxAttemptsPerSession = $0 }
            c.int(ph, "failure_budget_per_day", 1...100, &problems, prefix: q).map { p.phone.failureBudgetPerDay = $0 }
            c.int(ph, "sends_per_number_per_hour", 1...100, &problems, prefix: q).map { p.phone.sendsPerNumberPerHour = $0 }
            c.int(ph, "sends_per_number_per_day", 1...1000, &problems, prefix: q).map { p.phone.sendsPerNumberPerDay = $0 }
            c.int(ph, "sends_per_ip_per_hour", 1...10000, &problems, prefix: q).map { p.phone.sendsPerIPPerHour = $0 }
            c.int(ph, "verify_attempts_per_ip_per_5min", 1...10000, &problems, prefix: q).map { p.phone.verifyAttemptsPerIPPer5Min = $0 }
            Config.pumping(ph, prefix: q, into: &p.phone.pumping, problems: &problems)
            if ph["channels"] != nil {
                let names = Config.strings(ph, "channels", q, &problems)
                let channels = names.compactMap(PhoneChannel.init(rawValue:))
                if channels.count != names.count || Set(channels).count != channels.count || channels.first != .sms {
                    problems.append("\(q)channels: expected a list of sms, whatsapp and voice, each once, starting with sms (the API sends texts)")
                } else {
                    p.phone.channels = channels
                }
            }
            if let after = ph["fallback_after_seconds"] {
                if let n = after.int64Value, n == 0 || (20...600).contains(n) {
                    p.phone.fallbackAfterSeconds = n
                } else {
                    problems.append("\(q)fallback_after_seconds: expected 0 (no automatic fallback) or an integer in 20…600")
                }
            }
        }
        if let em = j["email_link"] {
            let q = pfx + "email_link."
            c.int(em, "link_lifetime_seconds", 300...86400, &problems, prefix: q).map { p.emailLink.linkLifetimeSeconds = Int64($0) }
            c.int(em, "sends_per_address_per_hour", 1...100, &problems, prefix: q).map { p.emailLink.sendsPerAddressPerHour = $0 }
            c.int(em, "sends_per_ip_per_hour", 1...10000, &problems, prefix: q).map { p.emailLink.sendsPerIPPerHour = $0 }
            if let b = em["enabled"]?.boolValue { p.emailLink.enabled = b }
        }
        if let av = j["app_verification"] { p.appVerification = appVerification(av, prefix: pfx, dev: dev, problems: &problems) }
        if let ps = j["push"] {
            let q = pfx + "push."
            let known: Set<String> = ["suggested_timeout_seconds", "receipt_lifetime_seconds", "sends_per_receipt",
                                      "verifications_per_ip_per_hour", "pushes_per_device_per_hour", "$comment"]
            if case let .object(pairs) = ps { for (k, _) in pairs where !known.contains(k) { problems.append("\(q)\(k): unknown key") } }
            c.int(ps, "suggested_timeout_seconds", 1...30, &problems, prefix: q).map { p.push.suggestedTimeoutSeconds = $0 }
            c.int(ps, "receipt_lifetime_seconds", 60...3600, &problems, prefix: q).map { p.push.receiptLifetimeSeconds = Int64($0) }
            c.int(ps, "sends_per_receipt", 1...10, &problems, prefix: q).map { p.push.sendsPerReceipt = $0 }
            c.int(ps, "verifications_per_ip_per_hour", 1...100_000, &problems, prefix: q).map { p.push.verificationsPerIPPerHour = $0 }
            c.int(ps, "pushes_per_device_per_hour", 1...1000, &problems, prefix: q).map { p.push.pushesPerDevicePerHour = $0 }
        }
        if let s = j["session"] {
            let q = pfx + "session."
            if let name = c.str(s, "cookie_name", &problems, prefix: q) { p.session.cookieName = name }
            if let d = c.str(s, "cookie_domain", &problems, prefix: q) { p.session.cookieDomain = d }
            c.int(s, "cookie_lifetime_seconds", 300...1_209_600, &problems, prefix: q).map { p.session.cookieLifetimeSeconds = Int64($0) }
            c.int(s, "idle_timeout_seconds", 60...1_209_600, &problems, prefix: q).map { p.session.idleTimeoutSeconds = Int64($0) }
            c.int(s, "recent_sign_in_seconds", 60...86_400, &problems, prefix: q).map { p.session.recentSignInSeconds = Int64($0) }
            c.int(s, "refresh_idle_timeout_seconds", 0...315_360_000, &problems, prefix: q).map { p.session.refreshIdleTimeoutSeconds = Int64($0) }
            c.int(s, "refresh_lifetime_seconds", 0...315_360_000, &problems, prefix: q).map { p.session.refreshLifetimeSeconds = Int64($0) }
            if p.session.cookieDomain == nil, !p.session.cookieName.hasPrefix("__Host-") {
                problems.append("\(q)cookie_name: without cookie_domain the name must start with __Host-")
            }
            if p.session.cookieDomain != nil, p.session.cookieName.hasPrefix("__Host-") {
                problems.append("\(q)cookie_name: a __Host- cookie cannot have a Domain; rename it or drop cookie_domain")
            }
        }
        if let signers = j["custom_token_signers"] {
            p.customTokenSigners = customTokenSigners(signers, prefix: pfx + "custom_token_signers", problems: &problems)
        }
        return p
    }

    // MARK: - Typed readers that record problems

    func str(_ j: JSON, _ key: String, _ problems: inout [String], prefix: String = "") -> String? {
        guard let v = j[key] else { return nil }
        guard let s = v.stringValue else { problems.append("\(prefix)\(key): expected a string"); return nil }
        return s
    }

    func int(_ j: JSON, _ key: String, _ range: ClosedRange<Int>, _ problems: inout [String], prefix: String = "") -> Int? {
        guard let v = j[key] else { return nil }
        guard let n = v.int64Value, range.contains(Int(n)) else {
            problems.append("\(prefix)\(key): expected an integer in \(range.lowerBound)…\(range.upperBound)"); return nil
        }
        return Int(n)
    }

    static func strings(_ j: JSON, _ key: String, _ prefix: String, _ problems: inout [String]) -> [String] {
        guard let v = j[key] else { return [] }
        guard let arr = v.arrayValue, arr.allSatisfy({ $0.stringValue != nil }) else {
            problems.append("\(prefix)\(key): expected an array of strings"); return []
        }
        return arr.compactMap(\.stringValue)
    }
}

extension Config {
    /// The project a command works on: `requested` (`--project`) when the configuration has it,
    /// else the first project; a project the configuration does not have is a usage error.
    func projectID(_ requested: String?) throws -> String {
        let pid = requested ?? projects[0].id
        guard projects.contains(where: { $0.id == pid }) else { throw UsageError("no project \(pid) in \(source)") }
        return pid
    }
}
