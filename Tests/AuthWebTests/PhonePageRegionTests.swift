@testable import AuthWeb
import Testing

/// The phone page's preselected region from `Accept-Language`, read over the bytes of ASCII
/// headers: the first known two-letter region subtag of the first tag that has one, else the
/// usual region of the tag's language.
@Suite("Phone page default region")
struct PhonePageRegionTests {
    @Test("the region each header gives", arguments: [
        ("", nil), ("en", "US"), ("EN", "US"), ("fr", "FR"), ("pt-BR", "BR"), ("pt_br", "BR"), (" de-AT ;q=0.8", "AT"),
        ("zz, fr-CA", "CA"), ("en-us,en;q=0.9", "US"), ("x-ZZ, nl", "NL"), ("--en--GB", "GB"), ("en-GBR-ca", "CA"),
        ("ja;q=0.5 , es", "JP"), (",,;,", nil), ("sr-Latn-RS", "RS"), ("zh-Hant-TW", "TW"), ("\tid\t", "ID"), ("q=1", nil),
        ("en-", "US"), ("-gb", nil), ("fr-zz-BE", "FR"), ("de-1996-CH", "CH"), ("it-IT-x-private", "IT"), ("*", nil),
        // q=0 is not read: the first tag still decides.
        ("en-gb;q=0, fr", "GB"),
    ] as [(String, String?)])
    func region(header: String, expected: String?) throws {
        let dir = try #require(Templates.bundledDirectory)
        #expect(PhonePage.asciiRegion(header, tables: RegionTables(directory: dir)) == expected)
    }
}
