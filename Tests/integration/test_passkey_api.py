"""Passkeys (WebAuthn) over REST through nginx, Identity Toolkit v2 wire:
accounts/passkeyEnrollment:start|finalize and accounts/passkeySignIn:start|finalize, passkeyInfo in
accounts:lookup, deletePasskey in accounts:update.

The authenticator is the software one of webauthn_support.py (ES256, RS256, EdDSA; "none"
attestation), which shares no code with the server; the cross-check at the end has the independent
`webauthn` library verify the same responses, so the two relying parties agree. Every WebAuthn
check is broken on its own, with one field of an otherwise valid response changed, and a valid
response is then accepted, so each refusal is the check's and not something else's.

Dev mode: the relying party id is `localhost` and a page on `http://localhost:<port>` is a valid
origin (`http://127.0.0.1:<port>` is not, though the tests reach nginx on 127.0.0.1).
"""
import base64
import os
import re
import threading
import time
import urllib.parse

import pytest
import requests

from conftest import Gatehouse, assert_envelope
from phone_helpers import PROD_API_KEY, production_config
from mfa_support import admin_lookup, email_user, mfa, totp_user
from session_support import claims, refresh
from webauthn_support import (ASSERTION_FLAGS, B64, B64URL, EDDSA, ES256, REGISTRATION_FLAGS, RS256, UP, UV,
                              assertion_response, b64url, decode_any, new_credential, registration_response, self_check)

PROJECT = "demo-gatehouse"
OTHER_PROJECT = "demo-other"
KEY = "test-api-key"
V2 = "/identitytoolkit.googleapis.com/v2/accounts"

ALGORITHMS = [pytest.param(ES256, id="ES256"), pytest.param(RS256, id="RS256"), pytest.param(EDDSA, id="EdDSA")]
ENCODINGS = [pytest.param(B64URL, id="base64url"), pytest.param(B64, id="base64")]
STANDARD_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")
BASE64URL_NO_PADDING = re.compile(r"^[A-Za-z0-9_-]+$")
PUB_KEY_CRED_PARAMS = [{"type": "public-key", "alg": -7}, {"type": "public-key", "alg": -8}, {"type": "public-key", "alg": -257}]


def project(project_id: str = PROJECT, passkeys: dict | None = None, **extra) -> dict:
    """A dev project with passkeys (`passkeys=None` leaves the section out) and TOTP second
    factors, with limits high enough for a whole module of email-link sign-ins from 127.0.0.1."""
    p = {"id": project_id, "mfa": "ENABLED", "mfa_totp": {"enabled": True, "adjacent_intervals": 1},
         "phone": {"verify_attempts_per_ip_per_5min": 10000, "failure_budget_per_day": 100},
         "email_link": {"sends_per_ip_per_hour": 10000}, **extra}
    if passkeys is not None:
        p["passkeys"] = passkeys
    return p


# Every request of the module comes from 127.0.0.1, and one client may ask for only so many
# challenges (enrolment and sign-in together) in five minutes: enough here for the whole module.
CHALLENGE_BUDGET = {"challenges_per_ip_per_5min": 10000}


def config(**passkeys) -> dict:
    """One project with `passkeys: {"enabled": true, **passkeys}` (and the module's challenge budget)."""
    return {"mode": "dev", "projects": [project(passkeys=dict({"enabled": True}, **CHALLENGE_BUDGET, **passkeys))]}


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("gh-passkey"), config=config()).start()
    yield g
    g.stop()


def error(resp, code: str, status: int = 400):
    """A Firebase error envelope whose message is `code`, alone or as `code : detail`."""
    err = assert_envelope(resp, status, code)
    assert err["message"] == code or err["message"].startswith(code + " : "), err["message"]
    return err


