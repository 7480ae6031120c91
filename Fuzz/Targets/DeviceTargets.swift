import AuthCrypto
@testable import AuthEngine

/// What a sign-in's request says about its device (anyone sends any `User-Agent` and, through a
/// proxy, any address text), and the new sign-in notice's link token, which anyone can type.
enum DeviceTargets {
    /// Fields: user agent, remote address, a notice link token.
    /// - `DeviceName`: names printable ASCII of at most 40 characters, the key three fields;
    /// - `SignInDevice`: the user agent kept printable ASCII, at most `maxUserAgent` bytes, and
    ///   its name the same as the raw text's cut the same way; the network nil or a /24 or /48;
    /// - `SignInNotice.parts`: a token it reads names a project and uid without line breaks and
    ///   re-encodes to itself (one token per link).
    static let userAgent = FuzzTarget(name: "user-agent") { data in
        let f = fields(data, 3)
        let name = DeviceName(userAgent: f[0])
        for part in [name.browser, name.system].compactMap({ $0 }) {
            expect(!part.isEmpty && part.utf8.count <= DeviceName.maxNameLength && part.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F },
                   "device name part \(part.debugDescription)")
        }
        expect(name.key.split(separator: "|", omittingEmptySubsequences: false).count == 3, "device key \(name.key.debugDescription)")

        let device = SignInDevice(userAgent: f[0], remoteAddress: f[1])
        if let ua = device.userAgent {
            expect(!ua.isEmpty && ua.utf8.count <= SignInDevice.maxUserAgent && ua.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F },
                   "kept user agent \(ua.debugDescription)")
        }
        if let network = device.network {
            expect(network.hasSuffix(".0/24") || network.hasSuffix("::/48"), "network \(network.debugDescription)")
        }
        _ = device.key
        if verbose { print("user-agent: \(name) \(device.network ?? "-")") }

        if let p = SignInNotice.parts(f[2]) {
            expect(!p.project.contains("\n") && !p.localID.contains("\n"), "a link naming a line break")
            let again = SignInNotice.tokenPrefix + Base64URL.encode(Array(p.payload.utf8)) + "." + Base64URL.encode(p.mac)
            expect(again == f[2], "the link token does not re-encode to itself")
        }
    }
}
