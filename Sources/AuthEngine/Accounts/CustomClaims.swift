import JSONValue

/// Custom claims (`customAttributes`, firebase-wire.md §3.1): a JSON object of at most 1000
/// characters whose names are not reserved token claims.
public enum CustomClaims {
    public static let maxLength = 1000
    /// In the order Firebase checks them (the first offending name is reported).
    public static let forbidden = ["iss", "aud", "sub", "iat", "exp", "nbf", "jti", "nonce", "azp", "acr", "amr", "cnf",
                                   "auth_time", "firebase", "at_hash", "c_hash", "user_id"]

    /// Validates `text`; returns what to store (nil for an empty object, which clears the claims).
    /// Too long → `CLAIMS_TOO_LARGE`; not a JSON object → `INVALID_CLAIMS`;
    /// a reserved name → `FORBIDDEN_CLAIM : <name>`.
    public static func validate(_ text: String) throws -> String? {
        guard text.utf16.count <= maxLength else { throw AuthError(.claimsTooLarge) }
        guard let parsed = try? JSONParser(maxBytes: 4 * maxLength, maxDepth: 16).parse(text), case let .object(pairs) = parsed else {
            throw AuthError(.invalidClaims)
        }
        for name in forbidden where pairs.contains(where: { $0.0 == name }) {
            throw AuthError(.forbiddenClaim, name)
        }
        return pairs.isEmpty ? nil : text
    }
}
