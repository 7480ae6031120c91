"""Passkey attestation an operator trusts (`passkeys.attestation_roots_file`): with roots
configured, only an authenticator whose `packed` attestation certificate chains to one of them
enrols (the options ask for `direct` attestation); without, any authenticator enrols and no
attestation is trusted. The test's own CA, intermediate and authenticator certificates are made
here with `cryptography`, and the statements are signed as an authenticator signs them (§8.2)."""
import datetime
import hashlib
import json
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import assert_envelope, binary
from test_passkey_api import CHALLENGE_BUDGET, Client, project
from webauthn_support import (B64URL, ES256, REGISTRATION_FLAGS, _wire_credential, attested_credential_data, authenticator_data, cbor,
                              client_data_json, decode_any, new_credential)

AAGUID = bytes(range(16))
AAGUID_OID = x509.ObjectIdentifier("1.3.6.1.4.1.45724.1.1.4")


def name(cn: str, ou: str | None = None) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.COUNTRY_NAME, "SE"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Test Maker")]
    if ou:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    parts.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(parts)


def certificate(subject, issuer, key, signer, ca: bool, aaguid: bytes | None = None, days: int = 365):
    now = datetime.datetime.now(datetime.timezone.utc)
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
         .not_valid_after(now + datetime.timedelta(days=days))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        b = b.add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
    if aaguid is not None:
        b = b.add_extension(x509.UnrecognizedExtension(AAGUID_OID, b"\x04\x10" + aaguid), critical=False)
    return b.sign(signer, hashes.SHA256())


class Maker:
    """An authenticator maker: a root, an intermediate, and attestation certificates under them."""

    def __init__(self, label: str):
        self.root_key = ec.generate_private_key(ec.SECP256R1())
        self.root = certificate(name(f"{label} Root"), name(f"{label} Root"), self.root_key, self.root_key, ca=True)
        self.mid_key = ec.generate_private_key(ec.SECP256R1())
        self.mid = certificate(name(f"{label} CA"), self.root.subject, self.mid_key, self.root_key, ca=True)

    def leaf(self, ou="Authenticator Attestation", ca=False, aaguid: bytes | None = AAGUID, days: int = 365):
        key = ec.generate_private_key(ec.SECP256R1())
        return key, certificate(name("Authenticator", ou), self.mid.subject, key, self.mid_key, ca=ca, aaguid=aaguid, days=days)

    def pem(self) -> bytes:
        return self.root.public_bytes(serialization.Encoding.PEM)


def packed_registration(c: Client, user: dict, leaf, *, chain=None, fmt="packed", self_attest=False, aaguid=AAGUID,
                        corrupt=False):
    """start, then a registration whose attestation is `fmt`, signed by the leaf's key (or, for
    self attestation, by the credential's own key without certificates)."""
    options = c.enrolment_options(user)
    challenge = decode_any(options["challenge"])
    cred = new_credential(ES256, user_handle=decode_any(options["user"]["id"]))
    auth_data = authenticator_data("localhost", REGISTRATION_FLAGS, 0, attested_credential_data(cred, aaguid))
    client_data = client_data_json("webauthn.create", challenge, c.origin)
    signed = auth_data + hashlib.sha256(client_data).digest()
    if fmt == "none":
        statement = {}
    elif self_attest:
        statement = {"alg": ES256, "sig": cred.sign(signed)}
    else:
        key, cert = leaf
        sig = key.sign(signed, ec.ECDSA(hashes.SHA256()))
        if corrupt:
            sig = sig[:-1] + bytes([sig[-1] ^ 1])
        certs = chain if chain is not None else [cert]
        statement = {"alg": ES256, "sig": sig, "x5c": [x.public_bytes(serialization.Encoding.DER) for x in certs]}
    attestation = cbor({"fmt": fmt, "attStmt": statement, "authData": auth_data})
    return options, _wire_credential(cred.credential_id, {"clientDataJSON": client_data, "attestationObject": attestation},
                                     B64URL, None, None)


@pytest.fixture(scope="module")
def makers():
    return Maker("Trusted"), Maker("Other")