class Client:
    """What a web app on http://localhost:<port> does against one project of a Gatehouse: its API
    key, its origin, the four passkey calls, and the user's tokens kept up to date."""

    def __init__(self, gh, key: str = KEY, origin: str | None = None, rp_id: str = "localhost"):
        self.gh, self.key, self.rp_id = gh, key, rp_id
        self.origin = origin or f"http://localhost:{gh.port}"

    def call(self, name: str, body: dict):
        return self.gh.post(f"{V2}/{name}", params={"key": self.key}, json=body)

    def v1(self, name: str, body: dict):
        return self.gh.api(name, body, key=self.key)

    def anonymous(self) -> dict:
        """A new anonymous account, as the JS SDK's signInAnonymously makes it (`accounts:signUp {}`)."""
        r = self.v1("signUp", {})
        assert r.status_code == 200, r.text
        return r.json()

    # --- enrolment ---------------------------------------------------------------------------
    def enrolment_options(self, user: dict) -> dict:
        r = self.call("passkeyEnrollment:start", {"idToken": user["idToken"]})
        assert r.status_code == 200, r.text
        return r.json()["credentialCreationOptions"]

    def finalize_enrolment(self, user: dict, response: dict | None, name: str | None = None):
        body = {"idToken": user["idToken"]}
        if response is not None:
            body["authenticatorRegistrationResponse"] = response
        if name is not None:
            body["name"] = name
        return self.call("passkeyEnrollment:finalize", body)

    def registration(self, user: dict, cred=None, alg: int = ES256, **overrides):
        """start, then the authenticator's answer to its challenge: (credential, response). The
        credential takes the user handle the options give (`user.id`), as an authenticator does;
        `challenge=` replaces the challenge, any other keyword goes to registration_response."""
        options = self.enrolment_options(user)
        if cred is None:
            cred = new_credential(alg, user_handle=decode_any(options["user"]["id"]))
        challenge = overrides.pop("challenge", decode_any(options["challenge"]))
        args = dict({"origin": self.origin, "rp_id": self.rp_id}, **overrides)
        return cred, registration_response(cred, challenge, args.pop("origin"), **args)

    def enrol(self, user: dict, cred=None, alg: int = ES256, name: str | None = None, **overrides):
        """A whole enrolment that must succeed; the user's tokens become the answer's."""
        cred, response = self.registration(user, cred, alg, **overrides)
        r = self.finalize_enrolment(user, response, name)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["localId"] == user["localId"] and body["idToken"] and body["refreshToken"], body
        user.update(idToken=body["idToken"], refreshToken=body["refreshToken"])
        return cred

    # --- sign-in -------------------------------------------------------------------------------
    def request_options(self) -> dict:
        r = self.call("passkeySignIn:start", {})
        assert r.status_code == 200, r.text
        return r.json()["credentialRequestOptions"]

    def assertion(self, cred, **overrides) -> dict:
        """start, then the authenticator's assertion for its challenge (`challenge=` replaces it;
        any other keyword goes to assertion_response)."""
        challenge = overrides.pop("challenge", None)
        if challenge is None:
            challenge = decode_any(self.request_options()["challenge"])
        args = dict({"origin": self.origin, "rp_id": self.rp_id}, **overrides)
        return assertion_response(cred, challenge, args.pop("origin"), **args)

    def finalize_sign_in(self, response: dict | None):
        return self.call("passkeySignIn:finalize", {} if response is None else {"authenticatorAuthenticationResponse": response})

    def sign_in(self, cred, **overrides):
        return self.finalize_sign_in(self.assertion(cred, **overrides))

    def signed_in(self, cred, user: dict, **overrides) -> dict:
        """A passkey sign-in that must succeed, as `user`: its answer."""
        r = self.sign_in(cred, **overrides)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["localId"] == user["localId"] and body["idToken"] and body["refreshToken"], body
        return body

    # --- the account -------------------------------------------------------------------------------
    def passkeys(self, user: dict) -> list:
        r = self.v1("lookup", {"idToken": user["idToken"]})
        assert r.status_code == 200, r.text
        return r.json()["users"][0].get("passkeyInfo", [])

    def delete(self, user: dict, *credential_ids: str):
        """`accounts:update` with `deletePasskey`; on success the user goes on in the answer's
        tokens, as the SDKs do (the removal revokes everything issued before it)."""
        r = self.v1("update", {"idToken": user["idToken"], "deletePasskey": list(credential_ids)})
        if r.status_code == 200:
            user.update(idToken=r.json()["idToken"], refreshToken=r.json()["refreshToken"])
        return r


def enrolled(c: Client, alg: int = ES256, **overrides):
    """A new anonymous user with one passkey: (user, credential)."""
    user = c.anonymous()
    return user, c.enrol(user, alg=alg, **overrides)


# --- the happy paths ------------------------------------------------------------------------------

def test_creation_options_carry_every_field(gh):
    c = Client(gh)
    user = c.anonymous()
    options = c.enrolment_options(user)
    assert options["rp"]["id"] == "localhost" and isinstance(options["rp"]["name"], str) and options["rp"]["name"]
    # user.id: the standard base64 of the localId's UTF-8 bytes (the user handle an assertion returns).
    assert options["user"]["id"] == base64.b64encode(user["localId"].encode()).decode()
    assert isinstance(options["user"]["name"], str) and isinstance(options["user"]["displayName"], str)
    assert STANDARD_BASE64.match(options["challenge"]) and len(base64.b64decode(options["challenge"])) >= 16
    assert options["pubKeyCredParams"] == PUB_KEY_CRED_PARAMS
    assert isinstance(options["timeout"], int) and options["timeout"] > 0
    assert options["attestation"] == "none"
    assert options["authenticatorSelection"] == {"residentKey": "required", "requireResidentKey": True, "userVerification": "required"}
    assert "excludeCredentials" not in options           # no passkey yet
    # Each start its own challenge.
    assert c.enrolment_options(user)["challenge"] != options["challenge"]
    # Once the user has passkeys, they are excluded (so an authenticator does not make a second one).
    first = c.enrol(user)
    second = c.enrol(user, alg=EDDSA)
    excluded = c.enrolment_options(user)["excludeCredentials"]
    assert all(e["type"] == "public-key" for e in excluded)
    assert sorted(decode_any(e["id"]) for e in excluded) == sorted([first.credential_id, second.credential_id])


def test_request_options_carry_every_field(gh):
    c = Client(gh)
    options = c.request_options()
    assert options["rpId"] == "localhost" and options["userVerification"] == "required"
    assert isinstance(options["timeout"], int) and options["timeout"] > 0
    assert len(decode_any(options["challenge"])) >= 16
    # A discoverable-credential sign-in: the server does not know the user yet, so it names no credential.
    assert not options.get("allowCredentials")
    assert c.request_options()["challenge"] != options["challenge"]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("alg", ALGORITHMS)
