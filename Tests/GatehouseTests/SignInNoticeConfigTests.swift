import AuthEngine
import Foundation
@testable import gatehouse
import JSONValue
import Testing

@Suite("Configuration: the new sign-in notice")
struct SignInNoticeConfigTests {
    func load(_ notice: String?) throws -> (Config, [String]) {
        let path = NSTemporaryDirectory() + "gh-notice-\(UInt64.random(in: 0...UInt64.max)).json"
        let section = notice.map { ", \"new_sign_in_notice\": \($0)" } ?? ""
        try """
        {"mode": "dev", "projects": [{"id": "demo-gatehouse"\(section)}]}
        """.write(toFile: path, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return Config.load(path: path, environment: [:])
    }

    @Test("off by default; enabled and the daily budget read per project")
    func keys() throws {
        let (d, none) = try load(nil)
        #expect(none.isEmpty && d.projects[0].signInNotice == SignInNoticePolicy(enabled: false, perAccountPerDay: 3))
        let (c, problems) = try load(#"{"enabled": true, "per_account_per_day": 5}"#)
        #expect(problems.isEmpty, "\(problems)")
        #expect(c.projects[0].signInNotice == SignInNoticePolicy(enabled: true, perAccountPerDay: 5))
    }

    @Test("unknown keys, wrong types and budgets out of range are problems")
    func problems() throws {
        let (_, problems) = try load(#"{"enabled": "yes", "per_account_per_day": 0, "per_day": 3}"#)
        #expect(problems.contains { $0.contains("new_sign_in_notice.enabled") }, "\(problems)")
        #expect(problems.contains { $0.contains("new_sign_in_notice.per_account_per_day") }, "\(problems)")
        #expect(problems.contains { $0.contains("new_sign_in_notice.per_day: unknown key") }, "\(problems)")
        let (_, notObject) = try load("true")
        #expect(notObject.contains { $0.contains("new_sign_in_notice: expected an object") }, "\(notObject)")
    }
}
