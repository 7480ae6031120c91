"""Phone second factor over REST through nginx (firebase-wire.md §2.17, §5.4, §2.6, §2.7, §3.1):
v2 accounts/mfaEnrollment:start|finalize|withdraw and accounts/mfaSignIn:start|finalize with an
email-link first factor, the email-link answer of an enrolled user, mfaInfo in accounts:lookup,
the second-factor claims through refresh and session cookies, factors set by admins, the Python
Admin SDK on users with factors, and a project with MFA disabled."""
import datetime
import re
import time

import pytest
from firebase_admin import auth

from conftest import Gatehouse, admin_sdk, assert_envelope
from mfa_support import (PROJECT, address, admin_lookup, challenge, code_entry, codes, config, email_link_code, email_link_sign_in, email_user,
                         enrol, mfa, number, obfuscated, pass_second_factor, start_enrolment, wrong)
from session_support import claims, refresh, session_cookie, sign_up

ENROLLMENT_ID = re.compile(r"^[A-Za-z0-9]{28}$")
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$")
NOT_ELIGIBLE = "UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor."
NOT_ENABLED = "OPERATION_NOT_ALLOWED : SMS based MFA not enabled."


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("gh-mfa"), config=config()).start()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def app(gh):
    with admin_sdk(gh, PROJECT) as a:
        yield a


def error(resp, message: str, status: int = 400):
    """The exact error message of a Firebase envelope."""
    err = assert_envelope(resp, status, message)
    assert err["message"] == message
    return err


def enrolled_user(gh, display_name: str = "Work phone") -> dict:
    """An email-link user with one phone factor: email, localId, phone, enrollmentId and the
    tokens of the enrolment."""
    user = email_user(gh)
    phone = number()
    tokens = enrol(gh, user["idToken"], phone, display_name)
    factor = admin_lookup(gh, user["localId"])["mfaInfo"][0]
    return {"email": user["email"], "localId": user["localId"], "phone": phone, "enrollmentId": factor["mfaEnrollmentId"],
            "idToken": tokens["idToken"], "refreshToken": tokens["refreshToken"]}


def phone_user(gh, phone: str | None = None) -> dict:
    """A phone first-factor user: the signInWithPhoneNumber answer."""
    r = gh.api("sendVerificationCode", {"phoneNumber": phone or number()})
    assert r.status_code == 200, r.text
    session = r.json()["sessionInfo"]
    r = gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code_entry(gh, session)["code"]})
    assert r.status_code == 200, r.text
    return r.json()


def second_factor_claims(token: str) -> tuple:
    f = claims(token)["firebase"]
    return f.get("sign_in_provider"), f.get("sign_in_second_factor"), f.get("second_factor_identifier")


def recent(rfc3339: str, seconds: float = 120) -> bool:
    at = datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00"))
    return abs(datetime.datetime.now(datetime.timezone.utc) - at).total_seconds() < seconds


# --- Enrolment --------------------------------------------------------------------------------