def test_enrol_and_sign_in(gh, alg, encoding):
    """Each algorithm, with binary fields in the JS SDK's base64url and in the iOS SDK's base64."""
    c = Client(gh)
    user = c.anonymous()
    cred = c.enrol(user, alg=alg, encoding=encoding, name="Laptop")
    body = c.signed_in(cred, user, encoding=encoding)
    token = claims(body["idToken"])
    assert token["sub"] == user["localId"] and token["aud"] == PROJECT
    assert token["firebase"]["sign_in_provider"] == "passkey"
    r = refresh(gh, body["refreshToken"])
    assert r.status_code == 200, r.text
    # Again: the counter went up, the challenge is new.
    c.signed_in(cred, user, encoding=encoding)


def test_anonymous_account_enrols_a_passkey_and_signs_in_with_it(gh):
    """The JS SDK preview's path: signInAnonymously, then link a passkey, then (on another visit,
    with nothing but the passkey) sign in with it to the same account."""
    c = Client(gh)
    user = c.anonymous()
    assert claims(user["idToken"])["firebase"]["sign_in_provider"] == "anonymous"
    cred = c.enrol(user, name="This browser")
    body = c.signed_in(cred, user)
    assert claims(body["idToken"])["firebase"]["sign_in_provider"] == "passkey"
    assert body["localId"] == user["localId"]


def test_lookup_lists_passkeys_and_delete_removes_them(gh):
    c = Client(gh)
    user = c.anonymous()
    phone = c.enrol(user, name="Phone")
    laptop = c.enrol(user, alg=RS256, name="Laptop")
    info = c.passkeys(user)
    assert all(BASE64URL_NO_PADDING.match(p["credentialId"]) for p in info), info
    assert sorted((p["credentialId"], p["name"]) for p in info) == sorted([(phone.id, "Phone"), (laptop.id, "Laptop")])
    r = c.delete(user, phone.id)
    assert r.status_code == 200, r.text
    assert [p["credentialId"] for p in c.passkeys(user)] == [laptop.id]
    error(c.sign_in(phone), "PASSKEY_CREDENTIAL_NOT_FOUND")
    c.signed_in(laptop, user)
    # Gone is gone, and an id never enrolled is not found either.
    error(c.delete(user, phone.id), "PASSKEY_ENROLLMENT_NOT_FOUND")
    error(c.delete(user, new_credential().id), "PASSKEY_ENROLLMENT_NOT_FOUND")
    assert c.delete(user, laptop.id).status_code == 200
    assert c.passkeys(user) == []


def test_another_users_token_cannot_delete_a_passkey(gh):
    c = Client(gh)
    owner, cred = enrolled(c)
    stranger = c.anonymous()
    error(c.delete(stranger, cred.id), "PASSKEY_ENROLLMENT_NOT_FOUND")
    assert [p["credentialId"] for p in c.passkeys(owner)] == [cred.id]
    c.signed_in(cred, owner)


def test_deleting_the_passkey_ends_the_refresh_tokens_of_passkey_sign_ins(gh):
    c = Client(gh)
    user, cred = enrolled(c)
    signed_in = c.signed_in(cred, user)
    assert refresh(gh, signed_in["refreshToken"]).status_code == 200
    assert c.delete(user, cred.id).status_code == 200
    error(refresh(gh, signed_in["refreshToken"]), "TOKEN_EXPIRED")


def test_a_disabled_user_neither_refreshes_nor_signs_in_with_a_passkey(gh):
    c = Client(gh)
    user, cred = enrolled(c)
    signed_in = c.signed_in(cred, user)
    r = gh.admin("/accounts:update", {"localId": user["localId"], "disableUser": True}, project=PROJECT)
    assert r.status_code == 200, r.text
    error(refresh(gh, signed_in["refreshToken"]), "USER_DISABLED")
    error(c.sign_in(cred), "USER_DISABLED")


def test_project_settings_name_the_relying_party_and_its_origins(make_gatehouse):
    """`rp_id`, `rp_name` and `origins`: a site on its own domain rather than dev's localhost."""
    g = make_gatehouse(config=config(rp_id="example.test", rp_name="Example Shop", origins=["https://app.example.test"]))
    c = Client(g, origin="https://app.example.test", rp_id="example.test")
    user = c.anonymous()
    assert c.enrolment_options(user)["rp"] == {"id": "example.test", "name": "Example Shop"}
    assert c.request_options()["rpId"] == "example.test"
    cred = c.enrol(user)
    c.signed_in(cred, user)
    # A host that merely ends with the relying party id is not on its domain.
    error(c.sign_in(cred, origin="https://notexample.test"), "INVALID_AUTHENTICATOR_RESPONSE")


# --- error strings ----------------------------------------------------------------------------------

