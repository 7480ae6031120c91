"""TOTP second factor over REST through nginx (Firebase's v2 wire: totpEnrollmentInfo,
totpSessionInfo, totpVerificationInfo, totpInfo), every field and error string; codes computed by
an independent implementation (pyotp); the secret sealed at rest; the Python Admin SDK on users
with a TOTP factor."""
import base64
import datetime
import re
import sqlite3
import time

import pyotp
import pytest
from firebase_admin import auth

from conftest import Gatehouse, admin_sdk, assert_envelope
from mfa_support import PROJECT, address, admin_lookup, email_link_sign_in, email_user, mfa
from session_support import claims

BASE32 = re.compile(r"^[A-Z2-7]{32}$")


def totp_config(enabled: bool = True) -> dict:
    return {"mode": "dev", "projects": [{
        "id": PROJECT, "mfa": "ENABLED", "mfa_totp": {"enabled": enabled, "adjacent_intervals": 1},
        "phone": {"verify_attempts_per_ip_per_5min": 10000, "failure_budget_per_day": 100},
        "email_link": {"sends_per_ip_per_hour": 10000},
    }]}


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("gh-totp"), config=totp_config()).start()
    yield g
    g.stop()


def error(resp, message: str, status: int = 400):
    err = assert_envelope(resp, status, message)
    assert err["message"] == message, err["message"]


def start(gh, id_token: str) -> dict:
    r = mfa(gh, "mfaEnrollment:start", {"idToken": id_token, "totpEnrollmentInfo": {}})
    assert r.status_code == 200, r.text
    assert r.headers.get("Cache-Control") == "no-store"
    return r.json()["totpSessionInfo"]


def finalize(gh, id_token: str, session: str, code: str, name: str | None = None):
    body = {"idToken": id_token, "totpVerificationInfo": {"sessionInfo": session, "verificationCode": code}}
    if name is not None:
        body["displayName"] = name
    return mfa(gh, "mfaEnrollment:finalize", body)


def enrolled_user(gh) -> dict:
    user = email_user(gh, "totp")
    info = start(gh, user["idToken"])
    totp = pyotp.TOTP(info["sharedSecretKey"])
    r = finalize(gh, user["idToken"], info["sessionInfo"], totp.now(), "Authenticator")
    assert r.status_code == 200, r.text
    factor = admin_lookup(gh, user["localId"])["mfaInfo"][0]
    return dict(user, totp=totp, secret=info["sharedSecretKey"], enrollmentId=factor["mfaEnrollmentId"], tokens=r.json())


def sign_in_finalize(gh, pending, enrollment_id, code):
    body = {"mfaPendingCredential": pending, "mfaEnrollmentId": enrollment_id, "totpVerificationInfo": {"verificationCode": code}}
    return mfa(gh, "mfaSignIn:finalize", {k: v for k, v in body.items() if v is not None})


