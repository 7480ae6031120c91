import AuthCrypto

/// Twilio's request signature (`X-Twilio-Signature`), as Twilio documents it for its callbacks:
/// base64 of HMAC-SHA1 under the account's auth token over the full URL Twilio called (as it was
/// configured, query included) followed, for a form POST, by every parameter's name and value,
/// the names in byte order (a repeated name's values in byte order too).
public enum TwilioSignature {
    public static func compute(authToken: String, url: String, params: [(String, String)]) -> String {
        var text = url
        for (name, value) in params.sorted(by: { $0.0 == $1.0 ? Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8))
                                                 : Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }) {
            text += name + value
        }
        return Base64URL.encodeStandard(Digest.hmacSHA1(key: Array(authToken.utf8), data: Array(text.utf8)))
    }

    /// Whether `signature` is the one Twilio would send (constant-time).
    public static func verify(_ signature: String?, authToken: String, url: String, params: [(String, String)]) -> Bool {
        guard let signature, !signature.isEmpty, signature.utf8.count <= 128 else { return false }
        return Digest.constantTimeEqual(signature, compute(authToken: authToken, url: url, params: params))
    }
}
