import AuthCrypto

/// The server keys of the short codes beside email links, derived from one 32-byte secret
/// (`SecretStore` name `email-code`) generated on first use and shared by every instance, as
/// the phone codes' keys are (`PhoneKeys`). A copy of `email_links` alone gives neither a code
/// (six digits would fall to a plain hash in a million tries) nor a binding secret (an app's
/// `emailCodeBinding` is the app's choice and may be weak): both are HMACs under this secret.
struct EmailCodeKeys {
    let codeKey: HMACKey
    let bindingKey: HMACKey

    static let secretName = "email-code"

    static func load(store: any SecretStore, random: any RandomSource, at now: Millis) throws -> EmailCodeKeys {
        let secret = try store.secret(named: secretName) ?? store.insertSecretIfAbsent(named: secretName, value: random.bytes(32), at: now)
        // Two derivations per use: codes are asked for and typed far less often than a phone
        // page is drawn, so no cache of prepared keys is kept.
        return EmailCodeKeys(codeKey: HMACKey(Digest.hmacSHA256(key: secret, "email-code-digits")),
                             bindingKey: HMACKey(Digest.hmacSHA256(key: secret, "email-code-binding")))
    }

    /// The keyed hash of `code`, bound to its link (the hash of the link's oobCode), so that the
    /// same digits sent for two requests hash differently and one request's code is no other's.
    func codeHash(_ code: String, link: [UInt8]) -> [UInt8] {
        var message = link
        message.append(UInt8(ascii: "|"))
        message += code.utf8
        return codeKey.mac(message)
    }

    /// The keyed hash of a binding secret (the hosted page's pending cookie or an app's own).
    func bindingHash(_ secret: String) -> [UInt8] { bindingKey.mac(secret) }
}
