import AuthEngine
@testable import AuthWeb
import Testing

/// The phone page's country list offers the regions the project can text, plus a region for each
/// test number, or every region when the project allows every region.
@Suite("Phone page offered regions")
struct PhonePageOfferedRegionsTests {
    static func project(_ allowed: [String]?, tests: [String: String] = [:]) -> ProjectSettings {
        var p = ProjectSettings(id: "p", testPhoneNumbers: tests)
        p.phone.allowedRegions = allowed
        return p
    }

    static func codes(_ options: PhonePage.CountryOptions) -> [String] {
        String(decoding: options.html, as: UTF8.self).split(separator: "\n").map { line in
            String(line.split(separator: "\"")[1])
        }
    }

    @Test("every region when the project allows every region (nil)")
    func every() throws {
        let dir = try #require(Templates.bundledDirectory)
        let tables = RegionTables(directory: dir)
        let offered = PhonePage.offeredRegions(Self.project(nil), tables: tables)
        #expect(offered.codes == nil && offered.key == "*")
        let all = PhonePage.countryOptions(lang: "en", offered: offered, tables: tables)
        #expect(Self.codes(all) == PhonePage.countries(lang: "en", tables: tables).map(\.code))
        #expect(Self.codes(all).count == 245)
        // Every region listed one by one is the same set, and the same cached list.
        let listed = PhonePage.callingCodes(tables: tables).map(\.code)
        #expect(PhonePage.offeredRegions(allowed: listed, testNumbers: ["+15555550100"], tables: tables).key == "*")
    }

    @Test("the allowed regions the parser knows, in the page language's name order")
    func allowed() throws {
        let dir = try #require(Templates.bundledDirectory)
        let tables = RegionTables(directory: dir)
        let offered = PhonePage.offeredRegions(allowed: ["de", "FR", "XX", "001", "ES"], testNumbers: [], tables: tables)
        #expect(offered.codes == ["DE", "FR", "ES"] && offered.key == "DE,ES,FR")
        #expect(Self.codes(PhonePage.countryOptions(lang: "en", offered: offered, tables: tables)) == ["FR", "DE", "ES"])
        #expect(Self.codes(PhonePage.countryOptions(lang: "de", offered: offered, tables: tables)) == ["DE", "FR", "ES"])
        #expect(Self.codes(PhonePage.countryOptions(lang: "fr", offered: offered, tables: tables)) == ["DE", "ES", "FR"])
        let en = String(decoding: PhonePage.countryOptions(lang: "en", offered: offered, tables: tables).html, as: UTF8.self)
        #expect(en == "<option value=\"FR\">France (+33)</option>\n<option value=\"DE\">Germany (+49)</option>\n<option value=\"ES\">Spain (+34)</option>\n")
    }

    @Test("a test number adds the main region of its calling code unless a listed region has that code")
    func testNumbers() throws {
        let dir = try #require(Templates.bundledDirectory)
        let tables = RegionTables(directory: dir)
        let tests = ["+15555550100", "+447700900123", "+6281234567890", "+79001234567"]
        #expect(PhonePage.offeredRegions(allowed: [], testNumbers: tests, tables: tables).codes == ["US", "GB", "ID", "RU"])
        // Canada shares +1: a +1 test number typed in national form works with CA selected.
        #expect(PhonePage.offeredRegions(allowed: ["CA"], testNumbers: ["+15555550100"], tables: tables).codes == ["CA"])
        #expect(PhonePage.offeredRegions(allowed: ["JE"], testNumbers: ["+447700900123", "+33612345678"], tables: tables).codes == ["JE", "FR"])
        #expect(PhonePage.offeredRegions(allowed: [], testNumbers: [], tables: tables).isEmpty)
        let none = PhonePage.countryOptions(lang: "en", offered: PhonePage.offeredRegions(allowed: [], testNumbers: [], tables: tables), tables: tables)
        #expect(none.first == nil && none.html.isEmpty)
    }

    @Test("the main regions are libphonenumber's, one for every calling code regions share")
    func mainRegions() throws {
        let dir = try #require(Templates.bundledDirectory)
        let tables = RegionTables(directory: dir)
        let main = PhonePage.mainRegions(tables: tables)
        let table = PhonePage.callingCodes(tables: tables)
        let shared = Dictionary(grouping: table, by: \.callingCode).filter { $0.value.count > 1 }
        #expect(Set(main.keys) == Set(shared.keys))
        for (cc, region) in main {
            #expect(PhoneNumber.countryCode(forRegion: region) == cc, "\(cc) → \(region)")
            // libphonenumber parses a number of the calling code's main region back to that region
            // when it is valid there; the main region is the one the library names for the code.
            #expect(table.contains { $0.code == region && $0.callingCode == cc })
        }
        #expect(main[1] == "US" && main[44] == "GB" && main[7] == "RU")
    }

    @Test("the preselected region is marked when listed; the caches stay bounded")
    func selectionAndBounds() throws {
        let dir = try #require(Templates.bundledDirectory)
        let tables = RegionTables(directory: dir)
        let offered = PhonePage.offeredRegions(allowed: ["FR", "DE"], testNumbers: [], tables: tables)
        let list = PhonePage.countryOptions(lang: "en", offered: offered, tables: tables)
        #expect(list.first == "FR" && list.selectAt["US"] == nil)
        let html = MustacheRenderer.render([.variable(MustachePath("o"), escaped: false)], stack: [["o": PhonePage.options(list, selected: "DE")]])
        #expect(String(decoding: html, as: UTF8.self).contains("<option value=\"DE\" selected>Germany (+49)</option>"))
        // Settings kept per project: the same arrays give the same set; many distinct settings do
        // not grow the caches past their limits.
        let p = Self.project(["FR"], tests: ["+15555550100": "123456"])
        #expect(PhonePage.offeredRegions(p, tables: tables).key == "FR,US")
        for i in 0..<(PhonePage.offeredCacheLimit + 5) {
            let q = Self.project(["FR"], tests: ["+1555555\(String(1000 + i))": "123456"])
            #expect(PhonePage.offeredRegions(q, tables: tables).key == "FR,US")
        }
        #expect(tables.offeredCount <= PhonePage.offeredCacheLimit)
        let regions = PhonePage.callingCodes(tables: tables).map(\.code)
        for i in 0..<(PhonePage.optionsCacheLimit + 5) {
            let one = PhonePage.offeredRegions(allowed: [regions[i % regions.count]], testNumbers: [], tables: tables)
            #expect(PhonePage.countryOptions(lang: "en", offered: one, tables: tables).first == regions[i % regions.count])
        }
        #expect(tables.optionsCount <= PhonePage.optionsCacheLimit)
    }
}
