"""accounts:signInWithCustomToken with tokens minted by the firebase-admin PyPI package's
create_custom_token: signed by a configured service account (RS256, checked against its public
key or certificates), and unsigned in emulator mode as the Firebase emulator accepts them."""
import datetime
import json
import time
import uuid

import firebase_admin
import jwt as pyjwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from firebase_admin import auth, credentials

from conftest import admin_sdk, assert_envelope
from session_support import PROJECT, claims, refresh

EMAIL = "firebase-adminsdk-test@demo-gatehouse.iam.gserviceaccount.com"
KEY_ID = "0123456789abcdef0123456789abcdef01234567"


def service_account(key):
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    return {"type": "service_account", "project_id": PROJECT, "private_key_id": KEY_ID, "private_key": pem,
            "client_email": EMAIL, "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token"}


def certificate(key):
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, EMAIL)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=10))
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


@pytest.fixture(scope="module")
def signer(tmp_path_factory):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    folder = tmp_path_factory.mktemp("sa")
    (folder / "x509.json").write_text(json.dumps({KEY_ID: certificate(key)}))
    app = firebase_admin.initialize_app(credentials.Certificate(service_account(key)), options={"projectId": PROJECT},
                                        name=f"sa-{uuid.uuid4().hex[:8]}")
    yield key, folder / "x509.json", app
    firebase_admin.delete_app(app)


@pytest.fixture(scope="module")
def gh(signer, tmp_path_factory):
    from conftest import Gatehouse
    config = {"mode": "dev", "projects": [{"id": PROJECT, "custom_token_signers": [
        {"service_account": EMAIL, "certificates_file": str(signer[1])}]}]}
    g = Gatehouse(tmp_path_factory.mktemp("custom"), config=config).start()
    yield g
    g.stop()


def sign_in(g, token, status=200):
    r = g.api("signInWithCustomToken", {"token": token if isinstance(token, str) else token.decode(), "returnSecureToken": True})
    assert r.status_code == status, r.text
    return r.json()


def test_admin_sdk_token_signs_in_and_developer_claims_reach_the_id_token(gh, signer):
    uid = f"cust-{uuid.uuid4().hex[:10]}"
    token = auth.create_custom_token(uid, {"role": "editor", "tier": 3}, app=signer[2])
    assert pyjwt.get_unverified_header(token)["alg"] == "RS256"
    body = sign_in(gh, token)
    assert body["kind"] == "identitytoolkit#VerifyCustomTokenResponse" and body["isNewUser"] is True
    assert body["expiresIn"] == "3600" and body["refreshToken"]
    c = claims(body["idToken"])
    assert c["sub"] == uid and c["role"] == "editor" and c["tier"] == 3
    assert c["firebase"]["sign_in_provider"] == "custom"
    # A refreshed ID token keeps the developer claims; a second sign-in is not a new user.
    refreshed = refresh(gh, body["refreshToken"]).json()
    assert claims(refreshed["id_token"])["role"] == "editor"
    again = sign_in(gh, auth.create_custom_token(uid, app=signer[2]))
    assert again["isNewUser"] is False and "role" not in claims(again["idToken"])
    # The account exists under the token's uid, as the Admin SDK sees it.
    users = gh.admin("/accounts:lookup", {"localId": [uid]}).json()["users"]
    assert users[0]["localId"] == uid


def test_tokens_of_other_keys_other_accounts_and_bad_shapes_are_refused(gh, signer):
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    base = {"iss": EMAIL, "sub": EMAIL, "aud": "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit",
            "iat": now, "exp": now + 3600, "uid": "mallory"}
    pem = other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    forged = pyjwt.encode(base, pem, algorithm="RS256", headers={"kid": KEY_ID})
    assert_envelope(gh.api("signInWithCustomToken", {"token": forged}), 400, "INVALID_CUSTOM_TOKEN")
    stranger = pyjwt.encode(dict(base, iss="x@other.iam.gserviceaccount.com", sub="x@other.iam.gserviceaccount.com"), pem, algorithm="RS256")
    assert_envelope(gh.api("signInWithCustomToken", {"token": stranger}), 400, "CREDENTIAL_MISMATCH")
    mine = signer[0].private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    for bad, message in [(dict(base, exp=now - 10, iat=now - 3610), "INVALID_CUSTOM_TOKEN"),
                         (dict(base, exp=now + 7200), "INVALID_CUSTOM_TOKEN"),
                         (dict(base, aud=PROJECT), "INVALID_CUSTOM_TOKEN"),
                         (dict(base, claims={"sub": "x"}), "FORBIDDEN_CLAIM"),
                         ({k: v for k, v in base.items() if k != "uid"}, "MISSING_IDENTIFIER")]:
        token = pyjwt.encode(bad, mine, algorithm="RS256", headers={"kid": KEY_ID})
        assert_envelope(gh.api("signInWithCustomToken", {"token": token}), 400, message)
    assert_envelope(gh.api("signInWithCustomToken", {}), 400, "MISSING_CUSTOM_TOKEN")
    assert_envelope(gh.api("signInWithCustomToken", {"token": "not.a.jwt"}), 400, "INVALID_CUSTOM_TOKEN")
    assert_envelope(gh.api("signInWithCustomToken", {"token": "x" * 20000}), 400, "INVALID_CUSTOM_TOKEN")
    # A disabled account cannot sign in with a custom token.
    uid = f"off-{uuid.uuid4().hex[:8]}"
    sign_in(gh, auth.create_custom_token(uid, app=signer[2]))
    assert gh.admin("/accounts:update", {"localId": uid, "disableUser": True}).status_code == 200
    assert_envelope(gh.api("signInWithCustomToken", {"token": auth.create_custom_token(uid, app=signer[2]).decode()}), 400, "USER_DISABLED")


def test_emulator_mode_unsigned_tokens_in_dev_only(gh, make_gatehouse, tmp_path):
    with admin_sdk(gh, PROJECT) as app:
        token = auth.create_custom_token("emu-user", {"plan": "pro"}, app=app)
    assert pyjwt.get_unverified_header(token)["alg"] == "none"
    body = sign_in(gh, token)
    assert claims(body["idToken"])["sub"] == "emu-user" and claims(body["idToken"])["plan"] == "pro"
    # Production refuses an unsigned token.
    from phone_helpers import PROD_API_KEY, production_config
    g = make_gatehouse(config=production_config(tmp_path, {"provider": "command", "command": "/bin/true"}))
    r = g.api("signInWithCustomToken", {"token": token.decode()}, key=PROD_API_KEY)
    assert_envelope(r, 400, "INVALID_CUSTOM_TOKEN")
