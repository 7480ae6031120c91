import AuthCrypto

/// Fixed signature vectors made by another implementation than the one verifying, shared by the
/// crypto and engine tests: Python's `cryptography` 48.0.0 (`rsa.generate_private_key(65537,
/// 2048)` signing `message` with PKCS#1 v1.5 and SHA-256; `ec.generate_private_key(SECP256R1)`
/// signing it with ECDSA and SHA-256, DER as authenticators send it; the public numbers as
/// big-endian bytes) and RFC 8032 §7.1 TEST 2 for Ed25519 (the one-byte message 0x72).
public enum SignatureVectors {
    static func hex(_ s: String) -> [UInt8] { Hex.decode(s) ?? [] }

    public static let message = Array("gatehouse passkey test vector".utf8)
    public static let rsa2048N = hex(
        "9b938c1ecae911d60da1db1878d4cfbc4e3d70a0a752e5cf8a11bbfc6beb4d1524676f1f457e69d7dcbced3ce4901f99" +
        "03c2f24f6b35fdbcac43e16475f1c39ccae72c7f9a0b963673b97fe8d45229c0814ecfcb6bf14b3a4b8172cfbafb1bb7" +
        "5bf482ead33c03c790eb65b7bda63e8597cc31b75e3ba63f0cbddda9c66f2a9025f3f7e396924e85910f57e7fa14b87a" +
        "62b0b7ce5112d3d93de751031412e5bfa86e17ce46c8dd7ed582b8f639aaa25ed183b74588d95b1cfa6db4c239e18f29" +
        "86c261366b2c222704e6957cb5c0bd19b9a86e8245289e3b5e91be01ea8ebb3142f730ee020090c8ceec49841f350d61" +
        "5e2baeb40e990acf593ca3048a0a07a7")
    public static let p256X = hex(
        "506d94f451ea54e9a01ce0c139bf4acc91951128a6144bc4d785790f512c3d34")
    public static let p256Y = hex(
        "1b5c69cbbfce614abd981f0f3b3c217e61c96ee5fafe467d4941b54c494111ae")
    public static let p256Signature = hex(
        "3045022100ee39ff2bc209a42e25f36f7485782a8602e41a56b941d015f80ccda799f2b711022013d123222eb7196439" +
        "2437e5086b5113517a50698edf01dd751a4c07d8eb46f5")
    public static let ed25519Key = hex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
    public static let ed25519Signature = hex(
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da" +
        "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
}