def test_enrolment_sends_a_code_to_the_number_and_gives_tokens_carrying_the_new_factor(gh):
    user = email_user(gh)
    phone = number()
    r = mfa(gh, "mfaEnrollment:start", {"idToken": user["idToken"], "phoneEnrollmentInfo": {"phoneNumber": phone}})
    assert r.status_code == 200, r.text
    assert list(r.json()) == ["phoneSessionInfo"] and list(r.json()["phoneSessionInfo"]) == ["sessionInfo"]
    session = r.json()["phoneSessionInfo"]["sessionInfo"]
    entry = code_entry(gh, session)
    assert entry["phoneNumber"] == phone and re.fullmatch(r"\d{6}", entry["code"])

    r = mfa(gh, "mfaEnrollment:finalize", {"idToken": user["idToken"], "displayName": "Work phone",
                                           "phoneVerificationInfo": {"sessionInfo": session, "code": entry["code"]}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["idToken"] and body["refreshToken"]
    assert not [c for c in codes(gh) if c["sessionInfo"] == session]  # the code is used

    factors = admin_lookup(gh, user["localId"])["mfaInfo"]
    assert len(factors) == 1 and ENROLLMENT_ID.match(factors[0]["mfaEnrollmentId"])
    assert claims(body["idToken"])["sub"] == user["localId"]
    assert second_factor_claims(body["idToken"]) == ("password", "phone", factors[0]["mfaEnrollmentId"])
    # The first factor's tokens carried no second factor.
    assert second_factor_claims(user["idToken"]) == ("password", None, None)


def test_lookup_lists_the_factor_in_full_with_its_name_and_time(gh):
    u = enrolled_user(gh, display_name="Téléphone pro")
    r = gh.api("lookup", {"idToken": u["idToken"]})
    assert r.status_code == 200, r.text
    (info,) = r.json()["users"][0]["mfaInfo"]
    assert info["mfaEnrollmentId"] == u["enrollmentId"] and len(info["mfaEnrollmentId"]) == 28
    assert info["phoneInfo"] == u["phone"]
    assert info["unobfuscatedPhoneInfo"] == u["phone"]
    assert info["displayName"] == "Téléphone pro"
    assert RFC3339.match(info["enrolledAt"]) and recent(info["enrolledAt"]), info["enrolledAt"]
    assert set(info) == {"mfaEnrollmentId", "displayName", "phoneInfo", "enrolledAt", "unobfuscatedPhoneInfo"}
    # A user without factors has no mfaInfo at all.
    plain = email_user(gh)
    assert "mfaInfo" not in gh.api("lookup", {"idToken": plain["idToken"]}).json()["users"][0]


def test_enrolment_start_errors(gh):
    user = email_user(gh)
    phone = number()
    error(mfa(gh, "mfaEnrollment:start", {"phoneEnrollmentInfo": {"phoneNumber": phone}}), "MISSING_ID_TOKEN")
    error(mfa(gh, "mfaEnrollment:start", {"idToken": "", "phoneEnrollmentInfo": {"phoneNumber": phone}}), "MISSING_ID_TOKEN")
    error(mfa(gh, "mfaEnrollment:start", {"idToken": "not.a.token", "phoneEnrollmentInfo": {"phoneNumber": phone}}), "INVALID_ID_TOKEN")
    error(mfa(gh, "mfaEnrollment:start", {"idToken": user["idToken"]}), "INVALID_ARGUMENT : ((Missing phoneEnrollmentInfo.))")
    error(mfa(gh, "mfaEnrollment:start", {"idToken": user["idToken"], "phoneEnrollmentInfo": {}}),
          "INVALID_PHONE_NUMBER : Invalid format.")
    error(mfa(gh, "mfaEnrollment:start", {"idToken": user["idToken"], "phoneEnrollmentInfo": {"phoneNumber": "call me"}}),
          "INVALID_PHONE_NUMBER : Invalid format.")
    assert "mfaInfo" not in admin_lookup(gh, user["localId"])


def test_enrolment_needs_a_verified_email(gh):
    user = email_user(gh)
    r = gh.admin("/accounts:update", {"localId": user["localId"], "emailVerified": False})
    assert r.status_code == 200, r.text
    assert admin_lookup(gh, user["localId"])["emailVerified"] is False
    r = mfa(gh, "mfaEnrollment:start", {"idToken": user["idToken"], "phoneEnrollmentInfo": {"phoneNumber": number()}})
    error(r, "UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")


@pytest.mark.parametrize("first_factor", ["phone", "anonymous"])
def test_phone_and_anonymous_first_factors_cannot_enrol(gh, first_factor):
    token = phone_user(gh)["idToken"] if first_factor == "phone" else sign_up(gh)["idToken"]
    assert claims(token)["firebase"]["sign_in_provider"] == first_factor
    error(mfa(gh, "mfaEnrollment:start", {"idToken": token, "phoneEnrollmentInfo": {"phoneNumber": number()}}), NOT_ELIGIBLE)
    error(mfa(gh, "mfaEnrollment:finalize", {"idToken": token, "phoneVerificationInfo": {"sessionInfo": "ghs1.x", "code": "123456"}}),
          NOT_ELIGIBLE)


def test_a_number_already_enrolled_is_refused_at_start_and_at_finalize(gh):
    u = enrolled_user(gh)
    exists = "SECOND_FACTOR_EXISTS : Phone number already enrolled as second factor for this account."
    error(mfa(gh, "mfaEnrollment:start", {"idToken": u["idToken"], "phoneEnrollmentInfo": {"phoneNumber": u["phone"]}}), exists)
    # The same number in another format is the same number.
    spaced = f"{u['phone'][:3]} {u['phone'][3:4]} {u['phone'][4:]}"
    error(mfa(gh, "mfaEnrollment:start", {"idToken": u["idToken"], "phoneEnrollmentInfo": {"phoneNumber": spaced}}), exists)
    # A number enrolled (here by an admin) between start and finalize.
    other = number()
    session = start_enrolment(gh, u["idToken"], other)
    r = gh.admin("/accounts:update", {"localId": u["localId"], "mfa": {"enrollments": [
        {"mfaEnrollmentId": u["enrollmentId"], "phoneInfo": u["phone"]}, {"phoneInfo": other}]}})
    assert r.status_code == 200, r.text
    r = mfa(gh, "mfaEnrollment:finalize", {"idToken": u["idToken"],
                                           "phoneVerificationInfo": {"sessionInfo": session, "code": code_entry(gh, session)["code"]}})
    error(r, exists)
    assert [f["phoneInfo"] for f in admin_lookup(gh, u["localId"])["mfaInfo"]] == [u["phone"], other]


def test_a_sixth_factor_is_refused_at_start_and_at_finalize(gh):
    user = email_user(gh)
    token = user["idToken"]
    for _ in range(4):
        token = enrol(gh, token, number())["idToken"]
    fifth, sixth = number(), number()
    s5 = start_enrolment(gh, token, fifth)
    s6 = start_enrolment(gh, token, sixth)
    r = mfa(gh, "mfaEnrollment:finalize", {"idToken": token, "phoneVerificationInfo": {"sessionInfo": s5, "code": code_entry(gh, s5)["code"]}})
    assert r.status_code == 200, r.text
    assert len(admin_lookup(gh, user["localId"])["mfaInfo"]) == 5
    r = mfa(gh, "mfaEnrollment:finalize", {"idToken": token, "phoneVerificationInfo": {"sessionInfo": s6, "code": code_entry(gh, s6)["code"]}})
    error(r, "SECOND_FACTOR_LIMIT_EXCEEDED")
    error(mfa(gh, "mfaEnrollment:start", {"idToken": token, "phoneEnrollmentInfo": {"phoneNumber": number()}}),
          "SECOND_FACTOR_LIMIT_EXCEEDED")
    factors = admin_lookup(gh, user["localId"])["mfaInfo"]
    assert len(factors) == 5 and sixth not in [f["phoneInfo"] for f in factors]
    assert len({f["mfaEnrollmentId"] for f in factors}) == 5


def test_enrolment_finalize_errors(gh):
    user = email_user(gh)
    other = email_user(gh)
    phone = number()
    session = start_enrolment(gh, user["idToken"], phone)
    code = code_entry(gh, session)["code"]

    def finalize(body, token=user["idToken"]):
        return mfa(gh, "mfaEnrollment:finalize", {"idToken": token, **body} if token is not None else body)

    error(finalize({"phoneVerificationInfo": {"sessionInfo": session, "code": code}}, token=None), "MISSING_ID_TOKEN")
    error(finalize({}), "INVALID_ARGUMENT : ((Missing phoneVerificationInfo.))")
    error(finalize({"phoneVerificationInfo": {"sessionInfo": session}}), "MISSING_CODE")
    error(finalize({"phoneVerificationInfo": {"code": code}}), "MISSING_SESSION_INFO")
    error(finalize({"phoneVerificationInfo": {"sessionInfo": "ghs1.nope", "code": code}}), "INVALID_SESSION_INFO")
    error(finalize({"phoneVerificationInfo": {"sessionInfo": session, "code": wrong(code)}}), "INVALID_CODE")
    # A code sent to sign in with a phone, or to enrol someone else, enrols nobody here.
    r = gh.api("sendVerificationCode", {"phoneNumber": number()})
    first_factor = r.json()["sessionInfo"]
    error(finalize({"phoneVerificationInfo": {"sessionInfo": first_factor, "code": code_entry(gh, first_factor)["code"]}}),
          "INVALID_SESSION_INFO")
    theirs = start_enrolment(gh, other["idToken"], number())
    error(finalize({"phoneVerificationInfo": {"sessionInfo": theirs, "code": code_entry(gh, theirs)["code"]}}), "INVALID_SESSION_INFO")
    assert "mfaInfo" not in admin_lookup(gh, user["localId"])
    # The right code still enrols after all that.
    r = finalize({"phoneVerificationInfo": {"sessionInfo": session, "code": code}})
    assert r.status_code == 200, r.text
    assert [f["phoneInfo"] for f in admin_lookup(gh, user["localId"])["mfaInfo"]] == [phone]
    # ...once (with the tokens the enrolment answered: the first ones are revoked if issued in an
    # earlier second, and passed no factor, which the user now has, in any case).
    stale = finalize({"phoneVerificationInfo": {"sessionInfo": session, "code": code}})
    assert stale.status_code == 400 and stale.json()["error"]["message"] in (
        "TOKEN_EXPIRED", "CREDENTIAL_TOO_OLD_LOGIN_AGAIN : Sign in again with your second factor to make this change.")
    error(finalize({"phoneVerificationInfo": {"sessionInfo": session, "code": code}}, token=r.json()["idToken"]), "SESSION_EXPIRED")


# --- Sign-in with the second factor -------------------------------------------------------------

def test_email_link_sign_in_of_an_enrolled_user_answers_a_challenge_without_tokens(gh):
    u = enrolled_user(gh)
    before = admin_lookup(gh, u["localId"])
    time.sleep(0.01)
    r = email_link_sign_in(gh, u["email"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"kind", "mfaPendingCredential", "mfaInfo", "email", "localId", "isNewUser"}, body
    assert body["kind"] == "identitytoolkit#EmailLinkSigninResponse"
    assert body["localId"] == u["localId"] and body["email"] == u["email"] and body["isNewUser"] is False
    assert isinstance(body["mfaPendingCredential"], str) and len(body["mfaPendingCredential"]) >= 32
    (hint,) = body["mfaInfo"]
    assert set(hint) == {"mfaEnrollmentId", "displayName", "phoneInfo", "enrolledAt"}
    assert hint["mfaEnrollmentId"] == u["enrollmentId"] and hint["displayName"] == "Work phone"
    assert hint["phoneInfo"] == obfuscated(u["phone"]) and re.fullmatch(r"\+\*{7}\d{4}", hint["phoneInfo"])
    assert RFC3339.match(hint["enrolledAt"])
    after = admin_lookup(gh, u["localId"])
    assert after["lastLoginAt"] == before["lastLoginAt"]
    # Each first factor hands out its own credential.
    assert challenge(gh, u["email"])["mfaPendingCredential"] != body["mfaPendingCredential"]


def test_second_factor_sign_in_gives_tokens_with_both_claims_kept_by_refresh_and_cookies(gh):
    u = enrolled_user(gh)
    before = admin_lookup(gh, u["localId"])["lastLoginAt"]
    c = challenge(gh, u["email"])
    hint = c["mfaInfo"][0]
    # iOS puts the hint's obfuscated number in phoneSignInInfo; the code goes to the enrolled number.
    r = mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": c["mfaPendingCredential"], "mfaEnrollmentId": hint["mfaEnrollmentId"],
                                    "phoneSignInInfo": {"phoneNumber": hint["phoneInfo"]}})
    assert r.status_code == 200, r.text
    assert list(r.json()) == ["phoneResponseInfo"] and list(r.json()["phoneResponseInfo"]) == ["sessionInfo"]
    session = r.json()["phoneResponseInfo"]["sessionInfo"]
    entry = code_entry(gh, session)
    assert entry["phoneNumber"] == u["phone"]

    r = mfa(gh, "mfaSignIn:finalize", {"mfaPendingCredential": c["mfaPendingCredential"],
                                       "phoneVerificationInfo": {"sessionInfo": session, "code": entry["code"]}})
    assert r.status_code == 200, r.text
    tokens = r.json()
    assert tokens["idToken"] and tokens["refreshToken"]
    id_claims = claims(tokens["idToken"])
    assert id_claims["sub"] == u["localId"] and id_claims["email"] == u["email"].lower()
    assert second_factor_claims(tokens["idToken"]) == ("password", "phone", u["enrollmentId"])
    after = admin_lookup(gh, u["localId"])["lastLoginAt"]
    assert int(after) > int(before)
    assert id_claims["auth_time"] == int(after) // 1000

    # The pending credential served once.
    error(mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": c["mfaPendingCredential"], "mfaEnrollmentId": u["enrollmentId"]}),
          "INVALID_MFA_PENDING_CREDENTIAL")
    error(mfa(gh, "mfaSignIn:finalize", {"mfaPendingCredential": c["mfaPendingCredential"],
                                         "phoneVerificationInfo": {"sessionInfo": session, "code": entry["code"]}}),
          "INVALID_MFA_PENDING_CREDENTIAL")

    r = refresh(gh, tokens["refreshToken"])
    assert r.status_code == 200, r.text
    refreshed = r.json()
    assert refreshed["user_id"] == u["localId"]
    assert second_factor_claims(refreshed["id_token"]) == ("password", "phone", u["enrollmentId"])
    assert claims(refreshed["id_token"])["auth_time"] == id_claims["auth_time"]

    cookie = claims(session_cookie(gh, tokens["idToken"]))
    assert cookie["iss"] == f"https://session.firebase.google.com/{PROJECT}"
    assert cookie["firebase"]["sign_in_second_factor"] == "phone"
    assert cookie["firebase"]["second_factor_identifier"] == u["enrollmentId"]


def test_sign_in_with_the_second_of_two_factors_names_that_factor(gh):
    u = enrolled_user(gh)
    second = number()
    enrol(gh, u["idToken"], second, "Home")
    c = challenge(gh, u["email"])
    assert [h["phoneInfo"] for h in c["mfaInfo"]] == [obfuscated(u["phone"]), obfuscated(second)]
    home = c["mfaInfo"][1]
    assert home["displayName"] == "Home"
    r = mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": c["mfaPendingCredential"], "mfaEnrollmentId": home["mfaEnrollmentId"]})
    assert r.status_code == 200, r.text
    assert code_entry(gh, r.json()["phoneResponseInfo"]["sessionInfo"])["phoneNumber"] == second
    tokens = pass_second_factor(gh, challenge(gh, u["email"])["mfaPendingCredential"], home["mfaEnrollmentId"])
    assert second_factor_claims(tokens["idToken"]) == ("password", "phone", home["mfaEnrollmentId"])


def test_sign_in_start_errors(gh):
    u = enrolled_user(gh)
    pending = challenge(gh, u["email"])["mfaPendingCredential"]
    error(mfa(gh, "mfaSignIn:start", {"mfaEnrollmentId": u["enrollmentId"]}),
          "MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential.")
    error(mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": pending}),
          "MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.")
    error(mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": pending, "mfaEnrollmentId": ""}),
          "MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.")
    error(mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": "ghmfa1.unknown", "mfaEnrollmentId": u["enrollmentId"]}),
          "INVALID_MFA_PENDING_CREDENTIAL")
    error(mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": "not-ours", "mfaEnrollmentId": u["enrollmentId"]}),
          "INVALID_MFA_PENDING_CREDENTIAL")
    error(mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": pending, "mfaEnrollmentId": "A" * 28}), "MFA_ENROLLMENT_NOT_FOUND")
    # Another user's factor is no factor of this sign-in.
    other = enrolled_user(gh)
    error(mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": pending, "mfaEnrollmentId": other["enrollmentId"]}),
          "MFA_ENROLLMENT_NOT_FOUND")
    # None of these used the credential up.
    assert second_factor_claims(pass_second_factor(gh, pending, u["enrollmentId"])["idToken"])[1] == "phone"


def test_sign_in_finalize_errors(gh):
    u = enrolled_user(gh)
    pending = challenge(gh, u["email"])["mfaPendingCredential"]
    r = mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": pending, "mfaEnrollmentId": u["enrollmentId"]})
    assert r.status_code == 200, r.text
    session = r.json()["phoneResponseInfo"]["sessionInfo"]
    code = code_entry(gh, session)["code"]

    def finalize(body):
        return mfa(gh, "mfaSignIn:finalize", body)

    error(finalize({"phoneVerificationInfo": {"sessionInfo": session, "code": code}}), "MISSING_CREDENTIAL : Please set MFA Pending Credential.")
    error(finalize({"mfaPendingCredential": pending}), "INVALID_ARGUMENT : MFA provider not supported!")
    error(finalize({"mfaPendingCredential": pending, "phoneVerificationInfo": {"sessionInfo": session}}), "MISSING_CODE")
    error(finalize({"mfaPendingCredential": pending, "phoneVerificationInfo": {"code": code}}), "MISSING_SESSION_INFO")
    error(finalize({"mfaPendingCredential": pending, "phoneVerificationInfo": {"sessionInfo": "ghs1.nope", "code": code}}),
          "INVALID_SESSION_INFO")
    error(finalize({"mfaPendingCredential": pending, "phoneVerificationInfo": {"sessionInfo": session, "code": wrong(code)}}),
          "INVALID_CODE")
    error(finalize({"mfaPendingCredential": "ghmfa1.unknown", "phoneVerificationInfo": {"sessionInfo": session, "code": code}}),
          "INVALID_MFA_PENDING_CREDENTIAL")
    # A code sent for another pending sign-in of the same user, or to enrol a phone, passes nothing here.
    other_pending = challenge(gh, u["email"])["mfaPendingCredential"]
    r = mfa(gh, "mfaSignIn:start", {"mfaPendingCredential": other_pending, "mfaEnrollmentId": u["enrollmentId"]})
    theirs = r.json()["phoneResponseInfo"]["sessionInfo"]
    error(finalize({"mfaPendingCredential": pending, "phoneVerificationInfo": {"sessionInfo": theirs, "code": code_entry(gh, theirs)["code"]}}),
          "INVALID_SESSION_INFO")
    enrolment = start_enrolment(gh, u["idToken"], number())
    error(finalize({"mfaPendingCredential": pending,
                    "phoneVerificationInfo": {"sessionInfo": enrolment, "code": code_entry(gh, enrolment)["code"]}}),
          "INVALID_SESSION_INFO")
    # The right code still passes.
    r = finalize({"mfaPendingCredential": pending, "phoneVerificationInfo": {"sessionInfo": session, "code": code}})
    assert r.status_code == 200, r.text
    assert second_factor_claims(r.json()["idToken"]) == ("password", "phone", u["enrollmentId"])


# --- Withdrawal -------------------------------------------------------------------------------

def test_withdraw_removes_the_factor_and_revokes_earlier_tokens(gh):
    u = enrolled_user(gh)
    signed_in = pass_second_factor(gh, challenge(gh, u["email"])["mfaPendingCredential"], u["enrollmentId"])
    time.sleep(1.05)  # validSince has whole seconds: ID tokens of the withdrawal's own second stay valid
    r = mfa(gh, "mfaEnrollment:withdraw", {"idToken": signed_in["idToken"], "mfaEnrollmentId": u["enrollmentId"]})
    assert r.status_code == 200, r.text
    fresh = r.json()
    assert fresh["idToken"] and fresh["refreshToken"]
    assert second_factor_claims(fresh["idToken"]) == ("password", None, None)

    assert "mfaInfo" not in gh.api("lookup", {"idToken": fresh["idToken"]}).json()["users"][0]
    error(refresh(gh, signed_in["refreshToken"]), "TOKEN_EXPIRED")
    error(refresh(gh, u["refreshToken"]), "TOKEN_EXPIRED")
    error(gh.api("lookup", {"idToken": signed_in["idToken"]}), "TOKEN_EXPIRED")
    r = refresh(gh, fresh["refreshToken"])
    assert r.status_code == 200, r.text
    assert second_factor_claims(r.json()["id_token"]) == ("password", None, None)
    # Without a factor the email link signs in directly again.
    r = email_link_sign_in(gh, u["email"])
    assert r.status_code == 200 and "idToken" in r.json() and "mfaPendingCredential" not in r.json(), r.text


def test_withdraw_errors(gh):
    u = enrolled_user(gh)
    error(mfa(gh, "mfaEnrollment:withdraw", {"mfaEnrollmentId": u["enrollmentId"]}), "MISSING_ID_TOKEN")
    error(mfa(gh, "mfaEnrollment:withdraw", {"idToken": u["idToken"], "mfaEnrollmentId": "B" * 28}), "MFA_ENROLLMENT_NOT_FOUND")
    other = enrolled_user(gh)
    error(mfa(gh, "mfaEnrollment:withdraw", {"idToken": u["idToken"], "mfaEnrollmentId": other["enrollmentId"]}),
          "MFA_ENROLLMENT_NOT_FOUND")
    assert [f["mfaEnrollmentId"] for f in admin_lookup(gh, u["localId"])["mfaInfo"]] == [u["enrollmentId"]]
    assert [f["mfaEnrollmentId"] for f in admin_lookup(gh, other["localId"])["mfaInfo"]] == [other["enrollmentId"]]


# --- Phone as first factor of an enrolled user ----------------------------------------------------

def with_phone_and_factor(gh) -> tuple:
    """An email-link user whose account also has a phone number (first factor) and, set by an admin,
    a phone second factor on another number."""
    user = email_user(gh)
    first = number()
    r = gh.admin("/accounts:update", {"localId": user["localId"], "phoneNumber": first})
    assert r.status_code == 200, r.text
    return user, first


def test_phone_sign_in_of_an_enrolled_user_is_refused(gh):
    user, first = with_phone_and_factor(gh)
    r = gh.api("sendVerificationCode", {"phoneNumber": first})
    assert r.status_code == 200, r.text
    session = r.json()["sessionInfo"]
    r = gh.admin("/accounts:update", {"localId": user["localId"], "mfa": {"enrollments": [{"phoneInfo": number()}]}})
    assert r.status_code == 200, r.text
    before = admin_lookup(gh, user["localId"])["lastLoginAt"]
    r = gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code_entry(gh, session)["code"]})
    error(r, "UNSUPPORTED_FIRST_FACTOR : A phone number cannot be set as a first factor on an SMS based MFA user.")
    assert admin_lookup(gh, user["localId"])["lastLoginAt"] == before


