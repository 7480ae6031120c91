"""Gatehouse's ID tokens and session cookies, verified by a third-party JWT library (PyJWT, pinned)
against the keys Gatehouse publishes: signature, kid, iss, aud, exp (firebase-wire.md §3.1, §3.4, §3.5)."""
import json

import jwt
import pytest
from cryptography import x509

from conftest import assert_envelope
from session_support import PROJECT, claims, header, refresh, session_cookie, sign_up

ID_ISSUER = f"https://securetoken.google.com/{PROJECT}"
COOKIE_ISSUER = f"https://session.firebase.google.com/{PROJECT}"
OPTIONS = {"require": ["exp", "iat", "iss", "aud", "sub"]}


@pytest.fixture(scope="module")
def jwks(gatehouse):
    r = gatehouse.get("/.well-known/jwks.json")
    assert r.status_code == 200
    assert r.headers["Cache-Control"] == "public, max-age=3600"
    return jwt.PyJWKSet.from_dict(r.json())


def key_for(jwks, token):
    kid = jwt.get_unverified_header(token)["kid"]
    matches = [k for k in jwks.keys if k.key_id == kid]
    assert len(matches) == 1, f"kid {kid} not published"
    return matches[0]


def test_id_token_verifies_against_the_published_jwks(gatehouse, jwks):
    s = sign_up(gatehouse)
    token = s["idToken"]
    assert header(token)["alg"] == "RS256" and header(token)["typ"] == "JWT"
    decoded = jwt.decode(token, key_for(jwks, token), algorithms=["RS256"], audience=PROJECT, issuer=ID_ISSUER, options=OPTIONS)
    assert decoded["sub"] == decoded["user_id"] == s["localId"]
    assert decoded["exp"] - decoded["iat"] == 3600
    assert decoded["firebase"]["sign_in_provider"] == "anonymous" and decoded["provider_id"] == "anonymous"


def test_refreshed_id_token_and_session_cookie_verify_too(gatehouse, jwks):
    s = sign_up(gatehouse)
    r = refresh(gatehouse, s["refreshToken"], form=True)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["access_token"] == body["id_token"]
    assert body["token_type"] == "Bearer" and body["expires_in"] == "3600"
    assert body["user_id"] == s["localId"] and body["refresh_token"] != s["refreshToken"]
    assert body["project_id"].isdigit() and len(body["project_id"]) == 12
    jwt.decode(body["id_token"], key_for(jwks, body["id_token"]), algorithms=["RS256"], audience=PROJECT, issuer=ID_ISSUER, options=OPTIONS)
    cookie = session_cookie(gatehouse, body["id_token"], valid_duration=300)
    decoded = jwt.decode(cookie, key_for(jwks, cookie), algorithms=["RS256"], audience=PROJECT, issuer=COOKIE_ISSUER, options=OPTIONS)
    assert decoded["exp"] - decoded["iat"] == 300
    assert decoded["sub"] == s["localId"]


def test_the_google_shaped_x509_endpoint_serves_the_same_keys(gatehouse):
    s = sign_up(gatehouse)
    certs = gatehouse.get("/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com").json()
    pem = certs[header(s["idToken"])["kid"]]
    public_key = x509.load_pem_x509_certificate(pem.encode()).public_key()
    jwt.decode(s["idToken"], public_key, algorithms=["RS256"], audience=PROJECT, issuer=ID_ISSUER, options=OPTIONS)
    jwk = gatehouse.get("/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com").json()
    assert header(s["idToken"])["kid"] in [k["kid"] for k in jwk["keys"]]


def test_verification_rejects_tampering_wrong_audience_and_issuer_and_expiry(gatehouse, jwks):
    s = sign_up(gatehouse)
    token = s["idToken"]
    key = key_for(jwks, token)
    h, _, sig = token.split(".")
    forged_payload = jwt.utils.base64url_encode(json.dumps({**claims(token), "sub": "someone-else"}).encode()).decode()
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(f"{h}.{forged_payload}.{sig}", key, algorithms=["RS256"], audience=PROJECT, issuer=ID_ISSUER)
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(token, key, algorithms=["RS256"], audience="another-project", issuer=ID_ISSUER)
    with pytest.raises(jwt.InvalidIssuerError):  # an ID token is not a session cookie
        jwt.decode(token, key, algorithms=["RS256"], audience=PROJECT, issuer=COOKIE_ISSUER)
    with pytest.raises(jwt.ExpiredSignatureError):  # the same token an hour and a bit later
        jwt.decode(token, key, algorithms=["RS256"], audience=PROJECT, issuer=ID_ISSUER, leeway=-3601, options={"verify_iat": False})
    # And Gatehouse itself refuses the forged token.
    r = gatehouse.api("lookup", {"idToken": f"{h}.{forged_payload}.{sig}"})
    assert_envelope(r, 400, "INVALID_ID_TOKEN")


def test_refresh_rotates_and_detects_reuse_over_http(gatehouse):
    s = sign_up(gatehouse)
    first = refresh(gatehouse, s["refreshToken"])
    assert first.status_code == 200
    retry = refresh(gatehouse, s["refreshToken"])          # inside the 10-second grace window
    assert retry.status_code == 200, retry.text
    assert retry.json()["refresh_token"] == first.json()["refresh_token"], "one successor per token"
    assert refresh(gatehouse, first.json()["refresh_token"]).status_code == 200
    assert_envelope(refresh(gatehouse, "ghrt1.not-a-token"), 400, "INVALID_REFRESH_TOKEN")
    r = gatehouse.post("/securetoken.googleapis.com/v1/token", params={"key": "k"}, json={"grantType": "password", "refreshToken": "x"})
    assert_envelope(r, 400, "INVALID_GRANT_TYPE")
    r = gatehouse.post("/securetoken.googleapis.com/v1/token", params={"key": "k"}, json={"grantType": "refresh_token"})
    assert_envelope(r, 400, "MISSING_REFRESH_TOKEN")
    r = gatehouse.post("/securetoken.googleapis.com/v1/token", params={"key": "k"}, data={"refresh_token": "x"})
    assert_envelope(r, 400, "MISSING_GRANT_TYPE")
