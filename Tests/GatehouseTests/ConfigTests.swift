import AuthEngine
import Foundation
@testable import gatehouse
import JSONValue
import Testing

@Suite("Configuration")
struct ConfigTests {
    func write(_ json: String) throws -> String {
        let path = NSTemporaryDirectory() + "gh-config-\(UInt64.random(in: 0...UInt64.max)).json"
        try json.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test("with no file the embedded default is dev mode for demo-gatehouse with the demo iOS app")
    func embeddedDefault() {
        let (c, problems) = Config.load(path: nil, environment: [:])
        #expect(problems.isEmpty)
        #expect(c.mode == .dev)
        #expect(c.projects.map(\.id) == ["demo-gatehouse"])
        #expect(c.projects[0].iosApps.first?.schemes == ["app-1-123456789-ios-abcdef0123456789"])
        #expect(c.projects[0].authorizedDomains == ["localhost", "127.0.0.1"])
    }

    @Test("every problem of a bad file is reported at once")
    func everyProblem() throws {
        let path = try write("""
        {"mode": "production", "colour": "blue", "listen": {"workers": 0, "socket_mode": "999"},
         "projects": [{"id": "bad id!", "test_phone_numbers": {"+16505550100": "12", "12": "123456"},
                       "phone": {"code_lifetime_seconds": 5000}, "session": {"cookie_name": "plain"}}],
         "sms": {"provider": "dev"}}
        """)
        let (_, problems) = Config.load(path: path, environment: [:])
        let text = problems.joined(separator: "\n")
        for needle in ["unknown key 'colour'", "listen.workers", "listen.socket_mode", "projects[0].id", "the code must be 6 digits",
                       "not an E.164 number", "code_lifetime_seconds", "cookie_name", "admin_token", "public_origin",
                       "is a dev-only setting", "api_keys"] {
            #expect(text.contains(needle), "missing problem: \(needle)\n\(text)")
        }
    }

    @Test("log.format and log.level, metrics.enabled; bad values and unknown keys are problems")
    func operations() throws {
        let (c, problems) = Config.load(path: try write(#"{"log": {"format": "json", "level": "warning"}, "metrics": {"enabled": false}}"#),
                                        environment: [:])
        #expect(problems.isEmpty)
        #expect(c.logFormat == .json && c.logLevel == .warning && !c.metricsEnabled)
        #expect(Config().logFormat == .text && Config().metricsEnabled)
        let (_, bad) = Config.load(path: try write(#"{"log": {"format": "xml", "colour": 1}, "metrics": {"enabled": "yes"}}"#), environment: [:])
        let text = bad.joined(separator: "\n")
        for needle in ["log.format", "log.colour: unknown key", "metrics.enabled"] { #expect(text.contains(needle), "\(needle): \(text)") }
    }

    @Test("a valid production file passes and environment variables override it")
    func production() throws {
        let path = try write("""
        {"mode": "production", "public_origin": "https://auth.example.com", "admin_token": "\(String(repeating: "k", count: 40))",
         "listen": {"socket": "/run/gatehouse/gatehouse.sock"},
         "projects": [{"id": "shop", "api_keys": ["AIzaKey"], "authorized_domains": ["shop.example.com"],
                       "sms_regions": ["fr", "DE"], "test_phone_numbers": {"+16505550100": "123456"}}],
         "sms": {"provider": "command", "command": "/usr/local/bin/send-sms"},
         "email": {"transport": "sendmail", "from": "sign-in@example.com", "command": ["/bin/cat"]}}
        """)
        let (c, problems) = Config.load(path: path, environment: ["GATEHOUSE_WORKERS": "3", "GATEHOUSE_DATA_DIR": "/var/lib/gatehouse"])
        #expect(problems.isEmpty, "\(problems)")
        #expect(c.mode == .production && c.workers == 3 && c.dataDir == "/var/lib/gatehouse")
        #expect(c.projects[0].phone.allowedRegions == ["FR", "DE"])
        #expect(c.projects[0].testPhoneNumbers["+16505550100"] == "123456")
        #expect(!c.projects[0].devMode)
    }

    @Test("a TCP listener off loopback needs listen.trusted_network; phone guesses per number are capped; cookie names are checked")
    func securityChecks() throws {
        func problems(_ json: String) throws -> [String] { Config.load(path: try write(json), environment: [:]).1 }
        #expect(try problems(#"{"listen": {"tcp": "0.0.0.0:9000"}}"#).contains { $0.hasPrefix("listen.tcp: 0.0.0.0:9000 is not a loopback address") })
        #expect(try problems(#"{"listen": {"tcp": "0.0.0.0:9000", "trusted_network": true}}"#).isEmpty)
        for ok in ["127.0.0.1:9000", "localhost:9000", "[::1]:9000"] {
            #expect(try problems(#"{"listen": {"tcp": "\#(ok)"}}"#).isEmpty, "\(ok)")
        }
        #expect(try problems(#"{"projects": [{"id": "p", "phone": {"sends_per_number_per_day": 20}}]}"#)
            .contains { $0.contains("sends_per_number_per_day × max_attempts_per_code must be at most 50") })
        #expect(try problems(#"{"projects": [{"id": "p", "session": {"cookie_name": "__Host-a b"}}]}"#)
            .contains { $0.contains("cookie_name: not a valid cookie name") })
        let (c, _) = Config.load(path: try write(#"{"limits": {"ipv6_prefix_bits": 56, "block_factor": 4}}"#), environment: [:])
        #expect(c.projects.allSatisfy { $0.network.ipv6PrefixBits == 56 && $0.network.wideFactor == 4 })
    }

    @Test("listen.max_import_body_bytes: the admin import's own body limit, 4 MiB unless set, 1 KiB…64 MiB")
    func importBodyLimit() throws {
        #expect(Config.load(path: nil, environment: [:]).0.maxImportBodyBytes == 4 << 20)
        let (c, problems) = Config.load(path: try write(#"{"listen": {"max_body_bytes": 32768, "max_import_body_bytes": 8388608}}"#), environment: [:])
        #expect(problems.isEmpty, "\(problems)")
        #expect(c.maxBodyBytes == 32768 && c.maxImportBodyBytes == 8 << 20)
        for bad in ["512", "67108865", "\"big\""] {
            let (_, p) = Config.load(path: try write(#"{"listen": {"max_import_body_bytes": \#(bad)}}"#), environment: [:])
            #expect(p.contains { $0.hasPrefix("listen.max_import_body_bytes: expected an integer in 1024…67108864") }, "\(bad): \(p)")
        }
    }

    @Test("malformed JSON is reported with its position")
    func malformed() throws {
        let (_, problems) = Config.load(path: try write("{\"mode\": }"), environment: [:])
        #expect(problems.count == 1 && problems[0].contains("invalid JSON"))
    }

    @Test("a missing file is reported")
    func missing() {
        let (_, problems) = Config.load(path: "/nonexistent/gatehouse.json", environment: [:])
        #expect(problems.first?.contains("cannot read") == true)
    }
}