@pytest.mark.parametrize("passkeys", [None, {"enabled": False}], ids=["absent", "disabled"])
def test_every_passkey_call_needs_the_project_to_enable_passkeys(make_gatehouse, passkeys):
    g = make_gatehouse(config={"mode": "dev", "projects": [project(passkeys=passkeys)]})
    c = Client(g)
    user = c.anonymous()
    cred = new_credential(user_handle=user["localId"].encode())
    error(c.call("passkeyEnrollment:start", {"idToken": user["idToken"]}), "PASSKEY_NOT_ENABLED")
    error(c.finalize_enrolment(user, registration_response(cred, os.urandom(32), c.origin)), "PASSKEY_NOT_ENABLED")
    error(c.call("passkeySignIn:start", {}), "PASSKEY_NOT_ENABLED")
    error(c.finalize_sign_in(assertion_response(cred, os.urandom(32), c.origin)), "PASSKEY_NOT_ENABLED")


def test_missing_authenticator_response(gh):
    c = Client(gh)
    user = c.anonymous()
    c.enrolment_options(user)
    error(c.finalize_enrolment(user, None), "MISSING_AUTHENTICATOR_RESPONSE")
    c.request_options()
    error(c.finalize_sign_in(None), "MISSING_AUTHENTICATOR_RESPONSE")


def test_invalid_credential_id(gh):
    """`id` that is not base64url, or that names other bytes than `rawId`."""
    c = Client(gh)
    user = c.anonymous()
    other = os.urandom(32)
    for broken in ({"id_": "not base64url*!"}, {"id_": b64url(other)}):
        _, response = c.registration(user, **broken)
        error(c.finalize_enrolment(user, response), "INVALID_CREDENTIAL_ID")
    cred = c.enrol(user)
    for broken in ({"id_": "not base64url*!"}, {"raw_id": other}):
        error(c.sign_in(cred, **broken), "INVALID_CREDENTIAL_ID")
    c.signed_in(cred, user)


def test_the_same_credential_twice_for_one_user_is_passkey_exists(gh):
    c = Client(gh)
    user, cred = enrolled(c)
    _, response = c.registration(user, cred)
    error(c.finalize_enrolment(user, response), "PASSKEY_EXISTS")
    assert len(c.passkeys(user)) == 1


def test_a_credential_of_another_user_is_already_in_use(gh):
    c = Client(gh)
    owner, cred = enrolled(c)
    other = c.anonymous()
    _, response = c.registration(other, cred)
    error(c.finalize_enrolment(other, response), "CREDENTIAL_ALREADY_IN_USE")
    assert c.passkeys(other) == []
    c.signed_in(cred, owner)


def enrol_past_the_limit(c: Client, user: dict):
    """One enrolment more than allowed: refused at start, or else at finalize."""
    r = c.call("passkeyEnrollment:start", {"idToken": user["idToken"]})
    if r.status_code != 200:
        return r
    options = r.json()["credentialCreationOptions"]
    cred = new_credential(user_handle=decode_any(options["user"]["id"]))
    return c.finalize_enrolment(user, registration_response(cred, decode_any(options["challenge"]), c.origin))


def test_passkey_limit_from_the_config(make_gatehouse):
    c = Client(make_gatehouse(config=config(max_per_user=2)))
    user = c.anonymous()
    first = c.enrol(user)
    c.enrol(user)
    error(enrol_past_the_limit(c, user), "PASSKEY_LIMIT_EXCEEDED")
    # Deleting one makes room again.
    assert c.delete(user, first.id).status_code == 200
    c.enrol(user)


def test_passkey_limit_is_ten_by_default(gh):
    c = Client(gh)
    user = c.anonymous()
    for _ in range(10):
        c.enrol(user)
    error(enrol_past_the_limit(c, user), "PASSKEY_LIMIT_EXCEEDED")
    assert len(c.passkeys(user)) == 10


def test_expired_challenges(make_gatehouse):
    c = Client(make_gatehouse(config=config(challenge_seconds=1)))
    user = c.anonymous()
    cred, response = c.registration(user)
    time.sleep(2.5)
    error(c.finalize_enrolment(user, response), "PASSKEY_CHALLENGE_TIMEOUT")
    # A prompt answer passes. The server may count whole seconds, so a challenge issued just
    # before a second turns can have little of its one second left: a timeout is tried again.
    for attempt in range(3):
        _, response = c.registration(user, cred)
        r = c.finalize_enrolment(user, response)
        if r.status_code == 200 or "PASSKEY_CHALLENGE_TIMEOUT" not in r.text:
            break
    assert r.status_code == 200, r.text
    response = c.assertion(cred)
    time.sleep(2.5)
    error(c.finalize_sign_in(response), "PASSKEY_CHALLENGE_TIMEOUT")


def test_invalid_id_token_at_enrolment(gh):
    c = Client(gh)
    user = c.anonymous()
    _, response = c.registration(user)
    error(c.call("passkeyEnrollment:start", {"idToken": "not-a-token"}), "INVALID_ID_TOKEN")
    error(c.finalize_enrolment({"idToken": "not-a-token"}, response), "INVALID_ID_TOKEN")
    forged = user["idToken"][:-8] + ("AAAAAAAA" if not user["idToken"].endswith("AAAAAAAA") else "BBBBBBBB")
    error(c.call("passkeyEnrollment:start", {"idToken": forged}), "INVALID_ID_TOKEN")


