import COpenSSL

/// AES-256-GCM (NIST SP 800-38D) for secrets that must be read back (TOTP secrets): sealed under
/// a key kept outside the database, so a copy of the database alone reveals none. A box is
/// `nonce (12) ‖ ciphertext ‖ tag (16)`; the nonce is random per seal (at most 2³² seals per key
/// keep the collision risk negligible); `aad` binds a box to what it is for (its owner, its use).
public enum SealedBox {
    public static let keyLength = 32
    static let nonceLength = 12
    static let tagLength = 16
    /// The most a box holds, and the most `aad` may be: every length then fits OpenSSL's `Int32`.
    static let maxLength = 1 << 16

    public static func seal(_ plaintext: [UInt8], key: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        guard key.count == keyLength else { throw CryptoError(operation: "AES-256-GCM", detail: "the key must be 32 bytes") }
        guard plaintext.count <= maxLength, aad.count <= maxLength else {
            throw CryptoError(operation: "AES-256-GCM", detail: "at most \(maxLength) bytes of plaintext and of associated data")
        }
        let nonce = SecureRandom.bytes(nonceLength)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError.fromOpenSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var len: Int32 = 0, total: Int32 = 0
        var tag = [UInt8](repeating: 0, count: tagLength)
        // GCM is a stream mode: Final writes nothing, but is given a buffer of its own all the same.
        var tail = [UInt8](repeating: 0, count: 16)
        let ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, key, nonce) == 1
            && (aad.isEmpty || EVP_EncryptUpdate(ctx, nil, &len, aad, Int32(aad.count)) == 1)
            && EVP_EncryptUpdate(ctx, &out, &len, plaintext, Int32(plaintext.count)) == 1
        guard ok else { throw CryptoError.fromOpenSSL("AES-256-GCM seal") }
        total = len
        guard EVP_EncryptFinal_ex(ctx, &tail, &len) == 1, len == 0,
              EVP_CIPHER_CTX_ctrl(ctx, GH_EVP_CTRL_GCM_GET_TAG, Int32(tagLength), &tag) == 1,
              total >= 0, Int(total) <= out.count else {
            throw CryptoError.fromOpenSSL("AES-256-GCM seal")
        }
        return nonce + out[..<Int(total)] + tag
    }

    /// The plaintext, or nil when the box was not sealed under `key` and `aad` or was altered.
    public static func open(_ box: [UInt8], key: [UInt8], aad: [UInt8]) -> [UInt8]? {
        guard key.count == keyLength, box.count >= nonceLength + tagLength, box.count <= maxLength, aad.count <= maxLength else { return nil }
        let nonce = Array(box[..<nonceLength])
        let cipher = Array(box[nonceLength..<(box.count - tagLength)])
        var tag = Array(box[(box.count - tagLength)...])
        guard let ctx = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: cipher.count + 16)
        var tail = [UInt8](repeating: 0, count: 16)
        var len: Int32 = 0
        guard EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, key, nonce) == 1,
              aad.isEmpty || EVP_DecryptUpdate(ctx, nil, &len, aad, Int32(aad.count)) == 1,
              EVP_DecryptUpdate(ctx, &out, &len, cipher, Int32(cipher.count)) == 1 else { return nil }
        let total = len
        guard EVP_CIPHER_CTX_ctrl(ctx, GH_EVP_CTRL_GCM_SET_TAG, Int32(tagLength), &tag) == 1 else { return nil }
        // Final checks the tag (and, GCM being a stream mode, writes nothing).
        guard EVP_DecryptFinal_ex(ctx, &tail, &len) == 1, len == 0, total >= 0, Int(total) <= out.count else { return nil }
        return Array(out[..<Int(total)])
    }
}

/// Base32 (RFC 4648 §6, upper case, no padding): how authenticator apps take a TOTP secret.
public enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0, bits = 0
        for b in bytes {
            buffer = buffer << 8 | UInt32(b)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int(buffer >> UInt32(bits - 5) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Upper or lower case, spaces and padding ignored; nil on any other character.
    public static func decode(_ text: String) -> [UInt8]? {
        var out = [UInt8]()
        var buffer: UInt32 = 0, bits = 0
        for c in text.utf8 where c != UInt8(ascii: " ") && c != UInt8(ascii: "=") {
            let v: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = c - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = c - UInt8(ascii: "a")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): v = c - UInt8(ascii: "2") + 26
            default: return nil
            }
            buffer = buffer << 5 | UInt32(v)
            bits += 5
            if bits >= 8 {
                out.append(UInt8(buffer >> UInt32(bits - 8) & 0xFF))
                bits -= 8
            }
        }
        return out
    }
}

extension Digest {
    /// HMAC-SHA-1 (RFC 2104): what RFC 6238 TOTP codes are, as authenticator apps compute them.
    public static func hmacSHA1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var len: UInt32 = 0
        let p = HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &out, &len)
        precondition(p != nil && len == 20, "HMAC(SHA-1) failed")
        return out
    }
}
