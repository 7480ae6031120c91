"""Helpers for the phone second factor tests (firebase-wire.md §2.17, §5.4): a dev project with MFA
on, email-link first factors, the v2 MFA calls, the dev outbox's codes, enrolment in one call."""
import random
import time
import uuid

import pyotp

from email_support import latest_link

PROJECT = "demo-gatehouse"
V2 = "/identitytoolkit.googleapis.com/v2/accounts"


def config(mfa: str = "ENABLED") -> dict:
    """Dev mode, project demo-gatehouse with `mfa` set; limits high enough for a whole module
    (every request comes from 127.0.0.1)."""
    return {"mode": "dev", "projects": [{
        "id": PROJECT,
        "mfa": mfa,
        "phone": {"verify_attempts_per_ip_per_5min": 10000, "failure_budget_per_day": 100},
        "email_link": {"sends_per_ip_per_hour": 10000},
    }]}


def address(tag: str = "mfa") -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}@example.com"


def number() -> str:
    """A fresh valid French mobile number in E.164."""
    return f"+3361{random.randint(0, 9_999_999):07d}"


def obfuscated(e164: str) -> str:
    """Every digit but the last four as `*`."""
    return "+" + "*" * (len(e164) - 5) + e164[-4:]


def mfa(gh, name: str, body: dict):
    """POST /identitytoolkit.googleapis.com/v2/accounts/<name>?key=…"""
    return gh.post(f"{V2}/{name}", params={"key": "test-api-key"}, json=body)


def email_link_code(gh, email: str) -> str:
    r = gh.api("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": f"{gh.base}/__/auth/health"})
    assert r.status_code == 200, r.text
    return latest_link(gh, email)["oobCode"]


def email_link_sign_in(gh, email: str):
    """The raw `signInWithEmailLink` answer for a fresh link sent to `email`."""
    return gh.api("signInWithEmailLink", {"email": email, "oobCode": email_link_code(gh, email)})


def email_user(gh, tag: str = "mfa") -> dict:
    """A new email-link user (verified email, first factor `password`): the sign-in answer plus `email`."""
    email = address(tag)
    r = email_link_sign_in(gh, email)
    assert r.status_code == 200, r.text
    body = r.json()
    assert "idToken" in body, body
    return dict(body, email=email)


def codes(gh) -> list:
    r = gh.get(f"/emulator/v1/projects/{PROJECT}/verificationCodes")
    assert r.status_code == 200, r.text
    return r.json()["verificationCodes"]


def code_entry(gh, session: str) -> dict:
    """The dev outbox's entry for a sessionInfo (waits briefly for the outbox worker)."""
    for _ in range(100):
        found = [c for c in codes(gh) if c["sessionInfo"] == session]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no code for {session}")


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


def start_enrolment(gh, id_token: str, phone: str) -> str:
    r = mfa(gh, "mfaEnrollment:start", {"idToken": id_token, "phoneEnrollmentInfo": {"phoneNumber": phone}})
    assert r.status_code == 200, r.text
    return r.json()["phoneSessionInfo"]["sessionInfo"]


def enrol(gh, id_token: str, phone: str, display_name: str | None = None) -> dict:
    """Start + finalize: the finalize answer (new idToken, refreshToken)."""
    session = start_enrolment(gh, id_token, phone)
    body = {"idToken": id_token, "phoneVerificationInfo": {"sessionInfo": session, "code": code_entry(gh, session)["code"]}}
    if display_name is not None:
        body["displayName"] = display_name
    r = mfa(gh, "mfaEnrollment:finalize", body)
    assert r.status_code == 200, r.text
    return r.json()


def admin_lookup(gh, local_id: str) -> dict:
    r = gh.admin("/accounts:lookup", {"localId": [local_id]}, project=PROJECT)
    assert r.status_code == 200, r.text
    return r.json()["users"][0]


def challenge(gh, email: str) -> dict:
    """The first-factor answer of an enrolled user (pending credential and hints)."""
    r = email_link_sign_in(gh, email)
    assert r.status_code == 200, r.text
    body = r.json()
    assert "mfaPendingCredential" in body, body
    return body


def pass_second_factor(gh, pending: str, enrollment_id: str) -> dict:
    """mfaSignIn:start + finalize with the code the outbox shows: the finalize answer."""
    r = mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": pending, "mfaEnrollmentId": enrollment_id, "phoneSignInInfo": {}})
    assert r.status_code == 200, r.text
    session = r.json()["phoneResponseInfo"]["sessionInfo"]
    r = mfa(gh, "mfaSignIn:finalize", {"mfaPendingCredential": pending,
                                       "phoneVerificationInfo": {"sessionInfo": session, "code": code_entry(gh, session)["code"]}})
    assert r.status_code == 200, r.text
    return r.json()


def totp_user(gh, tag: str = "totp") -> dict:
    """An email-link user with a TOTP second factor (pyotp computes the codes): the enrolment's
    tokens, the generator and the factor's enrollment id. Each step is accepted once, later ones
    only: the enrolment takes the step before the current one (the projects allow one step either
    side), so a test has the current and the next one left."""
    user = email_user(gh, tag)
    r = mfa(gh, "mfaEnrollment:start", {"idToken": user["idToken"], "totpEnrollmentInfo": {}})
    assert r.status_code == 200, r.text
    info = r.json()["totpSessionInfo"]
    totp = pyotp.TOTP(info["sharedSecretKey"])
    r = mfa(gh, "mfaEnrollment:finalize", {"idToken": user["idToken"], "totpVerificationInfo": {
        "sessionInfo": info["sessionInfo"], "verificationCode": totp.at(time.time() - 30)}})
    assert r.status_code == 200, r.text
    factor = admin_lookup(gh, user["localId"])["mfaInfo"][0]
    return {"localId": user["localId"], "email": user["email"], "idToken": r.json()["idToken"],
            "refreshToken": r.json()["refreshToken"], "totp": totp, "enrollmentId": factor["mfaEnrollmentId"]}