def test_unknown_credentials_are_not_found(gh):
    c = Client(gh)
    user, cred = enrolled(c)
    # A key the server never saw, for a user it knows.
    stranger = new_credential(user_handle=user["localId"].encode())
    error(c.sign_in(stranger), "PASSKEY_CREDENTIAL_NOT_FOUND")
    # The enrolled key announcing another credential id.
    error(c.sign_in(cred, credential_id=os.urandom(32)), "PASSKEY_CREDENTIAL_NOT_FOUND")
    c.signed_in(cred, user)


def test_a_credential_of_another_project_is_not_found(make_gatehouse):
    """Two projects on one Gatehouse, told apart by their API keys: a passkey belongs to one."""
    g = make_gatehouse(config={"mode": "dev", "projects": [
        project(PROJECT, {"enabled": True}, api_keys=["key-a"]),
        project(OTHER_PROJECT, {"enabled": True}, api_keys=["key-b"])]})
    a, b = Client(g, key="key-a"), Client(g, key="key-b")
    user, cred = enrolled(a)
    error(b.sign_in(cred), "PASSKEY_CREDENTIAL_NOT_FOUND")
    assert claims(a.signed_in(cred, user)["idToken"])["aud"] == PROJECT
    # Uniqueness is per project: the same credential id may be a user's of the other project.
    other_user = b.anonymous()
    twin = b.enrol(other_user, cred=new_credential(user_handle=other_user["localId"].encode(), credential_id=cred.credential_id))
    assert claims(b.signed_in(twin, other_user)["idToken"])["aud"] == OTHER_PROJECT


# --- each WebAuthn check on its own ----------------------------------------------------------------------

# Overrides of an otherwise valid response, each failing one check of the relying party; given the
# port of the Gatehouse under test, as a page's origin carries it.
ENROLMENT_BREAKS = {
    "origin 127.0.0.1": lambda port: {"origin": f"http://127.0.0.1:{port}"},
    "origin of another site": lambda port: {"origin": "https://evil.example"},
    "origin whose host only starts with localhost": lambda port: {"origin": f"http://localhost.evil.example:{port}"},
    "rp id": lambda port: {"rp_id": "example.com"},
    "type": lambda port: {"type_": "webauthn.get"},
    "unknown challenge": lambda port: {"challenge": os.urandom(32)},
    "user not present": lambda port: {"flags": REGISTRATION_FLAGS & ~UP},
    "user not verified": lambda port: {"flags": REGISTRATION_FLAGS & ~UV},
}
SIGN_IN_BREAKS = {
    "origin 127.0.0.1": lambda port: {"origin": f"http://127.0.0.1:{port}"},
    "origin of another site": lambda port: {"origin": "https://evil.example"},
    "rp id": lambda port: {"rp_id": "example.com"},
    "type": lambda port: {"type_": "webauthn.create"},
    "unknown challenge": lambda port: {"challenge": os.urandom(32)},
    "user not present": lambda port: {"flags": ASSERTION_FLAGS & ~UP},
    "user not verified": lambda port: {"flags": ASSERTION_FLAGS & ~UV},
    "bad signature": lambda port: {"corrupt_signature": True},
}


@pytest.mark.parametrize("broken", list(ENROLMENT_BREAKS))
def test_enrolment_refuses(gh, broken):
    c = Client(gh)
    user = c.anonymous()
    cred, response = c.registration(user, **ENROLMENT_BREAKS[broken](gh.port))
    error(c.finalize_enrolment(user, response), "INVALID_AUTHENTICATOR_RESPONSE")
    assert c.passkeys(user) == []
    # The same credential, answered properly, enrols: nothing of the refused attempt remained.
    c.enrol(user, cred)


@pytest.mark.parametrize("broken", list(SIGN_IN_BREAKS))
def test_sign_in_refuses(gh, broken):
    c = Client(gh)
    user, cred = enrolled(c)
    error(c.sign_in(cred, **SIGN_IN_BREAKS[broken](gh.port)), "INVALID_AUTHENTICATOR_RESPONSE")
    c.signed_in(cred, user)


def test_a_challenge_answers_once(gh):
    c = Client(gh)
    user = c.anonymous()
    options = c.enrolment_options(user)
    challenge, handle = decode_any(options["challenge"]), decode_any(options["user"]["id"])
    first, second = new_credential(user_handle=handle), new_credential(user_handle=handle)
    assert c.finalize_enrolment(user, registration_response(first, challenge, c.origin)).status_code == 200
    error(c.finalize_enrolment(user, registration_response(second, challenge, c.origin)), "INVALID_AUTHENTICATOR_RESPONSE")
    challenge = decode_any(c.request_options()["challenge"])
    c.signed_in(first, user, challenge=challenge)
    # The same challenge again, with a counter that would otherwise pass.
    error(c.sign_in(first, challenge=challenge), "INVALID_AUTHENTICATOR_RESPONSE")


def test_challenges_belong_to_their_ceremony(gh):
    """An enrolment challenge does not sign in, and a sign-in challenge does not enrol."""
    c = Client(gh)
    user, cred = enrolled(c)
    enrolment_challenge = decode_any(c.enrolment_options(user)["challenge"])
    error(c.sign_in(cred, challenge=enrolment_challenge), "INVALID_AUTHENTICATOR_RESPONSE")
    sign_in_challenge = decode_any(c.request_options()["challenge"])
    _, response = c.registration(user, alg=EDDSA, challenge=sign_in_challenge)
    error(c.finalize_enrolment(user, response), "INVALID_AUTHENTICATOR_RESPONSE")