def test_no_first_factor_code_is_sent_to_the_phone_of_an_enrolled_user(gh):
    user, first = with_phone_and_factor(gh)
    r = gh.admin("/accounts:update", {"localId": user["localId"], "mfa": {"enrollments": [{"phoneInfo": number()}]}})
    assert r.status_code == 200, r.text
    r = gh.api("sendVerificationCode", {"phoneNumber": first})
    error(r, "UNSUPPORTED_FIRST_FACTOR : A phone number cannot be set as a first factor on an SMS based MFA user.")
    assert not [c for c in codes(gh) if c["phoneNumber"] == first]


# --- Factors set by admins (what the Admin SDKs send) ---------------------------------------------

def test_admin_sets_reads_and_clears_factors(gh):
    email = address("admin")
    r = gh.admin("/accounts", {"email": email, "emailVerified": True})
    assert r.status_code == 200, r.text
    local_id = r.json()["localId"]
    phone = number()
    r = gh.admin("/accounts:update", {"localId": local_id, "mfa": {"enrollments": [
        {"phoneInfo": phone, "displayName": "Desk", "enrolledAt": "2024-01-02T03:04:05.000Z"}]}})
    assert r.status_code == 200, r.text
    assert r.json()["localId"] == local_id

    (info,) = admin_lookup(gh, local_id)["mfaInfo"]
    assert ENROLLMENT_ID.match(info["mfaEnrollmentId"])
    assert info["phoneInfo"] == phone and info["displayName"] == "Desk"
    assert info["enrolledAt"] == "2024-01-02T03:04:05.000Z"

    # The factor works like an enrolled one: the email link now asks for it.
    c = challenge(gh, email)
    assert c["mfaInfo"] == [{"mfaEnrollmentId": info["mfaEnrollmentId"], "displayName": "Desk", "phoneInfo": obfuscated(phone),
                             "enrolledAt": "2024-01-02T03:04:05.000Z"}]
    tokens = pass_second_factor(gh, c["mfaPendingCredential"], info["mfaEnrollmentId"])
    assert second_factor_claims(tokens["idToken"]) == ("password", "phone", info["mfaEnrollmentId"])

    # Writing the list back with its ids keeps them (what the Node.js SDK does on every update).
    r = gh.admin("/accounts:update", {"localId": local_id, "mfa": {"enrollments": [
        {"mfaEnrollmentId": info["mfaEnrollmentId"], "phoneInfo": phone, "displayName": "Desk",
         "enrolledAt": "2024-01-02T03:04:05.000Z"}]}})
    assert r.status_code == 200, r.text
    assert admin_lookup(gh, local_id)["mfaInfo"] == [info]

    r = gh.admin("/accounts:update", {"localId": local_id, "mfa": {}})
    assert r.status_code == 200, r.text
    assert "mfaInfo" not in admin_lookup(gh, local_id)
    r = email_link_sign_in(gh, email)
    assert r.status_code == 200 and "idToken" in r.json(), r.text


