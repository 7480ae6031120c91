@testable import AuthWeb
import Testing

/// The phone page's preselected region from `Accept-Language`: the byte-level reading of ASCII
/// headers answers as the reading over characters it replaced.
@Suite("Phone page default region")
struct PhonePageRegionTests {
    /// The reading before (over characters), without the locale fallback.
    static func reference(_ header: String, directory: String) -> String? {
        let usual = ["en": "US", "fr": "FR", "de": "DE", "pt": "BR", "id": "ID", "es": "ES", "it": "IT", "nl": "NL", "ja": "JP"]
        for part in header.split(separator: ",") {
            let tag = Locales.trimmed(part.split(separator: ";").first ?? "")
            let subtags = tag.split(whereSeparator: { $0 == "-" || $0 == "_" })
            if let region = subtags.dropFirst().first(where: { $0.count == 2 }).flatMap({ PhonePage.knownRegion(String($0), directory: directory) }) { return region }
            if let first = subtags.first, let region = usual[first.lowercased()] { return region }
        }
        return nil
    }

    @Test("the same region as before for a range of headers")
    func sameAnswers() throws {
        let dir = try #require(Templates.bundledDirectory)
        let headers = ["", "en", "EN", "fr", "pt-BR", "pt_br", " de-AT ;q=0.8", "zz, fr-CA", "en-us,en;q=0.9", "x-ZZ, nl",
                       "--en--GB", "en-GBR-ca", "ja;q=0.5 , es", ",,;,", "sr-Latn-RS", "zh-Hant-TW", "\tid\t", "q=1", "en-", "-gb",
                       "fr-zz-BE", "de-1996-CH", "it-IT-x-private", "*", "en-gb;q=0, fr"]
        for h in headers {
            #expect(PhonePage.asciiRegion(h, directory: dir) == Self.reference(h, directory: dir), "header \(h)")
        }
    }
}