def test_an_enrolment_challenge_belongs_to_its_user(gh):
    c = Client(gh)
    user, other = c.anonymous(), c.anonymous()
    others_challenge = decode_any(c.enrolment_options(other)["challenge"])
    _, response = c.registration(user, challenge=others_challenge)
    error(c.finalize_enrolment(user, response), "INVALID_AUTHENTICATOR_RESPONSE")
    assert c.passkeys(user) == []


def test_a_user_handle_of_another_user_is_refused(gh):
    c = Client(gh)
    user, cred = enrolled(c)
    other, _ = enrolled(c)
    error(c.sign_in(cred, user_handle=other["localId"].encode()), "INVALID_AUTHENTICATOR_RESPONSE")
    c.signed_in(cred, user)


def test_sign_counter(gh):
    """Above the stored value whenever either is non-zero (a cloned authenticator lags); both zero
    (a synced passkey keeps no counter) always passes."""
    c = Client(gh)
    user, cred = enrolled(c)                     # registered with 0
    c.signed_in(cred, user, counter=5)
    error(c.sign_in(cred, counter=5), "INVALID_AUTHENTICATOR_RESPONSE")
    error(c.sign_in(cred, counter=3), "INVALID_AUTHENTICATOR_RESPONSE")
    error(c.sign_in(cred, counter=0), "INVALID_AUTHENTICATOR_RESPONSE")
    c.signed_in(cred, user, counter=6)
    # The registration's own counter is the first stored value.
    user, counted = enrolled(c, counter=7)
    error(c.sign_in(counted, counter=7), "INVALID_AUTHENTICATOR_RESPONSE")
    c.signed_in(counted, user, counter=8)
    # No counter at all: zero every time.
    user, synced = enrolled(c)
    for _ in range(3):
        c.signed_in(synced, user, counter=0)


# --- second factors --------------------------------------------------------------------------------------

def test_a_passkey_skips_the_second_factor_by_default(gh):
    """A passkey is already two factors (the device, and the biometric or PIN that verified the
    user): by default it signs a TOTP user straight in."""
    c = Client(gh)
    user = totp_user(gh)
    cred = c.enrol(user)
    body = c.signed_in(cred, user)
    assert "mfaPendingCredential" not in body
    assert claims(body["idToken"])["firebase"]["sign_in_provider"] == "passkey"


def test_a_passkey_then_the_second_factor_when_the_project_says_so(make_gatehouse):
    g = make_gatehouse(config=config(skip_second_factor=False))
    c = Client(g)
    user = totp_user(g)
    cred = c.enrol(user)
    r = c.sign_in(cred)
    assert r.status_code == 200, r.text
    body = r.json()
    assert "idToken" not in body and "refreshToken" not in body, body
    hint = body["mfaInfo"][0]
    assert hint["mfaEnrollmentId"] == user["enrollmentId"] and hint["totpInfo"] == {}
    # The TOTP code finishes the sign-in (the enrolment used the current step; each step once).
    r = mfa(g, "mfaSignIn:finalize", {"mfaPendingCredential": body["mfaPendingCredential"], "mfaEnrollmentId": user["enrollmentId"],
                                      "totpVerificationInfo": {"verificationCode": user["totp"].at(time.time() + 30)}})
    assert r.status_code == 200, r.text
    token = claims(r.json()["idToken"])
    assert token["sub"] == user["localId"] and token["firebase"]["sign_in_second_factor"] == "totp"
    assert token["firebase"]["sign_in_provider"] == "passkey"


def test_removing_the_passkey_ends_its_pending_second_factor(make_gatehouse):
    """A first factor passed with a passkey, then the owner removes the passkey: the pending
    credential it earned no longer completes with the second factor."""
    g = make_gatehouse(config=config(skip_second_factor=False))
    c = Client(g)
    user = totp_user(g)
    cred = c.enrol(user)
    pending = c.sign_in(cred).json()["mfaPendingCredential"]
    removed = c.delete(user, cred.id)
    assert removed.status_code == 200, removed.text
    r = mfa(g, "mfaSignIn:finalize", {"mfaPendingCredential": pending, "mfaEnrollmentId": user["enrollmentId"],
                                      "totpVerificationInfo": {"verificationCode": user["totp"].at(time.time() + 30)}})
    error(r, "INVALID_MFA_PENDING_CREDENTIAL")


# --- two relying parties agree ---------------------------------------------------------------------------

