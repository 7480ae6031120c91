import AuthEngine
import Foundation
@testable import AuthWeb
import Testing

/// `Resources/regions/<lang>.txt` against what Foundation's ICU says at test time: when a
/// toolchain brings other CLDR names, this fails and `scripts/region-names.swift` is run again.
@Suite("Region names")
struct RegionNamesTests {
    /// The country list as the page built it with Foundation's ICU.
    static func foundationCountries(lang: String) -> [PhonePage.Country] {
        let locale = Locale(identifier: lang)
        return PhoneNumber.supportedRegions.compactMap { code -> (String, PhonePage.Country)? in
            guard let cc = PhoneNumber.countryCode(forRegion: code) else { return nil }
            let name = locale.localizedString(forRegionCode: code) ?? code
            return (name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: locale),
                    PhonePage.Country(code: code, label: "\(name) (+\(cc))"))
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    @Test("the calling-code file says what the installed libphonenumber says")
    func callingCodes() throws {
        let dir = try #require(Templates.bundledDirectory)
        let tables = RegionTables(directory: dir)
        let file = try #require(ResourceFiles.text(dir + "/regions/calling-codes.txt"))
        let rows = file.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: "\t").map(String.init) }
        let live = PhoneNumber.supportedRegions.compactMap { r in PhoneNumber.countryCode(forRegion: r).map { [r, String($0)] } }
        #expect(rows == live)
        #expect(PhonePage.callingCodes(tables: tables).map { [$0.code, String($0.callingCode)] } == live)
    }

    @Test("the region files give the list Foundation gives", arguments: ["en", "fr", "de", "pt", "id"])
    func countries(lang: String) throws {
        let dir = try #require(Templates.bundledDirectory)
        let tables = RegionTables(directory: dir)
        let ours = PhonePage.countries(lang: lang, tables: tables)
        let theirs = Self.foundationCountries(lang: lang)
        #expect(ours.map(\.code) == theirs.map(\.code))
        #expect(ours.map(\.label) == theirs.map(\.label))
    }
}
