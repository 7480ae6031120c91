import AuthCrypto

/// The device a sign-in comes from, as the account page lists it and the new sign-in notice
/// compares it: the request's user agent (cut, control characters dropped) and its network as
/// a coarse prefix (IPv4 /24, IPv6 /48: enough to tell home from elsewhere, never the address).
public struct SignInDevice: Sendable, Equatable {
    public static let maxUserAgent = 256
    public let userAgent: String?
    public let network: String?

    public init(userAgent: String?, remoteAddress: String?) {
        self.userAgent = SignInDevice.clean(userAgent)
        self.network = remoteAddress.flatMap(ClientAddress.coarsePrefix)
    }

    public init(storedUserAgent: String?, network: String?) { userAgent = storedUserAgent; self.network = network }

    public var name: DeviceName { DeviceName(userAgent: userAgent) }

    /// What "a device the account has not used before" compares: browser, system and kind (no
    /// versions: an update is the same device) and the network block.
    public var key: String { name.key + "|" + (network ?? "?") }

    /// The hash `user_devices` keeps (per account: the same device is a row per account).
    public var keyHash: [UInt8] { Digest.sha256("gatehouse-device|" + key) }

    /// Printable ASCII only, at most `maxUserAgent` bytes; nil when nothing is left.
    static func clean(_ raw: String?) -> String? {
        guard let raw else { return nil }
        var out = ""
        for b in raw.utf8.prefix(maxUserAgent * 4) where b >= 0x20 && b < 0x7F {
            out.unicodeScalars.append(Unicode.Scalar(b))
            if out.utf8.count == maxUserAgent { break }
        }
        let trimmed = out.trimmedWhitespace
        return trimmed.isEmpty ? nil : trimmed
    }
}

extension ClientAddress {
    /// `203.0.113.0/24`, `2001:db8:1::/48`: the block of an address, written as people read
    /// prefixes; nil for what is not an IP address. An IPv4-mapped IPv6 address is IPv4.
    public static func coarsePrefix(_ remote: String) -> String? {
        if let v4 = ipv4(Substring(remote)) { return v4Prefix(v4) }
        guard let v6 = ipv6(remote) else { return nil }
        if v6.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) { return v4Prefix(Array(v6.suffix(4))) }
        let hex = Array("0123456789abcdef".utf8)
        var groups: [String] = []
        for g in 0..<3 {
            let v = UInt16(v6[2 * g]) << 8 | UInt16(v6[2 * g + 1])
            var text = ""
            var started = false
            for shift in stride(from: 12, through: 0, by: -4) {
                let nibble = Int((v >> UInt16(shift)) & 0xF)
                if nibble != 0 || started || shift == 0 {
                    started = true
                    text.unicodeScalars.append(Unicode.Scalar(hex[nibble]))
                }
            }
            groups.append(text)
        }
        while groups.count > 1, groups.last == "0" { groups.removeLast() }
        return groups.joined(separator: ":") + "::/48"
    }

    static func v4Prefix(_ b: [UInt8]) -> String { "\(b[0]).\(b[1]).\(b[2]).0/24" }
}