def test_the_software_authenticator_agrees_with_the_webauthn_library():
    """No server: webauthn_support's own self-check (CBOR vectors; each algorithm's responses
    accepted, and broken ones refused, by the `webauthn` library)."""
    pytest.importorskip("webauthn")
    self_check()


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_gatehouse_and_the_webauthn_library_accept_the_same_responses(gh, alg):
    webauthn = pytest.importorskip("webauthn")
    c = Client(gh)
    user = c.anonymous()
    options = c.enrolment_options(user)
    challenge = decode_any(options["challenge"])
    cred = new_credential(alg, user_handle=decode_any(options["user"]["id"]))
    response = registration_response(cred, challenge, c.origin)
    verified = webauthn.verify_registration_response(
        credential=response, expected_challenge=challenge, expected_origin=c.origin, expected_rp_id=options["rp"]["id"],
        require_user_verification=True)
    assert verified.credential_id == cred.credential_id
    r = c.finalize_enrolment(user, response)
    assert r.status_code == 200, r.text

    options = c.request_options()
    challenge = decode_any(options["challenge"])
    response = assertion_response(cred, challenge, c.origin)
    checked = webauthn.verify_authentication_response(
        credential=response, expected_challenge=challenge, expected_origin=c.origin, expected_rp_id=options["rpId"],
        credential_public_key=verified.credential_public_key, credential_current_sign_count=verified.sign_count,
        require_user_verification=True)
    assert checked.credential_id == cred.credential_id
    r = c.finalize_sign_in(response)
    assert r.status_code == 200, r.text
    assert r.json()["localId"] == user["localId"]


# --- nginx: ?require=passkey and the step-up -------------------------------------------------------

def cookie_for(gh, id_token: str) -> str:
    r = gh.post(f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}:createSessionCookie",
                json={"idToken": id_token, "validDuration": 3600}, headers={"Authorization": "Bearer owner"})
    assert r.status_code == 200, r.text
    return r.json()["sessionCookie"]


def visit(gh, path: str, cookie: str | None):
    return gh.get(path, headers={"Cookie": f"__Host-gatehouse={cookie}"} if cookie else {})


def test_require_passkey_at_nginx(gh):
    """/demo/passkey/ (protect-passkey.conf) lets in only a session signed in with a passkey; any
    other session goes to the passkey sign-in page and back; a passkey session also passes the
    step-up of /demo/mfa/ (user verification makes it multi-factor)."""
    c = Client(gh)
    user, cred = enrolled(c)
    anonymous = visit(gh, "/demo/passkey/", cookie_for(gh, user["idToken"]))   # the enrolment kept the anonymous sign-in
    assert anonymous.status_code == 302
    loc = urllib.parse.urlsplit(anonymous.headers["Location"])
    assert loc.path == "/__/auth/passkey"
    assert urllib.parse.parse_qs(loc.query)["continueUrl"][0].endswith("/demo/passkey/")
    signed = c.signed_in(cred, user)
    passkey_cookie = cookie_for(gh, signed["idToken"])
    ok = visit(gh, "/demo/passkey/", passkey_cookie)
    assert ok.status_code == 200 and "X-Auth-Provider: passkey" in ok.text, ok.text
    assert visit(gh, "/demo/mfa/", passkey_cookie).status_code == 200
    assert visit(gh, "/demo/passkey/", None).status_code == 302
    # The internal location is not reachable from outside.
    assert gh.get("/__/auth/verify?require=passkey").status_code == 404


def test_require_passkey_in_a_project_without_passkeys_is_forbidden(make_gatehouse):
    g = make_gatehouse({"mode": "dev", "projects": [project()]})
    user = Client(g).anonymous()
    assert visit(g, "/demo/passkey/", cookie_for(g, user["idToken"])).status_code == 403


def test_app_association_files_name_the_apps_that_may_use_passkeys(make_gatehouse):
    print_hex = ":".join(["AB"] * 32)
    apps = {"ios_apps": [{"bundle_id": "com.example.pk", "team_id": "TEAMPK0001", "app_id": "1:1:ios:pk"}],
            "android_apps": [{"package_name": "com.example.pk", "sha256_cert_fingerprints": [print_hex]}]}
    on = make_gatehouse({"mode": "dev", "projects": [project(passkeys=dict({"enabled": True}, **CHALLENGE_BUDGET), **apps)]})
    aasa = on.get("/.well-known/apple-app-site-association").json()
    assert aasa["webcredentials"] == {"apps": ["TEAMPK0001.com.example.pk"]}
    links = on.get("/.well-known/assetlinks.json").json()
    assert links[0]["relation"] == ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"]
    # The app's origin (android:apk-key-hash: and the base64url of the certificate's SHA-256) is accepted.
    c = Client(on, origin="android:apk-key-hash:" + base64.urlsafe_b64encode(bytes([0xAB] * 32)).decode().rstrip("="))
    user, cred = enrolled(c)
    c.signed_in(cred, user)
    off = make_gatehouse({"mode": "dev", "projects": [project(**apps)]})
    assert "webcredentials" not in off.get("/.well-known/apple-app-site-association").json()
    assert off.get("/.well-known/assetlinks.json").json()[0]["relation"] == ["delegate_permission/common.handle_all_urls"]


# --- concurrent requests (run on SQLite and on PostgreSQL by the suite) ------------------------------

