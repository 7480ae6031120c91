/// How per-client limits see an address (gatehouse.md "Limits"; docs/security.md).
public struct NetworkPolicy: Sendable, Equatable {
    /// An IPv6 client holds at least a /64 (SLAAC and privacy addresses rotate inside it), so a
    /// budget keyed on the full address would give one machine 2⁶⁴ budgets.
    public var ipv6PrefixBits = 64
    /// The looser tier: one provider's block, whatever addresses it rotates through.
    public var ipv4WidePrefixBits = 24
    public var ipv6WidePrefixBits = 48
    /// The wide tier allows this many times the per-client budget.
    public var wideFactor = 8
    public init() {}
}

/// The network keys of one request's address: `narrow` is the client (IPv4 /32, IPv6 /64 by
/// default), `wide` its block (IPv4 /24, IPv6 /48). An IPv4-mapped IPv6 address counts as IPv4.
/// A value that is not an IP address (a unix socket peer, an empty string) is its own key on
/// both tiers.
public struct ClientAddress: Sendable, Equatable {
    public let narrow: String
    public let wide: String
    /// How many times a client's budget its block gets (`NetworkPolicy.wideFactor`).
    public let wideFactor: Int

    public init(_ remote: String, policy: NetworkPolicy = NetworkPolicy()) {
        wideFactor = max(1, policy.wideFactor)
        if let v4 = ClientAddress.ipv4(Substring(remote)) {
            narrow = ClientAddress.key(v4, bits: 32, family: "4")
            wide = ClientAddress.key(v4, bits: policy.ipv4WidePrefixBits, family: "4")
        } else if let v6 = ClientAddress.ipv6(remote) {
            if v6.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) {
                let v4 = Array(v6.suffix(4))
                narrow = ClientAddress.key(v4, bits: 32, family: "4")
                wide = ClientAddress.key(v4, bits: policy.ipv4WidePrefixBits, family: "4")
            } else {
                narrow = ClientAddress.key(v6, bits: policy.ipv6PrefixBits, family: "6")
                wide = ClientAddress.key(v6, bits: policy.ipv6WidePrefixBits, family: "6")
            }
        } else {
            narrow = "?" + remote.prefix(64)
            wide = narrow
        }
    }

    /// `4:c0000207/32`: the address masked to `bits`, in hex.
    static func key(_ bytes: [UInt8], bits: Int, family: String) -> String {
        let bits = min(max(bits, 0), bytes.count * 8)
        var out = family + ":"
        let hex = Array("0123456789abcdef".utf8)
        for (i, b) in bytes.enumerated() {
            let keep = min(max(bits - i * 8, 0), 8)
            let masked = keep == 0 ? 0 : b & ~(UInt8(0xFF) >> keep)
            out.unicodeScalars.append(Unicode.Scalar(hex[Int(masked >> 4)]))
            out.unicodeScalars.append(Unicode.Scalar(hex[Int(masked & 0xF)]))
        }
        return out + "/" + String(bits)
    }

    /// Dotted quad, each part 0…255 in decimal.
    static func ipv4(_ s: Substring) -> [UInt8]? {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for p in parts {
            guard (1...3).contains(p.utf8.count), p.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = UInt8(p) else { return nil }
            out.append(n)
        }
        return out
    }

    /// The parts between `::` separators (one part when there is none).
    static func splitAtDoubleColons(_ s: Substring) -> [Substring] {
        var parts: [Substring] = []
        var start = s.startIndex
        var i = s.startIndex
        while i < s.endIndex {
            let next = s.index(after: i)
            if s[i] == ":", next < s.endIndex, s[next] == ":" {
                parts.append(s[start..<i])
                start = s.index(after: next)
                i = start
            } else {
                i = next
            }
        }
        parts.append(s[start...])
        return parts
    }

    /// RFC 4291 text form: up to 8 groups of 1–4 hex digits, one `::`, an optional dotted-quad
    /// tail, an optional `%zone` (ignored).
    static func ipv6(_ text: String) -> [UInt8]? {
        var s = Substring(text)
        if let pct = s.firstIndex(of: "%") { s = s[..<pct] }
        guard s.contains(":"), s.utf8.count <= 45 else { return nil }
        var head: [UInt16] = [], tail: [UInt16] = []
        var sawGap = false
        let halves = ClientAddress.splitAtDoubleColons(s)
        guard halves.count <= 2 else { return nil }
        sawGap = halves.count == 2
        func groups(_ part: Substring, allowV4: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var out: [UInt16] = []
            let items = part.split(separator: ":", omittingEmptySubsequences: false)
            for (i, item) in items.enumerated() {
                if allowV4, i == items.count - 1, item.contains(".") {
                    guard let v4 = ipv4(item) else { return nil }
                    out.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    out.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                    continue
                }
                guard (1...4).contains(item.utf8.count), let g = UInt16(item, radix: 16) else { return nil }
                out.append(g)
            }
            return out
        }
        guard let h = groups(halves[0], allowV4: !sawGap) else { return nil }
        head = h
        if sawGap {
            guard let t = groups(halves[1], allowV4: true) else { return nil }
            tail = t
            guard head.count + tail.count <= 7 else { return nil }
        } else {
            guard head.count == 8 else { return nil }
        }
        let all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        var bytes: [UInt8] = []
        for g in all { bytes.append(UInt8(g >> 8)); bytes.append(UInt8(g & 0xFF)) }
        return bytes
    }
}