def test_admin_factor_errors(gh):
    user = email_user(gh)

    def update(enrollments):
        return gh.admin("/accounts:update", {"localId": user["localId"], "mfa": {"enrollments": enrollments}})

    error(update([{"phoneInfo": "call me"}]), "INVALID_PHONE_NUMBER : Invalid format.")
    error(update([{"phoneInfo": number()} for _ in range(6)]), "SECOND_FACTOR_LIMIT_EXCEEDED")
    same = number()
    error(update([{"phoneInfo": same}, {"phoneInfo": same}]),
          "SECOND_FACTOR_EXISTS : Phone number already enrolled as second factor for this account.")
    assert "mfaInfo" not in admin_lookup(gh, user["localId"])


def test_factors_cannot_be_set_without_admin(gh):
    u = enrolled_user(gh)
    body = {"idToken": u["idToken"], "mfa": {"enrollments": [{"phoneInfo": number()}]}}
    error(gh.api("update", body), "INSUFFICIENT_PERMISSION")
    error(gh.api("update", dict(body, mfa={})), "INSUFFICIENT_PERMISSION")
    # The admin path with an API key only, or with a bearer that is not an admin's.
    path = f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:update"
    for headers in ({}, {"Authorization": "Bearer someone"}):
        r = gh.post(path, params={"key": "test-api-key"}, headers=headers, json={"localId": u["localId"], "mfa": {}})
        err = assert_envelope(r, 401, "Request had invalid authentication credentials.")
        assert err["status"] == "UNAUTHENTICATED"
    assert [f["mfaEnrollmentId"] for f in admin_lookup(gh, u["localId"])["mfaInfo"]] == [u["enrollmentId"]]


