"""A software WebAuthn authenticator for the passkey tests, written from the specification
(WebAuthn Level 3 §6.1 authenticator data, §6.5 attestation, §5.8.1 client data; RFC 8949 CBOR;
RFC 9052/9053 COSE keys) with `cryptography` only, so the server is checked against code that
shares nothing with it.

A `Credential` holds one key pair (ES256, RS256 or EdDSA), its credential id and the user handle
the relying party gave it. `registration_response` and `assertion_response` build what
`navigator.credentials.create()` / `.get()` would hand the Firebase SDK, in the shape the Identity
Toolkit v2 passkey calls take (`authenticatorRegistrationResponse`,
`authenticatorAuthenticationResponse`). Every field a relying party checks can be overridden so a
test breaks exactly one check at a time.

Binary fields travel either as base64url without padding (what the JS SDK preview sends) or as
standard padded base64 (what the iOS SDK preview sends): `encoding=B64URL` or `encoding=B64`.

`python webauthn_support.py` runs a self-check: CBOR test vectors from RFC 8949 Appendix A, then
a registration and an assertion for each algorithm verified by the independent `webauthn` library
(skipped, with a note, where it is not installed).
"""
import base64
import hashlib
import json
import os
import struct
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

# COSE algorithm identifiers (IANA "COSE Algorithms"), the three the server offers.
ES256 = -7
EDDSA = -8
RS256 = -257
ALGORITHMS = {ES256: "ES256", RS256: "RS256", EDDSA: "EdDSA"}

# Authenticator data flags (WebAuthn §6.1).
UP = 0x01   # user present
UV = 0x04   # user verified
BE = 0x08   # backup eligible
BS = 0x10   # backed up
AT = 0x40   # attested credential data included
ED = 0x80   # extension data included (never set here)

# What a synced passkey (iCloud Keychain, Google Password Manager) reports.
REGISTRATION_FLAGS = UP | UV | BE | BS | AT
ASSERTION_FLAGS = UP | UV | BE | BS

# The two wire encodings of binary fields.
B64URL = "base64url"   # no padding: the JS SDK preview
B64 = "base64"         # standard alphabet, padded: the iOS SDK preview

ZERO_AAGUID = bytes(16)   # "none" attestation: authenticators may (and many do) zero it


# --- base64 ------------------------------------------------------------------------------------

