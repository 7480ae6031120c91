import COpenSSL

/// The CSPRNG (OpenSSL `RAND_bytes`). Every secret Gatehouse makes comes from here.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return out }
        // RAND_bytes failing means the process has no entropy source: continuing would be unsafe.
        guard RAND_bytes(&out, Int32(count)) == 1 else {
            preconditionFailure("RAND_bytes failed: \(CryptoError.fromOpenSSL("RAND_bytes"))")
        }
        return out
    }

    /// A uniformly random integer in `0..<upperBound` (rejection sampling, no modulo bias).
    public static func uniform(_ upperBound: UInt64) -> UInt64 {
        precondition(upperBound > 0)
        let limit = UInt64.max - (UInt64.max % upperBound)
        while true {
            let b = bytes(8)
            let v = b.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if v < limit { return v % upperBound }
        }
    }
}