def test_python_admin_sdk_works_on_a_user_with_factors_and_keeps_them(gh, app):
    u = enrolled_user(gh)
    factors = admin_lookup(gh, u["localId"])["mfaInfo"]
    rec = auth.get_user(u["localId"], app=app)
    assert rec.uid == u["localId"] and rec.email == u["email"].lower() and rec.email_verified
    rec = auth.update_user(u["localId"], display_name="Has a factor", app=app)
    assert rec.display_name == "Has a factor"
    assert admin_lookup(gh, u["localId"])["mfaInfo"] == factors
    listed = [x for x in auth.list_users(app=app).iterate_all() if x.uid == u["localId"]]
    assert len(listed) == 1 and listed[0].display_name == "Has a factor"
    r = gh.admin("/accounts:batchGet", {"maxResults": 1000}, method="GET")
    assert r.status_code == 200, r.text
    (raw,) = [x for x in r.json()["users"] if x["localId"] == u["localId"]]
    assert raw["mfaInfo"] == factors
    assert auth.get_user_by_email(u["email"], app=app).uid == u["localId"]
    assert admin_lookup(gh, u["localId"])["mfaInfo"] == factors


# --- A project with the second factor off ---------------------------------------------------------

def test_every_mfa_call_is_refused_when_the_project_has_mfa_disabled(make_gatehouse):
    g = make_gatehouse(config=config(mfa="DISABLED"))
    user = email_user(g)
    phone = number()
    error(mfa(g, "mfaEnrollment:start", {"idToken": user["idToken"], "phoneEnrollmentInfo": {"phoneNumber": phone}}), NOT_ENABLED)
    error(mfa(g, "mfaEnrollment:finalize", {"idToken": user["idToken"],
                                            "phoneVerificationInfo": {"sessionInfo": "ghs1.x", "code": "123456"}}), NOT_ENABLED)
    error(mfa(g, "mfaEnrollment:withdraw", {"idToken": user["idToken"], "mfaEnrollmentId": "C" * 28}), NOT_ENABLED)
    error(mfa(g, "mfaSignIn:start", {"mfaPendingCredential": "ghmfa1.x", "mfaEnrollmentId": "C" * 28}), NOT_ENABLED)
    error(mfa(g, "mfaSignIn:finalize", {"mfaPendingCredential": "ghmfa1.x",
                                        "phoneVerificationInfo": {"sessionInfo": "ghs1.x", "code": "123456"}}), NOT_ENABLED)
    assert not [c for c in codes(g) if c["phoneNumber"] == phone]
    # Factors an admin left on an account do not stop the first factor while MFA is off.
    r = g.admin("/accounts:update", {"localId": user["localId"], "mfa": {"enrollments": [{"phoneInfo": phone}]}})
    assert r.status_code == 200, r.text
    r = email_link_sign_in(g, user["email"])
    assert r.status_code == 200, r.text
    assert "idToken" in r.json() and "mfaPendingCredential" not in r.json()
    assert second_factor_claims(r.json()["idToken"]) == ("password", None, None)


