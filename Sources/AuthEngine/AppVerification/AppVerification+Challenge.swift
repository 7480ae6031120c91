import AuthCrypto
public import JSONValue

/// A proof-of-work challenge in ALTCHA's v1 format, as `GET /__/auth/challenge` serves it:
/// `challenge = hex(SHA-256(salt + decimal(number)))` for a secret `number` in `0...maxNumber`,
/// `signature = hex(HMAC-SHA-256(key, challenge))`, and `salt` = random hex, then
/// `?expires=<unix seconds>[&scope=<binding>]`, ending with `&` (so nothing can be spliced on).
public struct PowChallenge: Sendable, Equatable {
    public static let algorithm = "SHA-256"
    public let challenge: String
    public let maxNumber: Int
    public let salt: String
    public let signature: String

    public init(challenge: String, maxNumber: Int, salt: String, signature: String) {
        self.challenge = challenge; self.maxNumber = maxNumber; self.salt = salt; self.signature = signature
    }

    /// `{algorithm, challenge, maxnumber, salt, signature}` (the wire names of ALTCHA v1).
    public var json: JSON {
        .obj(("algorithm", PowChallenge.algorithm), ("challenge", challenge), ("maxnumber", maxNumber), ("salt", salt),
             ("signature", signature))
    }

    /// Builds a challenge for a chosen `number` (the flow draws it from the CSPRNG).
    public static func make(key: [UInt8], nonce: [UInt8], number: Int, maxNumber: Int, expiresAt seconds: Int64,
                            scope: String?) -> PowChallenge {
        var salt = Hex.encode(nonce) + "?expires=\(seconds)"
        if let scope { salt += "&scope=" + scope }
        salt += "&"
        let challenge = Hex.encode(Digest.sha256(salt + String(number)))
        return PowChallenge(challenge: challenge, maxNumber: maxNumber, salt: salt,
                            signature: Hex.encode(Digest.hmacSHA256(key: key, challenge)))
    }
}

/// A solution as the browser (or any ALTCHA v1 client) submits it: base64 of the JSON
/// `{algorithm, challenge, number, salt, signature}`.
public struct PowSolution: Sendable, Equatable {
    public let algorithm: String
    public let challenge: String
    public let number: Int
    public let salt: String
    public let signature: String

    public init(algorithm: String = PowChallenge.algorithm, challenge: String, number: Int, salt: String, signature: String) {
        self.algorithm = algorithm; self.challenge = challenge; self.number = number; self.salt = salt; self.signature = signature
    }

    public static let maxPayloadLength = 2048
    public static let maxSaltLength = 512
    /// Far above any difficulty Gatehouse issues; only bounds the work of checking.
    public static let maxNumber = 1_000_000_000

    /// Decodes a base64 (standard or url-safe) payload; nil when it is not a well-formed solution.
    public init?(payload: String) {
        guard !payload.isEmpty, payload.utf8.count <= PowSolution.maxPayloadLength,
              let bytes = Base64URL.decode(payload.trimmedWhitespace),
              let json = try? JSONParser(maxBytes: PowSolution.maxPayloadLength, maxDepth: 2).parse(bytes),
              let algorithm = json["algorithm"]?.stringValue,
              let challenge = json["challenge"]?.stringValue,
              let salt = json["salt"]?.stringValue,
              let signature = json["signature"]?.stringValue,
              case let .number(n)? = json["number"], n.rounded() == n, n >= 0, n <= Double(PowSolution.maxNumber),
              salt.utf8.count <= PowSolution.maxSaltLength, challenge.utf8.count <= 128, signature.utf8.count <= 128
        else { return nil }
        self.init(algorithm: algorithm, challenge: challenge, number: Int(n), salt: salt, signature: signature)
    }

    /// The base64 payload (what a client would send).
    public var payload: String {
        Base64URL.encodeStandard(JSON.obj(("algorithm", algorithm), ("challenge", challenge), ("number", number), ("salt", salt),
                                          ("signature", signature)).bytes)
    }

    /// What the salt says about the challenge: its expiry and optional scope. Exactly one
    /// `expires` (digits only) is required; repeated parameters are refused, so the parameters
    /// read here are the ones the signature covers.
    public struct SaltParameters: Equatable, Sendable {
        public let expires: Int64
        public let scope: String?
    }

    public var saltParameters: SaltParameters? {
        guard let q = salt.firstIndex(of: "?") else { return nil }
        var expires: Int64?
        var scope: String?
        var seen = Set<Substring>()
        for pair in salt[salt.index(after: q)...].split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, seen.insert(parts[0]).inserted else { return nil }
            switch parts[0] {
            case "expires":
                guard (1...12).contains(parts[1].count), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
                expires = Int64(parts[1])
            case "scope":
                scope = String(parts[1])
            default:
                continue
            }
        }
        guard let expires else { return nil }
        return SaltParameters(expires: expires, scope: scope)
    }

    /// Checks hash and signature against `key` without early exits on secret-dependent data;
    /// both digests are compared in constant time.
    public func isAuthentic(key: [UInt8]) -> Bool {
        var salted = salt
        if !salted.hasSuffix("&") { salted += "&" }
        let expected = Hex.encode(Digest.sha256(salted + String(number)))
        let expectedSignature = Hex.encode(Digest.hmacSHA256(key: key, expected))
        let hashOK = Digest.constantTimeEqual(expected, challenge)
        let signatureOK = Digest.constantTimeEqual(expectedSignature, signature)
        return (algorithm == PowChallenge.algorithm) && hashOK && signatureOK
    }

    /// The replay-table key: the challenge digest itself (32 bytes).
    public var challengeID: [UInt8] { Hex.decode(challenge) ?? Digest.sha256(challenge) }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    var trimmedWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\r" || f == "\n" || f == "\r\n" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" || l == "\n" || l == "\r\n" { s = s.dropLast() }
        return String(s)
    }
}