def b64url(data: bytes) -> str:
    """base64url without padding (WebAuthn's own encoding, and the credential `id`'s)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64(data: bytes) -> str:
    """Standard base64 with padding."""
    return base64.b64encode(data).decode()


def encode(data: bytes, encoding: str) -> str:
    if encoding == B64URL:
        return b64url(data)
    if encoding == B64:
        return b64(data)
    raise ValueError(f"unknown encoding {encoding!r}")


def decode_any(text: str) -> bytes:
    """Either alphabet, padded or not (the server's challenges and ids are read with this, so a
    test does not depend on which one it picked where the contract leaves it open)."""
    text = text.replace("-", "+").replace("_", "/").rstrip("=")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


# --- CBOR encoder (RFC 8949) ---------------------------------------------------------------------

def _head(major: int, value: int) -> bytes:
    """The initial byte and argument of a data item, in its shortest form (§4.2.1)."""
    if value < 24:
        return bytes([major << 5 | value])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if value < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | info]) + struct.pack(fmt, value)
    raise ValueError("integer too large for CBOR")


def cbor(value) -> bytes:
    """Canonical CBOR of ints, byte strings, text strings, lists, dicts (int or text keys) and
    booleans: definite lengths, shortest arguments, map keys in CTAP2 canonical order (shorter
    encoded key first, then bytewise), which is what authenticators emit and what RFC 8949 §4.2.3
    calls length-first ordering."""
    if value is True:        # before int: bool is an int in Python
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if isinstance(value, int):
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, (bytes, bytearray)):
        return _head(2, len(value)) + bytes(value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return _head(3, len(raw)) + raw
    if isinstance(value, (list, tuple)):
        return _head(4, len(value)) + b"".join(cbor(v) for v in value)
    if isinstance(value, dict):
        for key in value:
            if isinstance(key, bool) or not isinstance(key, (int, str)):
                raise TypeError(f"CBOR map key must be an int or a text string, not {key!r}")
        items = sorted(((cbor(k), cbor(v)) for k, v in value.items()), key=lambda kv: (len(kv[0]), kv[0]))
        return _head(5, len(items)) + b"".join(k + v for k, v in items)
    raise TypeError(f"cannot encode {type(value).__name__} as CBOR")


# --- credentials -------------------------------------------------------------------------------

def _uint(n: int) -> bytes:
    """An unsigned integer as big-endian bytes, no leading zeros (COSE RSA `n` and `e`)."""
    return n.to_bytes((n.bit_length() + 7) // 8, "big")


@dataclass
class Credential:
    """One discoverable credential (passkey): its key pair, id, the user handle it was created
    for, and the signature counter the authenticator keeps."""
    alg: int
    private_key: object
    credential_id: bytes
    user_handle: bytes = b""
    sign_count: int = 0

    @property
    def id(self) -> str:
        """The credential id as the wire's `id` (base64url, no padding)."""
        return b64url(self.credential_id)

    @property
    def name(self) -> str:
        return ALGORITHMS[self.alg]

    def cose_public_key(self) -> bytes:
        """The credential public key as a COSE_Key (RFC 9053 §7; RFC 8230 §4 for RSA)."""
        public = self.private_key.public_key()
        if self.alg == ES256:
            numbers = public.public_numbers()
            return cbor({1: 2, 3: ES256, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        if self.alg == RS256:
            numbers = public.public_numbers()
            return cbor({1: 3, 3: RS256, -1: _uint(numbers.n), -2: _uint(numbers.e)})
        if self.alg == EDDSA:
            from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
            return cbor({1: 1, 3: EDDSA, -1: 6, -2: public.public_bytes(Encoding.Raw, PublicFormat.Raw)})
        raise ValueError(f"unsupported algorithm {self.alg}")

    def sign(self, data: bytes) -> bytes:
        """The assertion signature (WebAuthn §6.3.3 step 11; formats of §6.5.6): DER ECDSA,
        PKCS#1 v1.5 with SHA-256, or a raw 64-byte Ed25519 signature."""
        if self.alg == ES256:
            return self.private_key.sign(data, ec.ECDSA(hashes.SHA256()))
        if self.alg == RS256:
            return self.private_key.sign(data, padding.PKCS1v15(), hashes.SHA256())
        if self.alg == EDDSA:
            return self.private_key.sign(data)
        raise ValueError(f"unsupported algorithm {self.alg}")


def new_credential(alg: int = ES256, user_handle: bytes = b"", credential_id: bytes | None = None) -> Credential:
    """A fresh key pair for `alg` (ES256: P-256; RS256: RSA 2048, e = 65537; EdDSA: Ed25519) and
    a random 32-byte credential id unless one is given."""
    if alg == ES256:
        key = ec.generate_private_key(ec.SECP256R1())
    elif alg == RS256:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    elif alg == EDDSA:
        key = ed25519.Ed25519PrivateKey.generate()
    else:
        raise ValueError(f"unsupported algorithm {alg}")
    return Credential(alg, key, credential_id if credential_id is not None else os.urandom(32), user_handle)


# --- the pieces of a response ------------------------------------------------------------------

def client_data_json(type_: str, challenge: bytes, origin: str, cross_origin: bool = False) -> bytes:
    """CollectedClientData as a browser serialises it (§5.8.1.1): `type`, `challenge` (base64url
    of the challenge bytes, no padding), `origin`, `crossOrigin`, in that order, no spaces."""
    data = {"type": type_, "challenge": b64url(challenge), "origin": origin, "crossOrigin": cross_origin}
    return json.dumps(data, separators=(",", ":")).encode()


def authenticator_data(rp_id: str, flags: int, counter: int, attested: bytes = b"") -> bytes:
    """rpIdHash (SHA-256 of the RP id) || flags || signCount (uint32 big-endian) || attested
    credential data (registration only)."""
    return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + struct.pack(">I", counter) + attested


def attested_credential_data(cred: Credential, aaguid: bytes = ZERO_AAGUID) -> bytes:
    """aaguid (16) || credentialIdLength (uint16 big-endian) || credentialId || COSE public key."""
    return aaguid + struct.pack(">H", len(cred.credential_id)) + cred.credential_id + cred.cose_public_key()


def _wire_credential(cred_id: bytes, response: dict, encoding: str, id_: str | None, raw_id: bytes | str | None) -> dict:
    """The PublicKeyCredential wrapper: `id` is always base64url (as browsers give it), `rawId`
    the same bytes in the chosen encoding; either can be replaced to break the id checks."""
    if raw_id is None:
        raw = encode(cred_id, encoding)
    elif isinstance(raw_id, bytes):
        raw = encode(raw_id, encoding)
    else:
        raw = raw_id            # a literal string, e.g. one that is not base64 at all
    return {"id": id_ if id_ is not None else b64url(cred_id), "rawId": raw, "type": "public-key",
            "response": {k: encode(v, encoding) if isinstance(v, bytes) else v for k, v in response.items()}}


def registration_response(cred: Credential, challenge: bytes, origin: str, *, rp_id: str = "localhost",
                          type_: str = "webauthn.create", flags: int = REGISTRATION_FLAGS, counter: int = 0,
                          aaguid: bytes = ZERO_AAGUID, encoding: str = B64URL, id_: str | None = None,
                          raw_id: bytes | str | None = None, cross_origin: bool = False) -> dict:
    """The `authenticatorRegistrationResponse` for `cred` answering `challenge` (the raw bytes),
    with a "none" attestation. The stored counter of `cred` becomes `counter`."""
    auth_data = authenticator_data(rp_id, flags, counter, attested_credential_data(cred, aaguid))
    attestation = cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})
    cred.sign_count = counter
    response = {"clientDataJSON": client_data_json(type_, challenge, origin, cross_origin), "attestationObject": attestation}
    return _wire_credential(cred.credential_id, response, encoding, id_, raw_id)