def test_start_answers_every_field_of_totp_session_info(gh):
    user = email_user(gh, "totp")
    info = start(gh, user["idToken"])
    assert set(info) == {"sharedSecretKey", "verificationCodeLength", "hashingAlgorithm", "periodSec", "sessionInfo",
                         "finalizeEnrollmentTime"}
    assert BASE32.match(info["sharedSecretKey"]) and len(base64.b32decode(info["sharedSecretKey"])) == 20
    assert info["verificationCodeLength"] == 6 and info["hashingAlgorithm"] == "SHA1" and info["periodSec"] == 30
    assert info["sessionInfo"].startswith("ghtotp1.")
    deadline = datetime.datetime.fromisoformat(info["finalizeEnrollmentTime"].replace("Z", "+00:00"))
    ahead = (deadline - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    assert 590 <= ahead <= 601
    # Two starts, two secrets.
    assert start(gh, user["idToken"])["sharedSecretKey"] != info["sharedSecretKey"]


def test_enrolment_with_pyotp_codes_and_its_errors(gh):
    user = email_user(gh, "totp")
    info = start(gh, user["idToken"])
    totp = pyotp.TOTP(info["sharedSecretKey"])
    code = totp.now()
    error(mfa(gh, "mfaEnrollment:finalize", {"totpVerificationInfo": {"sessionInfo": info["sessionInfo"], "verificationCode": code}}),
          "MISSING_ID_TOKEN")
    error(mfa(gh, "mfaEnrollment:finalize", {"idToken": user["idToken"], "totpVerificationInfo": {"verificationCode": code}}),
          "MISSING_SESSION_INFO")
    error(mfa(gh, "mfaEnrollment:finalize", {"idToken": user["idToken"], "totpVerificationInfo": {"sessionInfo": info["sessionInfo"]}}),
          "MISSING_CODE")
    tampered = info["sessionInfo"][:-4] + ("AAAA" if not info["sessionInfo"].endswith("AAAA") else "BBBB")
    error(finalize(gh, user["idToken"], tampered, code), "INVALID_SESSION_INFO")
    error(finalize(gh, user["idToken"], info["sessionInfo"], "000000" if code != "000000" else "111111"), "INVALID_CODE")
    # Another user's session is not this user's.
    other = email_user(gh, "totp")
    error(finalize(gh, other["idToken"], info["sessionInfo"], code), "INVALID_SESSION_INFO")
    r = finalize(gh, user["idToken"], info["sessionInfo"], code, "Phone app")
    assert r.status_code == 200, r.text
    body = r.json()
    assert {"idToken", "refreshToken"} <= set(body)
    c = claims(body["idToken"])
    factor = admin_lookup(gh, user["localId"])["mfaInfo"]
    assert c["firebase"]["sign_in_second_factor"] == "totp"
    assert c["firebase"]["second_factor_identifier"] == factor[0]["mfaEnrollmentId"]
    assert factor[0]["totpInfo"] == {} and "phoneInfo" not in factor[0] and factor[0]["displayName"] == "Phone app"
    # The session enrols once.
    error(finalize(gh, body["idToken"], info["sessionInfo"], totp.at(time.time() + 30)), "SESSION_EXPIRED")


def test_the_secret_is_never_shown_again_nor_stored_in_clear(gh):
    u = enrolled_user(gh)
    for who in (gh.api("lookup", {"idToken": u["tokens"]["idToken"]}), gh.admin("/accounts:lookup", {"localId": [u["localId"]]})):
        assert who.status_code == 200 and u["secret"] not in who.text
    if getattr(gh, "store_url", None):
        pytest.skip("the SQLite file is read only on SQLite")
    db = sqlite3.connect(str(gh.data / "gatehouse.db"))
    dump = "\n".join(db.iterdump())
    db.close()
    raw = base64.b32decode(u["secret"])
    assert u["secret"] not in dump and raw.hex() not in dump and base64.b64encode(raw).decode() not in dump
    # The key is a file of its own beside the database, not in it.
    assert (gh.data / "totp.key").exists()


def test_sign_in_hints_finalize_and_replay(gh):
    u = enrolled_user(gh)
    r = email_link_sign_in(gh, u["email"])
    body = r.json()
    assert "idToken" not in body
    hint = body["mfaInfo"][0]
    assert hint["mfaEnrollmentId"] == u["enrollmentId"] and hint["totpInfo"] == {} and "phoneInfo" not in hint
    pending = body["mfaPendingCredential"]
    # No start for TOTP.
    error(mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": pending, "mfaEnrollmentId": u["enrollmentId"], "phoneSignInInfo": {}}),
          "INVALID_ARGUMENT : TOTP factors need no mfaSignIn:start.")
    code = u["totp"].at(time.time() + 30)   # the enrolment used the current step
    error(sign_in_finalize(gh, None, u["enrollmentId"], code), "MISSING_CREDENTIAL : Please set MFA Pending Credential.")
    error(sign_in_finalize(gh, pending, None, code), "MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.")
    error(sign_in_finalize(gh, pending, "NoSuchEnrollmentIdXXXXXXXXXX", code), "MFA_ENROLLMENT_NOT_FOUND")
    error(sign_in_finalize(gh, "ghmfa1.nope", u["enrollmentId"], code), "INVALID_MFA_PENDING_CREDENTIAL")
    error(mfa(gh, "mfaSignIn:finalize", {"mfaPendingCredential": pending, "mfaEnrollmentId": u["enrollmentId"],
                                         "totpVerificationInfo": {}}), "MISSING_CODE")
    r = sign_in_finalize(gh, pending, u["enrollmentId"], code)
    assert r.status_code == 200, r.text
    c = claims(r.json()["idToken"])
    assert c["firebase"]["sign_in_second_factor"] == "totp" and c["firebase"]["sign_in_provider"] == "password"
    # The same code with a new first factor: refused (each step once per factor).
    again = email_link_sign_in(gh, u["email"]).json()["mfaPendingCredential"]
    error(sign_in_finalize(gh, again, u["enrollmentId"], code), "INVALID_CODE")


def test_wrong_codes_spend_the_pending_credential(gh):
    u = enrolled_user(gh)
    pending = email_link_sign_in(gh, u["email"]).json()["mfaPendingCredential"]
    right = u["totp"].at(time.time() + 30)
    wrong = "000000" if right != "000000" else "111111"
    for _ in range(5):
        error(sign_in_finalize(gh, pending, u["enrollmentId"], wrong), "INVALID_CODE")
    error(sign_in_finalize(gh, pending, u["enrollmentId"], right), "INVALID_MFA_PENDING_CREDENTIAL")


def test_withdraw_and_the_admin_sdk_on_a_totp_user(gh):
    u = enrolled_user(gh)
    with admin_sdk(gh, PROJECT) as app:
        record = auth.get_user(u["localId"], app=app)
        assert record.uid == u["localId"]
        updated = auth.update_user(u["localId"], display_name="Ada", app=app)
        assert updated.display_name == "Ada"
    assert [f["mfaEnrollmentId"] for f in admin_lookup(gh, u["localId"])["mfaInfo"]] == [u["enrollmentId"]]
    # An admin keeps the factor by its id, and cannot make one.
    keep = {"localId": u["localId"], "mfa": {"enrollments": [{"mfaEnrollmentId": u["enrollmentId"], "totpInfo": {}}]}}
    assert gh.admin("/accounts:update", keep).status_code == 200
    make = {"localId": u["localId"], "mfa": {"enrollments": [{"mfaEnrollmentId": "NewTotpFactorIdXXXXXXXXXXXXX", "totpInfo": {}}]}}
    error(gh.admin("/accounts:update", make),
          "INVALID_ARGUMENT : mfa.enrollments: a TOTP factor can only be kept, by the mfaEnrollmentId it has")
    r = mfa(gh, "mfaEnrollment:withdraw", {"idToken": u["tokens"]["idToken"], "mfaEnrollmentId": u["enrollmentId"]})
    assert r.status_code == 200, r.text
    assert "mfaInfo" not in admin_lookup(gh, u["localId"])


def test_off_unless_the_project_enables_it(tmp_path):
    g = Gatehouse(tmp_path, config=totp_config(enabled=False)).start()
    try:
        user = email_user(g, "totp")
        error(mfa(g, "mfaEnrollment:start", {"idToken": user["idToken"], "totpEnrollmentInfo": {}}),
              "OPERATION_NOT_ALLOWED : TOTP based MFA not enabled.")
    finally:
        g.stop()
