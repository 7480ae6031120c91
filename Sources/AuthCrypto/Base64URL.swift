/// Base64url without padding (RFC 4648 §5), as JWS (RFC 7515) uses it; also standard Base64.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let reverse: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        t[Int(UInt8(ascii: "+"))] = 62
        t[Int(UInt8(ascii: "/"))] = 63
        return t
    }()

    public static func encode(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: alphabet, pad: false) }
    public static func encode(_ text: String) -> String { encode(Array(text.utf8)) }
    /// Standard Base64 with padding (RFC 4648 §4).
    public static func encodeStandard(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: standardAlphabet, pad: true) }

    /// Written straight into the string's storage (one allocation, none below 16 characters).
    static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        let full = bytes.count / 3, rest = bytes.count % 3
        let length = full * 4 + (rest == 0 ? 0 : pad ? 4 : rest + 1)
        guard length > 0 else { return "" }
        return bytes.withUnsafeBufferPointer { src in
            alphabet.withUnsafeBufferPointer { a in
                String(unsafeUninitializedCapacity: length) { dst in
                    var i = 0, o = 0
                    while i + 3 <= src.count {
                        let n = UInt32(src[i]) << 16 | UInt32(src[i + 1]) << 8 | UInt32(src[i + 2])
                        dst[o] = a[Int(n >> 18 & 63)]; dst[o + 1] = a[Int(n >> 12 & 63)]
                        dst[o + 2] = a[Int(n >> 6 & 63)]; dst[o + 3] = a[Int(n & 63)]
                        i += 3; o += 4
                    }
                    if rest > 0 {
                        let n = UInt32(src[i]) << 16 | (rest == 2 ? UInt32(src[i + 1]) << 8 : 0)
                        dst[o] = a[Int(n >> 18 & 63)]; dst[o + 1] = a[Int(n >> 12 & 63)]
                        o += 2
                        if rest == 2 { dst[o] = a[Int(n >> 6 & 63)]; o += 1 }
                        if pad { while o < length { dst[o] = UInt8(ascii: "="); o += 1 } }
                    }
                    return o
                }
            }
        }
    }

    /// Decodes base64url or standard base64, padded or not; nil on any invalid character.
    public static func decode(_ text: String) -> [UInt8]? { decode(Substring(text)) }

    public static func decode(_ text: Substring) -> [UInt8]? { decode(bytes: text.utf8) }

    /// Decodes the UTF-8 bytes of base64url or standard base64 text, padded or not.
    public static func decode<C: BidirectionalCollection>(bytes text: C) -> [UInt8]? where C.Element == UInt8 {
        if let fast = text.withContiguousStorageIfAvailable({ decode(contiguous: $0) }) { return fast }
        var end = text.endIndex
        while end > text.startIndex, text[text.index(before: end)] == UInt8(ascii: "=") { text.formIndex(before: &end) }
        let u = text[text.startIndex..<end]
        let count = u.count
        guard count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        let ok: Bool = reverse.withUnsafeBufferPointer { table in
            for c in u {
                let v = table[Int(c)]
                guard v != 0xFF else { return false }
                acc = acc << 6 | UInt32(v)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    out.append(UInt8(acc >> UInt32(bits) & 0xFF))
                }
            }
            return true
        }
        return ok ? out : nil
    }

    /// Strict standard base64 (RFC 4648 §4) as a PEM body carries it: spaces and line breaks
    /// skipped, the other alphabet refused, padding only at the end and to a multiple of four
    /// characters, the bits past the last byte zero (one encoding per value); nil otherwise.
    public static func decodeStandard<C: Collection>(lines text: C) -> [UInt8]? where C.Element == UInt8 {
        var chars: [UInt8] = []
        chars.reserveCapacity(text.count)
        for c in text where !(c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09) {
            guard c != UInt8(ascii: "-"), c != UInt8(ascii: "_") else { return nil }
            chars.append(c)
        }
        var data = chars.count
        while data > 0, chars[data - 1] == UInt8(ascii: "=") { data -= 1 }
        guard chars.count % 4 == 0, chars.count - data <= 2 else { return nil }
        if data % 4 != 0 {
            // 2 characters carry 8 bits (4 spare), 3 carry 16 (2 spare).
            let spare: UInt8 = data % 4 == 2 ? 0x0F : 0x03
            guard reverse[Int(chars[data - 1])] & spare == 0 else { return nil }
        }
        return chars.withUnsafeBufferPointer { decode(contiguous: UnsafeBufferPointer(rebasing: $0[0..<data])) }
    }

    /// `decode(bytes:)` over contiguous bytes: four characters at a time into the final array.
    static func decode(contiguous text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var count = text.count
        while count > 0, text[count - 1] == UInt8(ascii: "=") { count -= 1 }
        guard count % 4 != 1 else { return nil }
        let outCount = count / 4 * 3 + (count % 4 == 0 ? 0 : count % 4 - 1)
        guard let src = text.baseAddress, outCount > 0 else { return [] }
        return reverse.withUnsafeBufferPointer { table -> [UInt8]? in
            var bad = false
            let out = [UInt8](unsafeUninitializedCapacity: outCount) { buf, initialized in
                let dst = buf.baseAddress!
                var i = 0, o = 0
                while i + 4 <= count {
                    let a = table[Int(src[i])], b = table[Int(src[i + 1])], c = table[Int(src[i + 2])], d = table[Int(src[i + 3])]
                    if (a | b | c | d) > 63 { bad = true; break }
                    let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    dst[o] = UInt8(truncatingIfNeeded: n >> 16)
                    dst[o + 1] = UInt8(truncatingIfNeeded: n >> 8)
                    dst[o + 2] = UInt8(truncatingIfNeeded: n)
                    i += 4; o += 3
                }
                if !bad, i < count {
                    var n: UInt32 = 0
                    for k in i..<count {
                        let v = table[Int(src[k])]
                        if v > 63 { bad = true; break }
                        n = n << 6 | UInt32(v)
                    }
                    if !bad {
                        if count - i == 2 { dst[o] = UInt8(truncatingIfNeeded: n >> 4); o += 1 }
                        else { dst[o] = UInt8(truncatingIfNeeded: n >> 10); dst[o + 1] = UInt8(truncatingIfNeeded: n >> 2); o += 2 }
                    }
                }
                initialized = bad ? 0 : o
            }
            return bad ? nil : out
        }
    }
}