def assertion_response(cred: Credential, challenge: bytes, origin: str, *, rp_id: str = "localhost",
                       type_: str = "webauthn.get", flags: int = ASSERTION_FLAGS, counter: int | None = None,
                       user_handle: bytes | None = None, credential_id: bytes | None = None,
                       corrupt_signature: bool = False, encoding: str = B64URL, id_: str | None = None,
                       raw_id: bytes | str | None = None, cross_origin: bool = False) -> dict:
    """The `authenticatorAuthenticationResponse` of `cred` for `challenge` (raw bytes).

    counter: None takes the next value of the credential's counter (and keeps it), as a hardware
        key does; a number is sent as it is (0 for a synced passkey, or a regression).
    user_handle: None sends the credential's own; b"" leaves `userHandle` out.
    credential_id: announce another credential id than the one whose key signs.
    corrupt_signature: flip one bit of the signature after signing.
    """
    if counter is None:
        cred.sign_count += 1
        counter = cred.sign_count
    auth_data = authenticator_data(rp_id, flags, counter)
    client_data = client_data_json(type_, challenge, origin, cross_origin)
    signature = cred.sign(auth_data + hashlib.sha256(client_data).digest())
    if corrupt_signature:
        # The last byte: for DER ECDSA still well-formed DER, so it is the signature check that
        # fails, not the parser.
        signature = signature[:-1] + bytes([signature[-1] ^ 0x01])
    response = {"clientDataJSON": client_data, "authenticatorData": auth_data, "signature": signature}
    handle = cred.user_handle if user_handle is None else user_handle
    if handle:
        response["userHandle"] = handle
    return _wire_credential(credential_id if credential_id is not None else cred.credential_id,
                            response, encoding, id_, raw_id)


# --- self-check ---------------------------------------------------------------------------------