def race(*calls):
    """Runs each call on its own thread, released together; their results in order."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i, call):
        barrier.wait()
        results[i] = call()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_one_assertion_sent_twice_at_once_signs_in_once(gh):
    """The same assertion (one challenge) finalized by two requests at the same moment: the
    challenge is consumed by a conditional write, so exactly one gets tokens, the other is refused."""
    c = Client(gh)
    user, cred = enrolled(c)
    for _ in range(5):
        response = c.assertion(cred)
        answers = race(lambda: c.finalize_sign_in(response), lambda: c.finalize_sign_in(response))
        assert sorted(a.status_code for a in answers) == [200, 400], [a.text for a in answers]
        error(next(a for a in answers if a.status_code == 400), "INVALID_AUTHENTICATOR_RESPONSE")


def test_two_assertions_with_one_counter_value_at_once_sign_in_once(gh):
    """A cloned authenticator used beside the owner's at the same moment: two assertions (two
    challenges) carrying the same counter value; the counter is written only if it is still the
    one each read, so one signs in and the other is refused."""
    c = Client(gh)
    user, cred = enrolled(c)
    for _ in range(5):
        cred.sign_count += 1
        first, second = c.assertion(cred, counter=cred.sign_count), c.assertion(cred, counter=cred.sign_count)
        answers = race(lambda: c.finalize_sign_in(first), lambda: c.finalize_sign_in(second))
        assert sorted(a.status_code for a in answers) == [200, 400], [a.text for a in answers]


def test_a_sign_in_racing_the_removal_of_its_passkey_leaves_nothing_working(gh):
    """A passkey sign-in in flight while the owner removes that passkey: either the sign-in fails,
    or it committed first and the removal revoked its refresh token; never a working token made
    with a removed passkey."""
    c = Client(gh)
    outcomes = set()
    for _ in range(6):
        user, cred = enrolled(c)
        response = c.assertion(cred)
        signed, removed = race(lambda: c.finalize_sign_in(response), lambda: c.delete(user, cred.id))
        assert removed.status_code == 200, removed.text
        assert c.passkeys(dict(user, idToken=removed.json()["idToken"])) == []
        if signed.status_code == 200:
            outcomes.add("signed in first")
            error(refresh(gh, signed.json()["refreshToken"]), "TOKEN_EXPIRED")
        else:
            outcomes.add("refused")
            assert signed.json()["error"]["message"].split(" ")[0] in {"PASSKEY_CREDENTIAL_NOT_FOUND", "INVALID_AUTHENTICATOR_RESPONSE"}
        # Afterwards the passkey signs nobody in.
        error(c.sign_in(cred), "PASSKEY_CREDENTIAL_NOT_FOUND")


def test_a_passkey_sign_in_stands_for_the_second_factor_until_the_passkey_goes(gh):
    """A TOTP user signed in with a passkey (user verified: multi-factor on its own) may change
    how they sign in, as after passing TOTP; once the passkey is removed, nothing issued before
    works: not its refresh token, not its ID token (validSince), as after a factor's removal."""
    c = Client(gh)
    user = totp_user(gh)
    cred = c.enrol(user)
    signed = c.signed_in(cred, user)
    by_passkey = dict(user, idToken=signed["idToken"], refreshToken=signed["refreshToken"])
    c.enrol(by_passkey)                      # a second passkey, with the passkey sign-in as proof
    time.sleep(1.1)                          # validSince is in seconds: the removal a second later
    removed = c.delete(user, cred.id)
    assert removed.status_code == 200, removed.text
    fresh = removed.json()
    assert fresh["idToken"] and fresh["refreshToken"]
    error(refresh(gh, signed["refreshToken"]), "TOKEN_EXPIRED")
    error(c.v1("lookup", {"idToken": signed["idToken"]}), "TOKEN_EXPIRED")
    error(c.call("passkeyEnrollment:start", {"idToken": signed["idToken"]}), "TOKEN_EXPIRED")
    # The caller goes on in the tokens the removal answered.
    assert len(c.passkeys(dict(user, idToken=fresh["idToken"]))) == 1


def test_a_web_app_on_another_origin_may_call_the_passkey_wire(make_gatehouse, tmp_path):
    """The passkey calls are client API calls like the others: in production a browser app on an
    origin its API key allows gets its preflight answered and CORS headers on the answers; another
    origin gets neither."""
    app, evil = "https://app.example.test", "https://evil.example.test"
    config = production_config(tmp_path, {"provider": "webhook", "url": "http://127.0.0.1:9/sms", "secret": "s" * 32},
                               authorized_domains=["app.example.test"], api_key_origins={PROD_API_KEY: [app]},
                               passkeys=dict({"enabled": True, "rp_id": "example.test"}, **CHALLENGE_BUDGET))
    g = make_gatehouse(config=config)
    url = g.url(f"{V2}/passkeySignIn:start") + f"?key={PROD_API_KEY}"
    asked = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-client-version"}
    pre = requests.options(url, timeout=10, headers=dict(asked, Origin=app))
    assert pre.status_code == 204 and pre.headers["Access-Control-Allow-Origin"] == app
    r = requests.post(url, json={}, timeout=10, headers={"Origin": app})
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == app, r.text
    assert r.json()["credentialRequestOptions"]["rpId"] == "example.test"
    refused = requests.options(url, timeout=10, headers=dict(asked, Origin=evil))
    assert refused.status_code == 403 and "Access-Control-Allow-Origin" not in refused.headers
    assert "Access-Control-Allow-Origin" not in requests.post(url, json={}, timeout=10, headers={"Origin": evil}).headers
