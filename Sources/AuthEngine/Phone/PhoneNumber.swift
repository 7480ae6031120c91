import CPhoneNumber

/// A phone number in E.164 form (`+33612345678`), validated by libphonenumber.
///
/// The only way to obtain one is ``init(parsing:defaultRegion:)``, so holding a
/// `PhoneNumber` means the number was possible *and* valid for its region when
/// it was parsed. Numbers loaded from storage are re-parsed from their E.164
/// form.
///
/// Phone numbers are personal data: ``description`` (and therefore string
/// interpolation, `print`, `dump` and `debugPrint`) only ever shows the
/// ``redacted`` form. Use ``e164`` explicitly when the full number is needed
/// (storage, SMS delivery).
public struct PhoneNumber: Hashable, Sendable, CustomStringConvertible {
    /// The number in E.164 form: "+", country calling code, national number, no separators.
    public let e164: String
    /// The ISO 3166-1 region the number belongs to ("FR"), "001" for
    /// non-geographic numbers (e.g. +800), "ZZ" if it cannot be determined.
    public let region: String
    /// The country calling code (33 for France, 1 for the NANP, 62 for Indonesia).
    public let countryCode: Int

    /// Parses and validates a phone number typed by a user.
    ///
    /// - Parameters:
    ///   - input: an international number ("+33 6 12 34 56 78", "+1 (650) 555-3434"),
    ///     or a national one ("06 12 34 56 78") when `defaultRegion` is given.
    ///     Spaces, dashes, dots and parentheses are accepted.
    ///   - defaultRegion: ISO region code used to interpret national numbers
    ///     (case-insensitive). `nil` or "" means the input must start with "+".
    /// - Throws: ``PhoneNumberError/tooShort`` or ``PhoneNumberError/tooLong`` when
    ///   the length cannot match any number of the region, otherwise
    ///   ``PhoneNumberError/invalidFormat`` (not a number, unknown country code,
    ///   missing "+" without a default region, or not a valid number).
    public init(parsing input: String, defaultRegion: String? = nil) throws(PhoneNumberError) {
        // C strings stop at NUL; refuse rather than silently validate a prefix.
        guard !input.utf8.contains(0) else { throw .invalidFormat }
        let region = defaultRegion.flatMap { $0.isEmpty ? nil : $0 } ?? "ZZ"
        guard !region.utf8.contains(0) else { throw .invalidFormat }

        var e164Buffer = [CChar](repeating: 0, count: Int(GH_PHONE_E164_CAPACITY) + 8)
        var regionBuffer = [CChar](repeating: 0, count: Int(GH_PHONE_REGION_CAPACITY))
        var countryCode: Int32 = 0
        let e164Capacity = e164Buffer.count
        let regionCapacity = regionBuffer.count
        let rc = input.withCString { inputPointer in
            region.withCString { regionPointer in
                gh_phone_parse(
                    inputPointer, regionPointer,
                    &e164Buffer, e164Capacity,
                    &regionBuffer, regionCapacity,
                    &countryCode
                )
            }
        }

        switch rc {
        case Self.code(GH_PHONE_OK):
            break
        case Self.code(GH_PHONE_TOO_SHORT):
            throw .tooShort
        case Self.code(GH_PHONE_TOO_LONG):
            throw .tooLong
        default:
            // GH_PHONE_INVALID_FORMAT, GH_PHONE_INVALID_COUNTRY_CODE, and the
            // "cannot happen" buffer / internal errors.
            throw .invalidFormat
        }

        let e164 = Self.string(from: e164Buffer)
        guard e164.hasPrefix("+"), countryCode > 0 else { throw .invalidFormat }
        let parsedRegion = Self.string(from: regionBuffer)
        self.e164 = e164
        self.region = parsedRegion.isEmpty ? "ZZ" : parsedRegion
        self.countryCode = Int(countryCode)
    }

    /// The number for logs: "+", the country code and the last two digits, with
    /// every other digit replaced by "•" (`+33612345678` → `+33•••••••78`).
    public var redacted: String {
        let digits = e164.dropFirst()  // drop "+"
        let prefix = String(countryCode)
        let national = digits.hasPrefix(prefix) ? digits.dropFirst(prefix.count) : digits[...]
        let kept = national.count > 2 ? national.suffix(2) : ""
        let hidden = national.count - kept.count
        return "+" + prefix + String(repeating: "•", count: hidden) + kept
    }

    /// The redacted form, so a number never leaks into logs by accident.
    public var description: String { redacted }

    // MARK: - Region metadata

    /// The country calling code of an ISO region ("FR" → 33, "ID" → 62), or
    /// `nil` if libphonenumber does not know the region.
    public static func countryCode(forRegion region: String) -> Int? {
        guard !region.isEmpty, !region.utf8.contains(0) else { return nil }
        let code = region.withCString { gh_phone_country_code_for_region($0) }
        return code > 0 ? Int(code) : nil
    }

    /// Every ISO region code libphonenumber has metadata for, sorted ("AC", "AD", …).
    public static var supportedRegions: [String] { cachedSupportedRegions }

    private static let cachedSupportedRegions: [String] = {
        var capacity = 4096
        while capacity <= 1 << 20 {
            var buffer = [CChar](repeating: 0, count: capacity)
            let count = gh_phone_supported_regions(&buffer, capacity)
            if count >= 0 {
                let joined = string(from: buffer)
                return joined.isEmpty ? [] : joined.split(separator: ",").map(String.init)
            }
            capacity *= 4
        }
        return []
    }()

    /// An example mobile number for a region in E.164 form (for placeholder
    /// text), or `nil` if the region is unknown or has none.
    public static func exampleNumber(forRegion region: String) -> String? {
        guard !region.isEmpty, !region.utf8.contains(0) else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(GH_PHONE_E164_CAPACITY) + 8)
        let capacity = buffer.count
        let length = region.withCString { gh_phone_example_number($0, &buffer, capacity) }
        guard length > 0 else { return nil }
        return string(from: buffer)
    }

    // MARK: - C helpers

    private static func code(_ result: gh_phone_result) -> Int32 {
        Int32(bitPattern: UInt32(result.rawValue))
    }

    /// Decodes a NUL-terminated buffer filled by the shim (ASCII only).
    private static func string(from buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension PhoneNumber: CustomDebugStringConvertible, CustomReflectable {
    /// `PhoneNumber(+33•••••••78)`; never the full number.
    public var debugDescription: String { "PhoneNumber(\(redacted))" }

    /// Keeps `dump()` and other reflection from printing ``e164``.
    public var customMirror: Mirror {
        Mirror(self, children: ["redacted": redacted, "region": region], displayStyle: .struct)
    }
}

/// Why a string was rejected as a ``PhoneNumber``.
public enum PhoneNumberError: Error, Equatable {
    /// Not a phone number, an unknown country code, a national number without a
    /// default region, or a number that is not valid for its region.
    case invalidFormat
    /// Too few digits for any number of the region.
    case tooShort
    /// Too many digits for any number of the region.
    case tooLong
}
