#ifndef GATEHOUSE_COPENSSL_SHIM_H
#define GATEHOUSE_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <string.h>

/* Macros Swift cannot import. */
static const int GH_EVP_PKEY_KEYPAIR = EVP_PKEY_KEYPAIR;
static const int GH_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;
static const int GH_EVP_CTRL_GCM_GET_TAG = EVP_CTRL_GCM_GET_TAG;
static const int GH_EVP_CTRL_GCM_SET_TAG = EVP_CTRL_GCM_SET_TAG;
static inline long gh_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline int gh_EVP_PKEY_CTX_set_rsa_keygen_bits(EVP_PKEY_CTX *ctx, int bits) {
    return EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits);
}

/* RS256 verification and SHA-256 without OpenSSL 3's provider machinery: a process that only
   verifies (a CGI request) then skips loading the default provider and building its name map
   (several million instructions). These are OpenSSL's own RSA (PKCS#1 v1.5 with the DigestInfo
   of SHA-256 compared whole, as EVP_PKEY_verify does) and SHA-256 block functions, deprecated
   as interfaces in 3.0 but the same code the providers call. */
#include <openssl/sha.h>
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static inline int gh_sha256(const void *data, size_t len, unsigned char *out) {
    SHA256_CTX c;
    return SHA256_Init(&c) == 1 && SHA256_Update(&c, data, len) == 1 && SHA256_Final(out, &c) == 1;
}
/* HMAC-SHA-256 with the key's pad blocks absorbed once (RFC 2104), on the same SHA-256 block
   functions: a MAC copies the two states (plain structs, read only, so shared by threads). */
typedef struct { SHA256_CTX inner, outer; } gh_hmac_sha256_key;
static inline int gh_hmac_sha256_prepare(gh_hmac_sha256_key *k, const unsigned char *ipad, const unsigned char *opad) {
    return SHA256_Init(&k->inner) == 1 && SHA256_Update(&k->inner, ipad, 64) == 1
        && SHA256_Init(&k->outer) == 1 && SHA256_Update(&k->outer, opad, 64) == 1;
}
static inline int gh_hmac_sha256(const gh_hmac_sha256_key *k, const void *data, size_t len, unsigned char *out) {
    SHA256_CTX c = k->inner;
    unsigned char inner[32];
    int ok = SHA256_Update(&c, data, len) == 1 && SHA256_Final(inner, &c) == 1;
    c = k->outer;
    ok = ok && SHA256_Update(&c, inner, 32) == 1 && SHA256_Final(out, &c) == 1;
    OPENSSL_cleanse(&c, sizeof c);
    return ok;
}
/* An RSA public key from big-endian n and e; NULL on failure. */
static inline RSA *gh_rsa_public_new(const unsigned char *n, int nlen, const unsigned char *e, int elen) {
    RSA *rsa = RSA_new();
    BIGNUM *bn = BN_bin2bn(n, nlen, NULL), *be = BN_bin2bn(e, elen, NULL);
    if (rsa == NULL || bn == NULL || be == NULL || RSA_set0_key(rsa, bn, be, NULL) != 1) {
        BN_free(bn); BN_free(be); RSA_free(rsa);
        return NULL;
    }
    return rsa;
}
static inline int gh_rsa_verify_sha256(RSA *rsa, const unsigned char *digest, const unsigned char *sig, unsigned int siglen) {
    return RSA_verify(NID_sha256, digest, 32, sig, siglen, rsa);
}
static inline void gh_rsa_free(RSA *rsa) { RSA_free(rsa); }
#pragma clang diagnostic pop
/* Passkey attestation (docs/passkeys.md "Attestation"): a leaf certificate checked against the
   operator's roots with the statement's other certificates as untrusted intermediates; the stack
   functions are macros Swift cannot import. 1 when the chain verifies. */
static inline int gh_x509_verify_chain(X509_STORE *store, X509 *leaf, X509 **intermediates, int count) {
    STACK_OF(X509) *untrusted = sk_X509_new_null();
    if (untrusted == NULL) return 0;
    for (int i = 0; i < count; i++) {
        if (!sk_X509_push(untrusted, intermediates[i])) { sk_X509_free(untrusted); return 0; }
    }
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ok = ctx != NULL && X509_STORE_CTX_init(ctx, store, leaf, untrusted) == 1 && X509_verify_cert(ctx) == 1;
    X509_STORE_CTX_free(ctx);
    sk_X509_free(untrusted);
    ERR_clear_error();
    return ok;
}
/* The contents of the extension `oid` (dotted) of a certificate: its length, 0 when absent, -1 when
   it does not fit `cap` bytes. */
static inline int gh_x509_extension(X509 *cert, const char *oid, unsigned char *out, int cap) {
    ASN1_OBJECT *obj = OBJ_txt2obj(oid, 1);
    if (obj == NULL) { ERR_clear_error(); return -1; }
    int at = X509_get_ext_by_OBJ(cert, obj, -1);
    ASN1_OBJECT_free(obj);
    if (at < 0) return 0;
    ASN1_OCTET_STRING *data = X509_EXTENSION_get_data(X509_get_ext(cert, at));
    int n = ASN1_STRING_length(data);
    if (n > cap) return -1;
    memcpy(out, ASN1_STRING_get0_data(data), (size_t)n);
    return n;
}
/* The subject's organizational unit (NUL-terminated in `out`): its length, or -1. */
static inline int gh_x509_subject_ou(X509 *cert, char *out, int cap) {
    return X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_organizationalUnitName, out, cap);
}
/* The kernel's CSPRNG; the Glibc module does not export <sys/random.h>. */
#include <sys/random.h>
static inline long gh_getrandom(void *buf, unsigned long len) { return (long)getrandom(buf, len, 0); }
#endif
