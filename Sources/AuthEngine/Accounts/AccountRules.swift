import AuthCrypto

/// Field rules shared by the account flows (firebase-wire.md §2.7, §2.9, §5.5).
enum AccountRules {
    static let noPasswords = AuthError(.operationNotAllowed, "Password sign-in is disabled for this project.")
    static let maxTextLength = 2048

    /// C0 and C1 control characters and DEL: never part of a uid, an address or display text
    /// (they travel in HTTP headers, mail headers and logs).
    static func isControl(_ s: Unicode.Scalar) -> Bool { s.value < 0x20 || (0x7F...0x9F).contains(s.value) }

    /// A uid: 1…128 bytes of UTF-8, no control characters (it travels in HTTP headers, and a token's
    /// `sub` is at most 128 bytes).
    static func checkLocalID(_ id: String) throws {
        guard !id.isEmpty, id.utf8.count <= 128, !id.unicodeScalars.contains(where: isControl) else {
            throw AuthError(.invalidArgument, "localId must be 1 to 128 characters without control characters")
        }
    }

    /// E.164 via libphonenumber: `INVALID_PHONE_NUMBER : Invalid format.` / `: TOO_SHORT` / `: TOO_LONG`.
    static func phone(_ raw: String) throws -> String {
        do { return try PhoneNumber(parsing: raw).e164 } catch {
            switch error {
            case .tooShort: throw AuthError(.invalidPhoneNumber, "TOO_SHORT")
            case .tooLong: throw AuthError(.invalidPhoneNumber, "TOO_LONG")
            case .invalidFormat: throw AuthError(.invalidPhoneNumber, "Invalid format.")
            }
        }
    }

    /// A plausible address, lower-cased (`INVALID_EMAIL` otherwise).
    static func email(_ raw: String) throws -> String {
        let e = raw.lowercased()
        let parts = e.split(separator: "@", omittingEmptySubsequences: false)
        guard e.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, !parts[1].isEmpty,
              !e.unicodeScalars.contains(where: { $0 == " " || isControl($0) || "<>()[]\\,;:\"".unicodeScalars.contains($0) }),
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].contains("..") else {
            throw AuthError(.invalidEmail)
        }
        return e
    }

    /// Optional display text: "" clears it; too long or with control characters → `INVALID_ARGUMENT`.
    static func text(_ raw: String?, _ field: String) throws -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard raw.utf8.count <= maxTextLength, !raw.unicodeScalars.contains(where: isControl) else {
            throw AuthError(.invalidArgument, "\(field) is too long or contains control characters")
        }
        return raw
    }

    /// `deleteAttribute[]` and `deleteProvider[]` as Firebase applies them.
    static func apply(deleteAttributes: [String], deleteProviders: [String], to a: inout Account) throws {
        for attr in deleteAttributes {
            switch attr {
            case "DISPLAY_NAME": a.displayName = nil
            case "PHOTO_URL": a.photoURL = nil
            case "EMAIL": a.email = nil; a.emailVerified = false; a.emailLinkSignin = false
            case "PASSWORD": a.passwordHash = nil
            case "USER_ATTRIBUTE_NAME_UNSPECIFIED": continue
            default: throw AuthError(.invalidArgument, "deleteAttribute: unknown attribute \(attr.prefix(40))")
            }
        }
        for p in deleteProviders {
            switch p {
            case "phone": a.phoneNumber = nil
            case "password": a.email = nil; a.emailVerified = false; a.emailLinkSignin = false; a.passwordHash = nil
            default: break
            }
            a.removeProvider(p)
        }
        normaliseProviders(&a)
    }

    /// Keeps `providerUserInfo` in step with the fields: a phone entry iff a phone number; the
    /// `password` entry (also email link's) follows the email and disappears without one.
    static func normaliseProviders(_ a: inout Account) {
        if let phone = a.phoneNumber {
            a.upsertProvider(ProviderInfo(providerID: "phone", rawID: phone, phoneNumber: phone))
        } else {
            a.removeProvider("phone")
        }
        if let email = a.email {
            if a.passwordHash != nil || a.emailLinkSignin || a.providers.contains(where: { $0.providerID == "password" }) {
                a.upsertProvider(ProviderInfo(providerID: "password", rawID: email, email: email, displayName: a.displayName,
                                              photoURL: a.photoURL))
            }
        } else {
            a.removeProvider("password")
        }
    }

    static func encodePageToken(_ localID: String) -> String { Base64URL.encode("u:" + localID) }

    static func decodePageToken(_ token: String) -> String? {
        guard token.utf8.count <= 400, let bytes = Base64URL.decode(token), let text = String(validating: bytes, as: UTF8.self),
              text.hasPrefix("u:") else { return nil }
        return String(text.dropFirst(2))
    }
}
