"""Third-party compatibility of the proof of work with the `altcha` PyPI package (ALTCHA v1):
the package solves and verifies Gatehouse's challenges, and Gatehouse verifies the package's."""
import base64
import datetime
import json
import re

import altcha
import pytest

from appverify_helpers import TOKEN_RE, solve
from conftest import assert_envelope


@pytest.fixture(scope="module")
def hmac_key(gatehouse):
    """The deployment's HMAC key through the dev-only CLI tool."""
    out = gatehouse.tool("appverify", "hmac-key").stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", out), out
    return bytes.fromhex(out)


def test_challenge_is_altcha_v1(gatehouse):
    r = gatehouse.get("/__/auth/challenge", params={"apiKey": "test-api-key"})
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == "no-store"
    c = r.json()
    assert set(c) == {"algorithm", "challenge", "maxnumber", "salt", "signature"}
    assert c["algorithm"] == "SHA-256"
    assert re.fullmatch(r"[0-9a-f]{64}", c["challenge"]) and re.fullmatch(r"[0-9a-f]{64}", c["signature"])
    assert re.fullmatch(r"[0-9a-f]{24}\?expires=\d{10}&scope=[0-9a-f]{16}&", c["salt"]), c["salt"]
    assert isinstance(c["maxnumber"], int) and c["maxnumber"] >= 1000


def test_altcha_solves_our_challenge_and_we_accept_it(gatehouse, hmac_key):
    c = gatehouse.get("/__/auth/challenge", params={"apiKey": "test-api-key"}).json()
    payload = solve(c)
    # The package's own verifier accepts the solution with our key (same hash, HMAC and salt rules).
    assert altcha.verify_solution_v1(payload, hmac_key) == (True, None)
    r = gatehouse.post("/__/auth/challenge", json={"payload": payload, "apiKey": "test-api-key"})
    assert r.status_code == 200, r.text
    assert TOKEN_RE.fullmatch(r.json()["token"]), r.text
    assert "redirect" not in r.json()
    again = gatehouse.post("/__/auth/challenge", json={"payload": payload, "apiKey": "test-api-key"})
    assert_envelope(again, 400, "CAPTCHA_CHECK_FAILED : Proof of work verification failed - REPLAYED")


def test_widget_form_post_with_the_altcha_field(gatehouse):
    """ALTCHA's widget puts its solution in a hidden form field named `altcha`; a form posted as
    the browser posts it (urlencoded) is accepted like the JSON body, and replayed is refused."""
    c = gatehouse.get("/__/auth/challenge", params={"apiKey": "test-api-key"}).json()
    payload = solve(c)
    r = gatehouse.post("/__/auth/challenge", data={"altcha": payload, "apiKey": "test-api-key"})
    assert r.status_code == 200, r.text
    assert r.request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert TOKEN_RE.fullmatch(r.json()["token"]), r.text
    again = gatehouse.post("/__/auth/challenge", data={"altcha": payload, "apiKey": "test-api-key"})
    assert_envelope(again, 400, "CAPTCHA_CHECK_FAILED : Proof of work verification failed - REPLAYED")
    assert_envelope(gatehouse.post("/__/auth/challenge", data={"altcha": ""}), 400,
                    "MISSING_APP_CREDENTIAL : Missing proof of work payload.")


def test_we_verify_a_challenge_made_by_the_package(gatehouse, hmac_key):
    expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)
    c = altcha.create_challenge_v1(altcha.ChallengeOptionsV1(hmac_key=hmac_key, max_number=5000, expires=expires))
    assert c.salt.endswith("&") and "expires=" in c.salt
    solution = altcha.solve_challenge_v1(c)
    payload = altcha.PayloadV1(c.algorithm, c.challenge, solution.number, c.salt, c.signature).to_base64()
    check = gatehouse.tool("appverify", "verify-payload", payload)
    assert check.stdout.startswith("valid: expires at"), check.stdout
    r = gatehouse.post("/__/auth/challenge", json={"payload": payload})
    assert r.status_code == 200, r.text
    assert TOKEN_RE.fullmatch(r.json()["token"])


def test_package_challenge_with_another_key_is_refused(gatehouse):
    expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)
    c = altcha.create_challenge_v1(altcha.ChallengeOptionsV1(hmac_key=b"not the deployment key", max_number=2000, expires=expires))
    solution = altcha.solve_challenge_v1(c)
    payload = altcha.PayloadV1(c.algorithm, c.challenge, solution.number, c.salt, c.signature).to_base64()
    check = gatehouse.tool("appverify", "verify-payload", payload, check=False)
    assert check.returncode == 1 and "INVALID" in check.stdout, check.stdout
    assert_envelope(gatehouse.post("/__/auth/challenge", json={"payload": payload}), 400,
                    "CAPTCHA_CHECK_FAILED : Proof of work verification failed - INVALID")


def test_expired_package_challenge_is_refused(gatehouse, hmac_key):
    expires = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=5)
    c = altcha.create_challenge_v1(altcha.ChallengeOptionsV1(hmac_key=hmac_key, max_number=2000, expires=expires))
    solution = altcha.solve_challenge_v1(c)
    payload = altcha.PayloadV1(c.algorithm, c.challenge, solution.number, c.salt, c.signature).to_base64()
    assert_envelope(gatehouse.post("/__/auth/challenge", json={"payload": payload}), 400,
                    "CAPTCHA_CHECK_FAILED : Proof of work verification failed - EXPIRED")


@pytest.mark.parametrize("field,value,reason", [
    ("salt", lambda s: s.replace("expires=", "expires=9"), "INVALID"),
    ("signature", lambda s: "0" * 64, "INVALID"),
    ("challenge", lambda s: "f" * 64, "INVALID"),
    ("number", lambda n: n + 1, "INVALID"),
    ("algorithm", lambda a: "SHA-512", "INVALID"),
])
def test_tampered_solutions_are_refused(gatehouse, field, value, reason):
    c = gatehouse.get("/__/auth/challenge").json()
    good = json.loads(base64.b64decode(solve(c)))
    good[field] = value(good[field])
    payload = base64.b64encode(json.dumps(good).encode()).decode()
    assert_envelope(gatehouse.post("/__/auth/challenge", json={"payload": payload}), 400,
                    f"CAPTCHA_CHECK_FAILED : Proof of work verification failed - {reason}")


@pytest.mark.parametrize("payload", ["%%%", base64.b64encode(b'{"algorithm": "SHA-256"}').decode(), "W10="])
def test_malformed_payloads_are_refused(gatehouse, payload):
    assert_envelope(gatehouse.post("/__/auth/challenge", json={"payload": payload}), 400,
                    "CAPTCHA_CHECK_FAILED : Proof of work verification failed - MALFORMED")


def test_missing_payload(gatehouse):
    assert_envelope(gatehouse.post("/__/auth/challenge", json={}), 400, "MISSING_APP_CREDENTIAL")


def test_challenge_for_one_key_is_refused_for_another(gatehouse):
    c = gatehouse.get("/__/auth/challenge", params={"apiKey": "key-one"}).json()
    payload = solve(c)
    assert_envelope(gatehouse.post("/__/auth/challenge", json={"payload": payload, "apiKey": "key-two"}), 400,
                    "CAPTCHA_CHECK_FAILED : Proof of work verification failed - SCOPE")
    assert gatehouse.post("/__/auth/challenge", json={"payload": payload, "apiKey": "key-one"}).status_code == 200
