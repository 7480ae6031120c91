#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 times in UTC, the one writer and reader of them: `2026-11-22T01:59:44.123Z` (the wire's
/// `lastRefreshAt` and `enrolledAt`, the JSON log), or to the second (the CLI's listings).
public enum RFC3339 {
    public static func format(_ ms: Millis, fraction: Bool = true) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        var t = time_t(seconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        func pad(_ v: Int32, _ n: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, n - s.count)) + s }
        let text = "\(pad(tm.tm_year + 1900, 4))-\(pad(tm.tm_mon + 1, 2))-\(pad(tm.tm_mday, 2))T\(pad(tm.tm_hour, 2)):\(pad(tm.tm_min, 2)):\(pad(tm.tm_sec, 2))"
        return fraction ? text + ".\(pad(Int32(ms - seconds * 1000), 3))Z" : text + "Z"
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff…]Z` (UTC, as the Admin SDKs write times) in milliseconds; nil
    /// for anything else or a time before 1970 or after 9999.
    public static func parse(_ text: String) -> Millis? {
        let b = Array(text.utf8)
        guard b.count >= 20, b.count <= 40, b.last == UInt8(ascii: "Z") else { return nil }
        func num(_ r: Range<Int>) -> Int64? {
            var v: Int64 = 0
            for i in r { guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }; v = v * 10 + Int64(b[i] - 0x30) }
            return v
        }
        guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"),
              b[16] == UInt8(ascii: ":"), let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13),
              let mi = num(14..<16), let s = num(17..<19), y >= 1970, (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        var ms: Int64 = 0
        if b.count > 20 {
            let digits = b.count - 21
            guard b[19] == UInt8(ascii: "."), (1...9).contains(digits), let frac = num(20..<(b.count - 1)) else { return nil }
            ms = digits >= 3 ? frac / pow10(digits - 3) : frac * pow10(3 - digits)
        } else if b[19] != UInt8(ascii: "Z") {
            return nil
        }
        // Days from the civil date (proleptic Gregorian), without the C library's time zone.
        let yy = mo <= 2 ? y - 1 : y
        let era = yy / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return ((days * 86_400 + h * 3600 + mi * 60 + s) * 1000) + ms
    }

    private static func pow10(_ n: Int) -> Int64 { var v: Int64 = 1; for _ in 0..<min(n, 18) { v *= 10 }; return v }
}
