import Testing
@testable import AuthEngine

@Suite("PhoneNumber")
struct PhoneNumberTests {
    // MARK: Parsing valid numbers

    @Test("An international US number with separators normalises to E.164")
    func internationalUSNumber() throws {
        let number = try PhoneNumber(parsing: "+1 650-555-3434")
        #expect(number.e164 == "+16505553434")
        #expect(number.region == "US")
        #expect(number.countryCode == 1)
    }

    @Test("A national number is interpreted with the default region")
    func nationalNumberWithDefaultRegion() throws {
        let number = try PhoneNumber(parsing: "06 12 34 56 78", defaultRegion: "FR")
        #expect(number.e164 == "+33612345678")
        #expect(number.region == "FR")
        #expect(number.countryCode == 33)
    }

    @Test("The default region is matched case-insensitively")
    func lowercaseDefaultRegion() throws {
        let number = try PhoneNumber(parsing: "06 12 34 56 78", defaultRegion: "fr")
        #expect(number.e164 == "+33612345678")
    }

    @Test("An international number ignores the default region")
    func internationalNumberIgnoresDefaultRegion() throws {
        let number = try PhoneNumber(parsing: "+33 6 12 34 56 78", defaultRegion: "DE")
        #expect(number.e164 == "+33612345678")
        #expect(number.region == "FR")
    }

    @Test(
        "Mobile numbers from several countries are accepted",
        arguments: [
            ("+49 151 23456789", "+4915123456789", "DE", 49),
            ("+351 912 345 678", "+351912345678", "PT", 351),
            ("+62 812-3456-789", "+628123456789", "ID", 62),
            ("+62 812 3456 7890", "+6281234567890", "ID", 62),
        ]
    )
    func mobileNumbers(input: String, e164: String, region: String, countryCode: Int) throws {
        let number = try PhoneNumber(parsing: input)
        #expect(number.e164 == e164)
        #expect(number.region == region)
        #expect(number.countryCode == countryCode)
    }

    @Test("Equal numbers written differently are equal and hash alike")
    func equalityIgnoresFormatting() throws {
        let a = try PhoneNumber(parsing: "+33 6 12 34 56 78")
        let b = try PhoneNumber(parsing: "06.12.34.56.78", defaultRegion: "FR")
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
    }

    // MARK: Rejections

    @Test("Numbers with too few digits are rejected as too short", arguments: ["+1 650", "+1 650 555", "+33 1 23"])
    func tooShort(input: String) {
        #expect(throws: PhoneNumberError.tooShort) { try PhoneNumber(parsing: input) }
    }

    @Test("Numbers with too many digits are rejected as too long", arguments: ["+33 6 12 34 56 78 90 12 34", "+1 650 555 34345"])
    func tooLong(input: String) {
        #expect(throws: PhoneNumberError.tooLong) { try PhoneNumber(parsing: input) }
    }

    @Test("Garbage input is rejected as an invalid format", arguments: ["abc", "", "+", "   ", "++33"])
    func garbage(input: String) {
        #expect(throws: PhoneNumberError.invalidFormat) { try PhoneNumber(parsing: input) }
    }

    @Test("An unknown country calling code is rejected as an invalid format")
    func invalidCountryCode() {
        #expect(throws: PhoneNumberError.invalidFormat) { try PhoneNumber(parsing: "+999 1234567") }
    }

    @Test("A national number without a default region is rejected as an invalid format")
    func nationalNumberWithoutRegion() {
        #expect(throws: PhoneNumberError.invalidFormat) { try PhoneNumber(parsing: "06 12 34 56 78") }
        #expect(throws: PhoneNumberError.invalidFormat) { try PhoneNumber(parsing: "06 12 34 56 78", defaultRegion: "") }
        #expect(throws: PhoneNumberError.invalidFormat) { try PhoneNumber(parsing: "06 12 34 56 78", defaultRegion: "XX") }
    }

    @Test("A number of plausible length in an unassigned range is rejected as an invalid format")
    func unassignedRange() {
        // NANP area code 555 does not exist, so the fictional +1 555 555 0100 is not valid.
        #expect(throws: PhoneNumberError.invalidFormat) { try PhoneNumber(parsing: "+1 555 555 0100") }
    }

    @Test("An embedded NUL byte is rejected instead of validating the prefix")
    func embeddedNul() {
        #expect(throws: PhoneNumberError.invalidFormat) { try PhoneNumber(parsing: "+33612345678\u{0}junk") }
    }

    // MARK: Redaction

    @Test("Redaction keeps the plus sign, country code and last two digits")
    func redaction() throws {
        #expect(try PhoneNumber(parsing: "+33 6 12 34 56 78").redacted == "+33•••••••78")
        #expect(try PhoneNumber(parsing: "+1 650-555-3434").redacted == "+1••••••••34")
        #expect(try PhoneNumber(parsing: "+351 912 345 678").redacted == "+351•••••••78")
    }

    @Test("Printing a number never reveals the full number")
    func descriptionIsRedacted() throws {
        let number = try PhoneNumber(parsing: "+33 6 12 34 56 78")
        #expect(number.description == "+33•••••••78")
        #expect("\(number)" == "+33•••••••78")
        #expect(!String(reflecting: number).contains("612345678"))
        #expect(!"\([number])".contains("612345678"))
        var dumped = ""
        dump(number, to: &dumped)
        #expect(!dumped.contains("612345678"))
    }

    // MARK: Region metadata

    @Test("Country calling codes are looked up by region")
    func countryCodeForRegion() {
        #expect(PhoneNumber.countryCode(forRegion: "ID") == 62)
        #expect(PhoneNumber.countryCode(forRegion: "FR") == 33)
        #expect(PhoneNumber.countryCode(forRegion: "us") == 1)
        #expect(PhoneNumber.countryCode(forRegion: "XX") == nil)
        #expect(PhoneNumber.countryCode(forRegion: "") == nil)
    }

    @Test("Supported regions are sorted ISO codes including the launch countries")
    func supportedRegions() {
        let regions = PhoneNumber.supportedRegions
        for region in ["FR", "DE", "PT", "ID", "US"] {
            #expect(regions.contains(region))
        }
        #expect(regions == regions.sorted())
        // libphonenumber 8.12.57 (Debian 12) knows 245 regions, as listed in Sources/AuthWeb/Resources/regions/calling-codes.txt.
        #expect(regions.count == 245)
        #expect(regions.allSatisfy { $0.count == 2 })
    }

    @Test("Example numbers are valid E.164 mobile numbers of their region")
    func exampleNumbers() throws {
        for region in ["FR", "DE", "PT", "ID", "US"] {
            let example = try #require(PhoneNumber.exampleNumber(forRegion: region))
            let parsed = try PhoneNumber(parsing: example)
            #expect(parsed.e164 == example)
            #expect(parsed.region == region)
        }
        #expect(PhoneNumber.exampleNumber(forRegion: "XX") == nil)
    }

    // MARK: Concurrency

    @Test("Parsing is safe from many tasks at once")
    func concurrentParsing() async {
        let inputs = ["+33 6 12 34 56 78", "+49 151 23456789", "+351 912 345 678", "+62 812-3456-789", "+1 650"]
        let results = await withTaskGroup(of: String.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let input = inputs[i % inputs.count]
                    return (try? PhoneNumber(parsing: input))?.e164 ?? "error"
                }
            }
            var collected: [String] = []
            for await result in group { collected.append(result) }
            return collected
        }
        #expect(results.count == 200)
        #expect(results.filter { $0 == "+33612345678" }.count == 40)
        #expect(results.filter { $0 == "error" }.count == 40)
    }
}