@pytest.fixture
def trusting(make_gatehouse, makers, tmp_path):
    roots = tmp_path / "roots.pem"
    roots.write_bytes(makers[0].pem())
    return make_gatehouse({"mode": "dev", "projects": [project(passkeys=dict(
        {"enabled": True, "attestation_roots_file": str(roots)}, **CHALLENGE_BUDGET))]})


def refused(r, why: str):
    err = assert_envelope(r, 400, "INVALID_AUTHENTICATOR_RESPONSE")
    assert why in err["message"], err["message"]


def test_a_trusted_authenticator_enrols(trusting, makers):
    c = Client(trusting)
    user = c.anonymous()
    trusted = makers[0]
    options, response = packed_registration(c, user, trusted.leaf(), chain=None)
    assert options["attestation"] == "direct"
    # The leaf alone does not reach the root: the authenticator sends its intermediate too.
    refused(c.finalize_enrolment(user, response), "does not chain")
    key, cert = trusted.leaf()
    _, response = packed_registration(c, user, (key, cert), chain=[cert, trusted.mid])
    r = c.finalize_enrolment(user, response)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("case", ["other maker", "none", "self attestation", "not an authenticator", "a CA", "other aaguid",
                                  "expired", "bad signature"])
def test_untrusted_attestation_is_refused(trusting, makers, case):
    c = Client(trusting)
    user = c.anonymous()
    trusted, other = makers
    kwargs = {}
    if case == "other maker":
        key, cert = other.leaf()
        leaf, chain, why = (key, cert), [cert, other.mid], "does not chain"
    elif case == "none":
        leaf, chain, why = None, None, "not trusted"
        kwargs["fmt"] = "none"
    elif case == "self attestation":
        leaf, chain, why = None, None, "self attestation"
        kwargs["self_attest"] = True
    elif case == "not an authenticator":
        key, cert = trusted.leaf(ou="Something Else")
        leaf, chain, why = (key, cert), [cert, trusted.mid], "not an authenticator's"
    elif case == "a CA":
        key, cert = trusted.leaf(ca=True)
        leaf, chain, why = (key, cert), [cert, trusted.mid], "not an authenticator's"
    elif case == "other aaguid":
        key, cert = trusted.leaf(aaguid=bytes(16))
        leaf, chain, why = (key, cert), [cert, trusted.mid], "another AAGUID"
    elif case == "expired":
        key, cert = trusted.leaf(days=-1)
        leaf, chain, why = (key, cert), [cert, trusted.mid], "does not chain"
    else:
        key, cert = trusted.leaf()
        leaf, chain, why = (key, cert), [cert, trusted.mid], "signature does not verify"
        kwargs["corrupt"] = True
    _, response = packed_registration(c, user, leaf, chain=chain, **kwargs)
    refused(c.finalize_enrolment(user, response), why)
    assert c.passkeys(user) == []


def test_without_roots_any_attestation_enrols_untrusted(make_gatehouse, makers):
    g = make_gatehouse({"mode": "dev", "projects": [project(passkeys=dict({"enabled": True}, **CHALLENGE_BUDGET))]})
    c = Client(g)
    for kwargs in ({"fmt": "none"}, {"self_attest": True}):
        user = c.anonymous()
        options, response = packed_registration(c, user, None, **kwargs)
        assert options["attestation"] == "none"
        assert c.finalize_enrolment(user, response).status_code == 200
    # A certificate from an unknown maker is read but not trusted: it enrols all the same.
    key, cert = makers[1].leaf()
    user = c.anonymous()
    _, response = packed_registration(c, user, (key, cert), chain=[cert, makers[1].mid])
    assert c.finalize_enrolment(user, response).status_code == 200


def test_an_unreadable_roots_file_stops_the_configuration(tmp_path):
    bad = tmp_path / "roots.pem"
    bad.write_text("not a certificate\n")
    cfg = tmp_path / "gatehouse.json"
    cfg.write_text(json.dumps({"mode": "dev", "data_dir": str(tmp_path / "data"),
                               "projects": [project(passkeys={"enabled": True, "attestation_roots_file": str(bad)})]}))
    out = subprocess.run([str(binary()), "config", "check", "--config", str(cfg)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "passkeys.attestation_roots_file" in out.stdout + out.stderr, out.stdout + out.stderr