# --- Old credentials (docs/security.md "Old credentials and sensitive changes") -------------------

def test_credentials_from_before_the_first_factor_are_revoked_and_change_nothing(gh):
    """The reviewer's path: a refresh token (and its ID token) copied before the owner enrolled a
    factor could enrol the attacker's phone, strip the owner's factor or replace the email."""
    user = email_user(gh)
    stolen_id, stolen_refresh = user["idToken"], user["refreshToken"]
    time.sleep(1.1)  # the owner enrols in a later second
    owner = email_link_sign_in(gh, user["email"]).json()
    phone = number()
    enrolled = enrol(gh, owner["idToken"], phone)
    factor = admin_lookup(gh, user["localId"])["mfaInfo"][0]["mfaEnrollmentId"]

    error(refresh(gh, stolen_refresh), "TOKEN_EXPIRED")
    error(mfa(gh, "mfaEnrollment:start", {"idToken": stolen_id, "phoneEnrollmentInfo": {"phoneNumber": number()}}), "TOKEN_EXPIRED")
    error(mfa(gh, "mfaEnrollment:withdraw", {"idToken": stolen_id, "mfaEnrollmentId": factor}), "TOKEN_EXPIRED")
    attacker = address("attacker")
    error(gh.api("signInWithEmailLink", {"email": attacker, "oobCode": email_link_code(gh, attacker), "idToken": stolen_id}),
          "TOKEN_EXPIRED")
    after = admin_lookup(gh, user["localId"])
    assert after["email"] == user["email"].lower() and [f["phoneInfo"] for f in after["mfaInfo"]] == [phone]
    # The owner's tokens carry the factor and still work.
    r = refresh(gh, enrolled["refreshToken"])
    assert r.status_code == 200, r.text
    assert claims(r.json()["id_token"])["firebase"]["second_factor_identifier"] == factor