def _check_cbor():
    """RFC 8949 Appendix A vectors for each kind the encoder writes."""
    vectors = [
        (0, "00"), (23, "17"), (24, "1818"), (100, "1864"), (1000, "1903e8"), (1000000, "1a000f4240"),
        (1000000000000, "1b000000e8d4a51000"), (-1, "20"), (-10, "29"), (-100, "3863"), (-1000, "3903e7"),
        (False, "f4"), (True, "f5"), (b"", "40"), (bytes.fromhex("01020304"), "4401020304"),
        ("", "60"), ("a", "6161"), ("IETF", "6449455446"), ("\u00fc", "62c3bc"), ("\u6c34", "63e6b0b4"),
        ([], "80"), ([1, 2, 3], "83010203"), ([1, [2, 3], [4, 5]], "8301820203820405"),
        (list(range(1, 26)), "98190102030405060708090a0b0c0d0e0f101112131415161718181819"),
        ({}, "a0"), ({1: 2, 3: 4}, "a201020304"), ({"a": 1, "b": [2, 3]}, "a26161016162820203"),
        ({"a": "A", "b": "B", "c": "C", "d": "D", "e": "E"}, "a56161614161626142616361436164614461656145"),
    ]
    for value, expected in vectors:
        got = cbor(value).hex()
        assert got == expected, (value, got, expected)
    # COSE key order: 1, 3, -1, -2, -3 (CTAP2 canonical), whatever order the dict was written in.
    assert cbor({-2: b"x", 3: -7, -1: 1, 1: 2}).hex() == "a4" + "0102" + "0326" + "2001" + "214178"


def self_check():
    _check_cbor()
    print("CBOR: RFC 8949 vectors ok")
    try:
        import webauthn
        from webauthn.helpers.exceptions import InvalidAuthenticationResponse
    except ImportError:
        print("webauthn library not installed: cross-check skipped")
        return
    origin, rp_id = "http://localhost:9999", "localhost"
    for alg in ALGORITHMS:
        cred = new_credential(alg, user_handle=b"user-1")
        challenge = os.urandom(32)
        reg = registration_response(cred, challenge, origin)
        verified = webauthn.verify_registration_response(
            credential=reg, expected_challenge=challenge, expected_origin=origin, expected_rp_id=rp_id,
            require_user_verification=True)
        assert verified.credential_id == cred.credential_id and verified.credential_public_key == cred.cose_public_key()
        assert verified.credential_backed_up
        challenge = os.urandom(32)
        got = assertion_response(cred, challenge, origin)
        auth = webauthn.verify_authentication_response(
            credential=got, expected_challenge=challenge, expected_origin=origin, expected_rp_id=rp_id,
            credential_public_key=verified.credential_public_key, credential_current_sign_count=0,
            require_user_verification=True)
        assert auth.new_sign_count == 1 and auth.user_verified
        # The standard-base64 form carries the same bytes.
        padded = assertion_response(cred, challenge, origin, counter=1, encoding=B64)
        for field in ("clientDataJSON", "authenticatorData", "userHandle"):
            assert decode_any(padded["response"][field]) == decode_any(got["response"][field])
        # And the library refuses what the overrides break.
        for label, override in [("signature", {"corrupt_signature": True}), ("origin", {"origin": "http://127.0.0.1:9999"}),
                                ("rp id", {"rp_id": "example.com"}), ("no UV", {"flags": UP}),
                                ("type", {"type_": "webauthn.create"})]:
            args = dict({"origin": origin}, **override)
            bad = assertion_response(cred, challenge, args.pop("origin"), counter=cred.sign_count + 1, **args)
            try:
                webauthn.verify_authentication_response(
                    credential=bad, expected_challenge=challenge, expected_origin=origin, expected_rp_id=rp_id,
                    credential_public_key=verified.credential_public_key, credential_current_sign_count=1,
                    require_user_verification=True)
            except InvalidAuthenticationResponse:
                continue
            raise AssertionError(f"{ALGORITHMS[alg]}: the webauthn library accepted a broken {label}")
        print(f"{ALGORITHMS[alg]}: registration and assertion verified by webauthn {webauthn.__version__}")


if __name__ == "__main__":
    self_check()
