import COpenSSL

/// A failure inside OpenSSL, carrying the library's own error text.
public struct CryptoError: Error, CustomStringConvertible, Equatable {
    public let operation: String
    public let detail: String
    public var description: String { "\(operation): \(detail)" }

    /// Drains OpenSSL's thread-local error queue into one message.
    static func fromOpenSSL(_ operation: String) -> CryptoError {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            messages.append(buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return CryptoError(operation: operation, detail: messages.isEmpty ? "unknown error" : messages.joined(separator: "; "))
    }
}

/// The one check every OpenSSL return code passes through (1 means success).
@inline(__always)
func check(_ rc: Int32, _ operation: String) throws(CryptoError) {
    guard rc == 1 else { throw CryptoError.fromOpenSSL(operation) }
}