def test_a_sign_in_without_the_second_factor_cannot_add_or_remove_one(gh):
    """A user with a factor whose ID token passed none (issued in the enrolment's second, or by a
    custom token, which Firebase never asks a second factor of) changes no factor."""
    u = enrolled_user(gh)
    r = gh.api("signInWithCustomToken", {"token": unsigned_custom_token(u["localId"])})
    assert r.status_code == 200, r.text
    first_only = r.json()["idToken"]
    needs = "CREDENTIAL_TOO_OLD_LOGIN_AGAIN : Sign in again with your second factor to make this change."
    # (A custom token is no first factor a second one may follow at all.)
    error(mfa(gh, "mfaEnrollment:start", {"idToken": first_only, "phoneEnrollmentInfo": {"phoneNumber": number()}}), NOT_ELIGIBLE)
    error(mfa(gh, "mfaEnrollment:withdraw", {"idToken": first_only, "mfaEnrollmentId": u["enrollmentId"]}), needs)
    error(gh.api("delete", {"idToken": first_only}), needs)
    assert [f["mfaEnrollmentId"] for f in admin_lookup(gh, u["localId"])["mfaInfo"]] == [u["enrollmentId"]]


def unsigned_custom_token(uid: str) -> str:
    """What the Admin SDK mints in emulator mode (dev mode takes it)."""
    import base64
    import json

    def b64(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    aud = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
    return b64({"alg": "none", "typ": "JWT"}) + "." + b64({"aud": aud, "uid": uid}) + "."
