import AuthEngine
import JSONValue

/// `projects[].phone.sms_*`: SMS pumping protection (docs/configuration-phone.md).
extension Config {
    static func pumping(_ ph: JSON, prefix q: String, into p: inout SMSPumpingPolicy, problems: inout [String]) {
        let c = Config()
        c.int(ph, "sms_per_project_per_day", 1...10_000_000, &problems, prefix: q).map { p.smsPerProjectPerDay = $0 }
        c.int(ph, "sms_per_region_per_hour", 1...1_000_000, &problems, prefix: q).map { p.smsPerRegionPerHour = $0 }
        c.int(ph, "sms_per_prefix_per_hour", 1...100_000, &problems, prefix: q).map { p.smsPerPrefixPerHour = $0 }
        c.int(ph, "sms_prefix_dropped_digits", 2...6, &problems, prefix: q).map { p.prefixDroppedDigits = $0 }
        c.int(ph, "sms_hold_factor", 2...1000, &problems, prefix: q).map { p.holdFactor = $0 }
        c.int(ph, "sms_hold_min_prefix_per_hour", 1...100_000, &problems, prefix: q).map { p.holdMinPrefixPerHour = $0 }
        c.int(ph, "sms_hold_min_region_per_hour", 1...1_000_000, &problems, prefix: q).map { p.holdMinRegionPerHour = $0 }
        c.int(ph, "sms_hold_hours", 0...720, &problems, prefix: q).map { p.holdHours = $0 }
        // A refused send is not counted, so a minimum above the budget could never be reached.
        if p.holdMinPrefixPerHour > p.smsPerPrefixPerHour {
            problems.append("\(q)sms_hold_min_prefix_per_hour: at most sms_per_prefix_per_hour (\(p.smsPerPrefixPerHour)), or no prefix is ever held")
        }
        if p.holdMinRegionPerHour > p.smsPerRegionPerHour {
            problems.append("\(q)sms_hold_min_region_per_hour: at most sms_per_region_per_hour (\(p.smsPerRegionPerHour)), or no region is ever held")
        }
    }
}
