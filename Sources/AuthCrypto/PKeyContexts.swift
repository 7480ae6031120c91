import COpenSSL
#if canImport(Glibc)
import Glibc
#endif
import Locking

/// SHA-256 fetched from the default provider once per process. OpenSSL 3 looks an algorithm up
/// again on every call that is given the legacy `EVP_sha256()`; a fetched `EVP_MD` skips that.
/// A provider without it (a broken install) gets the legacy one: slower, never a crash.
var fetchedSHA256: OpaquePointer? { FetchedDigest.sha256.md }

// @unchecked: an `EVP_MD` is immutable once fetched and reference-counted by OpenSSL, so every
// thread may use it.
private struct FetchedDigest: @unchecked Sendable {
    let md: OpaquePointer?
    static let sha256 = FetchedDigest(md: EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256())
}

/// SHA-256 of `data` into `out` (32 bytes) with OpenSSL's SHA-256 functions directly: no
/// provider is loaded for a hash (a CGI request that only verifies never loads one).
func sha256(_ data: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) -> Bool {
    gh_sha256(data.baseAddress ?? UnsafeRawPointer(bitPattern: 1), data.count, out) == 1
}

/// Ready `EVP_PKEY_CTX`s for RS256 signing (RSASSA-PKCS1-v1_5 over a SHA-256 digest) with one
/// private key: each is initialised once (padding and digest set) and then reused, so a
/// signature costs the RSA operation and the hash, without OpenSSL 3's per-call provider fetch
/// and context set-up. (Verifying uses `RSA_verify` on the public numbers, see `RSAPublicKey`.) A context serves one thread at a time: `withContext` takes one from the
/// pool (or makes one) and gives it back after `body`. At most `maxIdle` are kept.
// @unchecked: OpenSSL contexts, each used by one thread at a time; the idle list under `lock`.
final class PKeyContextPool: @unchecked Sendable {
    static let maxIdle = 64
    private let key: PKeyHandle
    private let lock = Lock()
    private var idle: [OpaquePointer] = []

    init(key: PKeyHandle) {
        self.key = key
        idle.reserveCapacity(8)
    }

    deinit {
        idle.forEach { EVP_PKEY_CTX_free($0) }
    }

    /// Runs `body` with a ready context; nil if none could be made (OpenSSL out of memory).
    func withContext<R>(_ body: (OpaquePointer) -> R) -> R? {
        let reused = lock.withLock { idle.popLast() }
        guard let ctx = reused ?? make() else { return nil }
        let result = body(ctx)
        let keep = lock.withLock {
            guard idle.count < PKeyContextPool.maxIdle else { return false }
            idle.append(ctx)
            return true
        }
        if !keep { EVP_PKEY_CTX_free(ctx) }
        return result
    }

    /// A new signing context for this pool's key, PKCS#1 v1.5 padding, SHA-256.
    private func make() -> OpaquePointer? {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { ERR_clear_error(); return nil }
        let ready = EVP_PKEY_sign_init(ctx) == 1
            && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1
            && EVP_PKEY_CTX_set_signature_md(ctx, fetchedSHA256) == 1
        guard ready else {
            ERR_clear_error()
            EVP_PKEY_CTX_free(ctx)
            return nil
        }
        return ctx
    }
}
