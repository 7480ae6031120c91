import AuthEngine

/// Which regions the hosted phone page's country list offers for a project: the regions the
/// project can text (`sms_regions`, `PhonePolicy.allowedRegions`) plus a region for each of its
/// test numbers, or every region when the project allows every region (nil: dev mode without
/// `sms_regions`).
extension PhonePage {
    /// One set of offered regions: `codes` nil means every region. `key` names the set in the
    /// options cache ("*" for every region, else the sorted codes).
    struct OfferedRegions: Sendable {
        let codes: Set<String>?
        let key: String
        static let every = OfferedRegions(codes: nil, key: "*")
        var isEmpty: Bool { codes?.isEmpty ?? false }
        func contains(_ region: String) -> Bool { codes?.contains(region) ?? true }
    }

    /// A project's region settings and what they offer. The look-up compares the settings with
    /// `==`, which for the copies a request holds of the configured arrays is an identity check.
    struct OfferedEntry {
        let allowed: [String]?
        let tests: [String: String]
        let offered: OfferedRegions
    }

    /// At most this many (settings → regions) entries are kept: they come from the configuration
    /// only, so this is never reached in practice; past it the set is computed per request.
    static let offeredCacheLimit = 32

    /// The regions the page offers for `project` (kept per project settings).
    static func offeredRegions(_ project: ProjectSettings, tables: RegionTables) -> OfferedRegions {
        guard let allowed = project.phone.allowedRegions else { return .every }
        let tests = project.testPhoneNumbers
        let hit = tables.offered.withLock { cache -> OfferedRegions? in
            for e in cache where e.allowed == allowed && e.tests == tests { return e.offered }
            return nil
        }
        if let hit { return hit }
        let built = offeredRegions(allowed: allowed, testNumbers: Array(tests.keys), tables: tables)
        tables.offered.withLock { cache in
            if cache.count < offeredCacheLimit {
                cache.append(OfferedEntry(allowed: allowed, tests: tests, offered: built))
            }
        }
        return built
    }

    /// The allowed regions the number parser knows, plus, for each test number whose calling code
    /// no listed region has, the main region of that calling code. The engine takes a test number
    /// whatever the allow-list, typed in full (`+…`, any region selected) or in national form
    /// under any region of its calling code (`PhoneSignIn.parse`): one such region makes it usable.
    static func offeredRegions(allowed: [String], testNumbers: [String], tables: RegionTables) -> OfferedRegions {
        let table = callingCodes(tables: tables)
        let codeOf = Dictionary(table.map { ($0.code, $0.callingCode) }, uniquingKeysWith: { a, _ in a })
        var codes = Set(allowed.map { $0.uppercased() }.filter { codeOf[$0] != nil })
        // Every region the page knows: the same list as when all are allowed, and the same cache entry.
        if codes.count == codeOf.count { return .every }
        var covered = Set(codes.compactMap { codeOf[$0] })
        let main = testNumbers.isEmpty ? [:] : mainRegions(tables: tables)
        let known = Set(codeOf.values)
        for number in testNumbers.sorted() {
            guard let cc = callingCode(of: number, known: known), !covered.contains(cc),
                  let region = main[cc] ?? table.first(where: { $0.callingCode == cc })?.code else { continue }
            codes.insert(region)
            covered.insert(cc)
        }
        return OfferedRegions(codes: codes, key: codes.sorted().joined(separator: ","))
    }

    /// The country calling code an E.164 number starts with (calling codes are prefix-free).
    static func callingCode(of number: String, known: Set<Int>) -> Int? {
        guard number.hasPrefix("+") else { return nil }
        let digits = number.dropFirst()
        for n in 1...3 where digits.count > n {
            if let cc = Int(digits.prefix(n)), known.contains(cc) { return cc }
        }
        return nil
    }

    /// The main region of each calling code several regions share (1 → US, 44 → GB), as
    /// libphonenumber names it: `<directory>/regions/main-regions.txt`, written with
    /// `calling-codes.txt` by `scripts/region-codes.sh`. Kept per process.
    static func mainRegions(tables: RegionTables) -> [Int: String] {
        if let hit = tables.main.withLock({ $0 }) { return hit }
        var table: [Int: String] = [:]
        if let bytes = ResourceFiles.read(tables.directory + "/regions/main-regions.txt") {
            for line in bytes.split(separator: UInt8(ascii: "\n")) where line.first != UInt8(ascii: "#") {
                let parts = line.split(separator: UInt8(ascii: "\t"))
                if parts.count == 2, let cc = Int(String(decoding: parts[0], as: UTF8.self)) {
                    table[cc] = String(decoding: parts[1], as: UTF8.self)
                }
            }
        }
        tables.main.withLock { $0 = table }
        return table
    }
}
