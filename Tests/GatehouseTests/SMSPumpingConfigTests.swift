import AuthEngine
import Foundation
@testable import gatehouse
import JSONValue
import Testing

@Suite("Configuration: SMS pumping protection")
struct SMSPumpingConfigTests {
    func load(_ phone: String) throws -> (Config, [String]) {
        let path = NSTemporaryDirectory() + "gh-pumping-\(UInt64.random(in: 0...UInt64.max)).json"
        try """
        {"mode": "dev", "projects": [{"id": "demo-gatehouse", "phone": \(phone)}]}
        """.write(toFile: path, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return Config.load(path: path, environment: [:])
    }

    @Test("the keys are read under phone; without them the bounded defaults apply")
    func keys() throws {
        let (c, problems) = try load("""
        {"sms_per_project_per_day": 5000, "sms_per_region_per_hour": 300, "sms_per_prefix_per_hour": 40,
         "sms_prefix_dropped_digits": 3, "sms_hold_factor": 8, "sms_hold_min_prefix_per_hour": 12,
         "sms_hold_min_region_per_hour": 60, "sms_hold_hours": 24}
        """)
        #expect(problems.isEmpty, "\(problems)")
        var expected = SMSPumpingPolicy()
        expected.smsPerProjectPerDay = 5000; expected.smsPerRegionPerHour = 300; expected.smsPerPrefixPerHour = 40
        expected.prefixDroppedDigits = 3; expected.holdFactor = 8; expected.holdMinPrefixPerHour = 12
        expected.holdMinRegionPerHour = 60; expected.holdHours = 24
        #expect(c.projects[0].phone.pumping == expected)
        let (d, none) = try load("{}")
        #expect(none.isEmpty && d.projects[0].phone.pumping == SMSPumpingPolicy())
    }

    @Test("values out of range, and hold minimums above their budget, are problems")
    func problems() throws {
        let (_, problems) = try load("""
        {"sms_per_project_per_day": 0, "sms_prefix_dropped_digits": 9, "sms_hold_factor": 1, "sms_hold_hours": -1,
         "sms_per_prefix_per_hour": 5, "sms_hold_min_prefix_per_hour": 6,
         "sms_per_region_per_hour": 20, "sms_hold_min_region_per_hour": 21}
        """)
        let text = problems.joined(separator: "\n")
        for needle in ["phone.sms_per_project_per_day: expected an integer in 1…10000000", "phone.sms_prefix_dropped_digits: expected an integer in 2…6",
                       "phone.sms_hold_factor: expected an integer in 2…1000", "phone.sms_hold_hours: expected an integer in 0…720",
                       "phone.sms_hold_min_prefix_per_hour: at most sms_per_prefix_per_hour (5)",
                       "phone.sms_hold_min_region_per_hour: at most sms_per_region_per_hour (20)"] {
            #expect(text.contains(needle), "missing problem: \(needle)\n\(text)")
        }
    }
}
