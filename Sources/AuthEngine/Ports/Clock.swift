#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCrypto

/// Milliseconds since the Unix epoch: the engine's one time unit at rest and in flows.
public typealias Millis = Int64

/// Time is a parameter: flows ask this port, tests pass a fixed clock.
public protocol Clock: Sendable {
    func now() -> Millis
}

extension Clock {
    public var nowSeconds: Int64 { now() / 1000 }
}

/// The real clock (`clock_gettime(CLOCK_REALTIME)`).
public struct SystemClock: Clock {
    public init() {}
    public func now() -> Millis {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

/// Randomness is a parameter: every secret comes from here; tests pass a seeded source.
public protocol RandomSource: Sendable {
    func bytes(_ count: Int) -> [UInt8]
}

extension RandomSource {
    /// `count` characters of base64url (unguessable identifiers: sessionInfo, oobCode, tokens).
    public func token(bytes count: Int) -> String { Base64URL.encode(bytes(count)) }

    /// A decimal code of `digits` digits, uniform, leading zeros kept.
    public func digits(_ digits: Int) -> String {
        var out = ""
        while out.count < digits {
            for b in bytes(16) where b < 250 && out.count < digits { out.append(Character(String(b % 10))) }
        }
        return out
    }

    /// A 28-character alphanumeric user id, as Firebase's look.
    public func userID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var out = ""
        while out.count < 28 {
            for b in bytes(32) where b < 248 && out.count < 28 { out.append(alphabet[Int(b) % 62]) }
        }
        return out
    }
}

/// The real CSPRNG (OpenSSL `RAND_bytes`).
public struct SystemRandom: RandomSource {
    public init() {}
    public func bytes(_ count: Int) -> [UInt8] { SecureRandom.bytes(count) }
}
