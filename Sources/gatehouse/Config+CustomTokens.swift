import AuthCrypto
import AuthEngine
import JSONValue

/// `projects[].custom_token_signers`: the service accounts whose custom tokens sign users in
/// (docs/migrating-from-firebase.md). Each names the account's email and where its public keys
/// are: Google's x509 metadata JSON for the account (`certificates_file`, key id → certificate,
/// as https://www.googleapis.com/robot/v1/metadata/x509/<email> serves it), one certificate
/// (`certificate_file`) or one public key (`public_key_file`, with an optional `key_id`).
extension Config {
    static let knownSignerKeys: Set<String> = ["service_account", "certificates_file", "certificate_file", "public_key_file", "key_id",
                                               "$comment"]

    static func customTokenSigners(_ j: JSON, prefix: String, problems: inout [String]) -> [CustomTokenSigner] {
        guard let list = j.arrayValue else { problems.append("\(prefix): expected an array"); return [] }
        var out: [CustomTokenSigner] = []
        for (i, s) in list.enumerated() {
            let q = "\(prefix)[\(i)]"
            guard case let .object(pairs) = s else { problems.append("\(q): expected an object"); continue }
            for (k, _) in pairs where !knownSignerKeys.contains(k) { problems.append("\(q).\(k): unknown key") }
            guard let email = s["service_account"]?.stringValue, email.contains("@"), email.utf8.count <= 320 else {
                problems.append("\(q).service_account: expected the service account's email")
                continue
            }
            var keys: [(kid: String?, key: RSAPublicKey)] = []
            func read(_ key: String) -> String? {
                guard let v = s[key] else { return nil }
                guard let path = v.stringValue, path.hasPrefix("/") else { problems.append("\(q).\(key): expected an absolute path"); return nil }
                do { return String(decoding: try readFile(path), as: UTF8.self) } catch {
                    problems.append("\(q).\(key): \(error)")
                    return nil
                }
            }
            if let text = read("certificates_file") {
                if let doc = try? JSONParser(maxBytes: 1 << 20, maxDepth: 4).parse(text), case let .object(certs) = doc, !certs.isEmpty {
                    for (kid, pem) in certs {
                        guard let pem = pem.stringValue, let key = try? RSAPublicKey(certificatePEM: pem) else {
                            problems.append("\(q).certificates_file: the certificate of key \(kid) is not an RSA certificate")
                            continue
                        }
                        keys.append((kid, key))
                    }
                } else {
                    problems.append("\(q).certificates_file: expected a JSON object of key id → certificate PEM")
                }
            }
            if let pem = read("certificate_file") {
                if let key = try? RSAPublicKey(certificatePEM: pem) { keys.append((s["key_id"]?.stringValue, key)) } else {
                    problems.append("\(q).certificate_file: not an RSA certificate PEM")
                }
            }
            if let pem = read("public_key_file") {
                if let key = try? RSAPublicKey(pem: pem) { keys.append((s["key_id"]?.stringValue, key)) } else {
                    problems.append("\(q).public_key_file: not an RSA public key PEM")
                }
            }
            if keys.isEmpty {
                problems.append("\(q): no key: set certificates_file, certificate_file or public_key_file")
                continue
            }
            out.append(CustomTokenSigner(serviceAccount: email, keys: keys))
        }
        return out
    }
}
