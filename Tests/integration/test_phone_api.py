"""Phone sign-in over REST through nginx: accounts:sendVerificationCode, accounts:signInWithPhoneNumber
(and their legacy v3 names), the emulator's verificationCodes, every wire error string."""
import json

import pytest

from conftest import Gatehouse, assert_envelope
from phone_helpers import (ADMIN_TOKEN, PROD_API_KEY, TEST_NUMBERS, age_session, code_in, decode_jwt, dev_config,
                           expire_session, fake_gateway, mint_app_token, outbox, production_config, sql)

FR = "+33612345678"
LEGACY = "/www.googleapis.com/identitytoolkit/v3/relyingparty"


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("phone-api"), config=dev_config()).start()
    yield g
    g.stop()


def send(gh, number, **extra):
    r = gh.api("sendVerificationCode", {"phoneNumber": number, **extra})
    assert r.status_code == 200, r.text
    return r.json()["sessionInfo"]


def codes(gh, project="demo-gatehouse"):
    r = gh.get(f"/emulator/v1/projects/{project}/verificationCodes")
    assert r.status_code == 200, r.text
    return r.json()["verificationCodes"]


def code_for(gh, session):
    return next(c["code"] for c in codes(gh) if c["sessionInfo"] == session)


def sign_in(gh, body, status=200):
    r = gh.api("signInWithPhoneNumber", body)
    assert r.status_code == status, r.text
    return r.json()


def error(gh, name, body, message, **kw):
    return assert_envelope(gh.api(name, body, **kw), 400, message)


# --- The happy path ------------------------------------------------------------------------

def test_send_then_sign_in_creates_a_phone_user(gh):
    session = send(gh, "+33 6 12 34 56 70")
    listed = [c for c in codes(gh) if c["sessionInfo"] == session]
    assert len(listed) == 1 and listed[0]["phoneNumber"] == "+33612345670" and len(listed[0]["code"]) == 6
    body = sign_in(gh, {"sessionInfo": session, "code": listed[0]["code"]})
    assert list(body) == ["idToken", "refreshToken", "expiresIn", "localId", "isNewUser", "phoneNumber"]
    assert body["expiresIn"] == "3600" and body["isNewUser"] is True and body["phoneNumber"] == "+33612345670"
    claims = decode_jwt(body["idToken"])
    assert claims["sub"] == body["localId"] and claims["phone_number"] == "+33612345670"
    assert claims["firebase"] == {"identities": {"phone": ["+33612345670"]}, "sign_in_provider": "phone"}
    assert "provider_id" not in claims
    # The code is gone from the emulator listing once used, as in the Firebase emulator.
    assert not [c for c in codes(gh) if c["sessionInfo"] == session]
    users = gh.api("lookup", {"idToken": body["idToken"]}).json()["users"]
    assert users[0]["phoneNumber"] == "+33612345670"
    assert users[0]["providerUserInfo"] == [{"providerId": "phone", "rawId": "+33612345670", "phoneNumber": "+33612345670"}]
    assert users[0]["lastLoginAt"].isdigit()


def test_second_sign_in_is_not_a_new_user(gh):
    s1 = send(gh, "+33612345671")
    a = sign_in(gh, {"sessionInfo": s1, "code": code_for(gh, s1)})
    s2 = send(gh, "+33612345671")
    b = sign_in(gh, {"sessionInfo": s2, "code": code_for(gh, s2), "operation": "SIGN_UP_OR_IN"})
    assert a["isNewUser"] and not b["isNewUser"] and a["localId"] == b["localId"]


def test_legacy_v3_paths_and_snake_case(gh):
    r = gh.post(f"{LEGACY}/sendVerificationCode", params={"key": "k"}, json={"phone_number": "+33612345672"})
    assert r.status_code == 200, r.text
    session = r.json()["sessionInfo"]
    r = gh.post(f"{LEGACY}/verifyPhoneNumber", params={"key": "k"},
                json={"session_info": session, "code": code_for(gh, session), "operation": 1})
    assert r.status_code == 200 and r.json()["phoneNumber"] == "+33612345672"


def test_repeated_send_returns_the_same_session_and_one_sms(gh):
    before = len(outbox(gh))
    a = send(gh, "+33612345673", clientType="CLIENT_TYPE_IOS")
    b = send(gh, "+33612345673", clientType="CLIENT_TYPE_IOS")
    assert a == b
    assert len(outbox(gh)) == before + 1
    # Naming another app (a header the client picks) buys no new code: the network's pending one comes back.
    for headers in ({"X-Ios-Bundle-Identifier": "com.example.other"}, {"X-Firebase-Gmpid": "1:1:web:other"}):
        r = gh.api("sendVerificationCode", {"phoneNumber": "+33612345673"}, headers=headers)
        assert r.json()["sessionInfo"] == a
    assert len(outbox(gh)) == before + 1


def test_test_numbers_use_their_fixed_code_and_send_nothing(gh):
    before = len(outbox(gh))
    session = send(gh, "+15555550100")
    assert len(outbox(gh)) == before
    assert not [c for c in codes(gh) if c["sessionInfo"] == session]
    body = sign_in(gh, {"sessionInfo": session, "code": TEST_NUMBERS["+15555550100"]})
    assert body["phoneNumber"] == "+15555550100"


def test_sms_text_follows_the_locale_and_ends_with_the_origin_bound_line(gh):
    cases = [("fr", "est votre code"), ("de-DE", "ist Ihr Bestätigungscode"), ("pt-BR", "é o seu código"),
             ("id", "kode verifikasi"), ("en", "is your verification code")]
    for i, (locale, needle) in enumerate(cases):
        r = gh.api("sendVerificationCode", {"phoneNumber": f"+3361234569{i}"}, headers={"X-Firebase-Locale": locale})
        assert r.status_code == 200, r.text
        body = outbox(gh)[-1]["body"]
        assert needle in body, body
        assert body.splitlines()[-1] == f"@localhost #{code_in(body)}"
        assert code_in(body) == code_for(gh, r.json()["sessionInfo"])
    r = gh.api("sendVerificationCode", {"phoneNumber": "+33612345699"}, headers={"Accept-Language": "de-CH, de;q=0.8"})
    assert "Bestätigungscode" in outbox(gh)[-1]["body"]


# --- Errors of sendVerificationCode ---------------------------------------------------------

@pytest.mark.parametrize("number,message", [
    (None, "INVALID_PHONE_NUMBER : Invalid format."),
    ("", "INVALID_PHONE_NUMBER : Invalid format."),
    ("hello", "INVALID_PHONE_NUMBER : Invalid format."),
    ("0612345678", "INVALID_PHONE_NUMBER : Invalid format."),
    ("+1 650", "INVALID_PHONE_NUMBER : TOO_SHORT"),
    ("+33 6 12 34 56 78 90 12 34", "INVALID_PHONE_NUMBER : TOO_LONG"),
])
def test_invalid_numbers(gh, number, message):
    body = {} if number is None else {"phoneNumber": number}
    err = error(gh, "sendVerificationCode", body, message)
    assert err["message"] == message and "status" not in err


def test_tenants_are_refused(gh):
    error(gh, "sendVerificationCode", {"phoneNumber": FR, "tenantId": "t1"}, "UNSUPPORTED_TENANT_OPERATION")


def test_missing_api_key_is_refused(gh):
    r = gh.post("/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode", json={"phoneNumber": FR})
    assert_envelope(r, 403, "The request is missing a valid API key.")


# --- Errors of signInWithPhoneNumber ---------------------------------------------------------

def test_sign_in_input_errors(gh):
    session = send(gh, "+33612345675")
    error(gh, "signInWithPhoneNumber", {"code": "123456"}, "MISSING_SESSION_INFO")
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session}, "MISSING_CODE")
    error(gh, "signInWithPhoneNumber", {"sessionInfo": "ghs1.nope", "code": "123456"}, "INVALID_SESSION_INFO")
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": "12"}, "INVALID_CODE")
    err = assert_envelope(gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": "1", "operation": "DANCE"}), 400, "INVALID_ARGUMENT")
    assert err["status"] == "INVALID_ARGUMENT"


def test_a_used_code_gets_session_expired(gh):
    session = send(gh, "+33612345676")
    code = code_for(gh, session)
    sign_in(gh, {"sessionInfo": session, "code": code})
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": code}, "SESSION_EXPIRED")


def test_an_expired_code_gets_session_expired(gh):
    session = send(gh, "+33612345677")
    code = code_for(gh, session)
    expire_session(gh, session)
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": code}, "SESSION_EXPIRED")
    # Expired is not pending: the next send issues a new code.
    assert send(gh, "+33612345677") != session


def test_five_wrong_codes_burn_the_session(gh):
    session = send(gh, "+33612345678")
    code = code_for(gh, session)
    wrong = "000000" if code != "000000" else "111111"
    for _ in range(5):
        error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": wrong}, "INVALID_CODE")
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": code}, "SESSION_EXPIRED")


def test_the_client_failure_budget_survives_new_codes_and_restarts(make_gatehouse):
    g = make_gatehouse(config=dev_config())
    number = "+15555550101"
    for _ in range(4):
        session = send(g, number)
        for _ in range(5):
            error(g, "signInWithPhoneNumber", {"sessionInfo": session, "code": "999999"}, "INVALID_CODE")
    # The budget is the client's (docs/security.md): this client gets no new code for any number,
    # also after a restart; other clients are untouched (engine tests: PhoneAbuseTests).
    error(g, "sendVerificationCode", {"phoneNumber": number}, "TOO_MANY_ATTEMPTS_TRY_LATER")
    g.stop()
    g.start()
    error(g, "sendVerificationCode", {"phoneNumber": number}, "TOO_MANY_ATTEMPTS_TRY_LATER")
    error(g, "sendVerificationCode", {"phoneNumber": "+15555550102"}, "TOO_MANY_ATTEMPTS_TRY_LATER")


def test_verification_attempts_per_ip(make_gatehouse):
    g = make_gatehouse(config=dev_config(verify_attempts_per_ip_per_5min=3))
    for _ in range(3):
        error(g, "signInWithPhoneNumber", {"sessionInfo": "ghs1.x", "code": "123456"}, "INVALID_SESSION_INFO")
    error(g, "signInWithPhoneNumber", {"sessionInfo": "ghs1.x", "code": "123456"}, "TOO_MANY_ATTEMPTS_TRY_LATER")


def test_region_allow_list(make_gatehouse):
    config = dev_config()
    config["projects"][0]["sms_regions"] = ["FR"]
    g = make_gatehouse(config=config)
    error(g, "sendVerificationCode", {"phoneNumber": "+16505553434"},
          "OPERATION_NOT_ALLOWED : SMS unable to be sent until this region enabled by the app developer.")
    send(g, FR)
    send(g, "+15555550100")


# --- Accounts: REAUTH, LINK, UPDATE, temporaryProof, disabled ---------------------------------

def signed_in(gh, number):
    session = send(gh, number)
    return sign_in(gh, {"sessionInfo": session, "code": TEST_NUMBERS.get(number) or code_for(gh, session)})


def test_reauth_of_a_number_without_account(gh):
    session = send(gh, "+33612345679")
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": code_for(gh, session), "operation": "REAUTH"}, "USER_NOT_FOUND")


def test_link_update_and_temporary_proof(gh):
    owner = signed_in(gh, "+15555550103")
    other = signed_in(gh, "+15555550104")
    # UPDATE moves `other` to a fresh number.
    session = send(gh, "+33612345680")
    updated = sign_in(gh, {"sessionInfo": session, "code": code_for(gh, session), "operation": "UPDATE", "idToken": other["idToken"]})
    assert updated["localId"] == other["localId"] and updated["phoneNumber"] == "+33612345680" and not updated["isNewUser"]
    # LINK of the owner's number to `other`: verified, but answered with a proof and no tokens.
    session = send(gh, "+15555550103")
    proof = sign_in(gh, {"sessionInfo": session, "code": "333333", "operation": "LINK", "idToken": updated["idToken"]})
    assert set(proof) == {"temporaryProof", "temporaryProofExpiresIn", "phoneNumber"}
    assert proof["temporaryProofExpiresIn"] == "3600" and proof["phoneNumber"] == "+15555550103"
    error(gh, "signInWithPhoneNumber", {"temporaryProof": proof["temporaryProof"]}, "MISSING_PHONE_NUMBER")
    error(gh, "signInWithPhoneNumber", {"temporaryProof": proof["temporaryProof"], "phoneNumber": FR}, "INVALID_TEMPORARY_PROOF")
    error(gh, "signInWithPhoneNumber", {"temporaryProof": proof["temporaryProof"], "phoneNumber": "+15555550103",
                                         "operation": "LINK", "idToken": updated["idToken"]}, "PHONE_NUMBER_EXISTS")
    back = sign_in(gh, {"temporaryProof": proof["temporaryProof"], "phoneNumber": "+15555550103"})
    assert back["localId"] == owner["localId"] and "idToken" in back
    error(gh, "signInWithPhoneNumber", {"temporaryProof": proof["temporaryProof"], "phoneNumber": "+15555550103"},
          "INVALID_TEMPORARY_PROOF")


def test_link_needs_a_valid_id_token(gh):
    session = send(gh, "+33612345681")
    code = code_for(gh, session)
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": code, "operation": "LINK"}, "MISSING_ID_TOKEN")
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": code, "operation": "LINK", "idToken": "x.y.z"},
          "INVALID_ID_TOKEN")


def test_disabled_user(gh):
    user = signed_in(gh, "+33612345682")
    sql(gh, "UPDATE accounts SET disabled = 1 WHERE local_id = ?", user["localId"])
    session = send(gh, "+33612345682")
    error(gh, "signInWithPhoneNumber", {"sessionInfo": session, "code": code_for(gh, session)}, "USER_DISABLED")


# --- Production mode: app verification and send limits ----------------------------------------

@pytest.fixture
def prod(make_gatehouse, fake_gateway, tmp_path):
    gateway = fake_gateway()
    sms = {"provider": "webhook", "url": gateway.url + "/sms", "secret": "s" * 32}
    g = make_gatehouse(config=production_config(tmp_path, sms))
    g.gateway = gateway
    return g


def prod_send(g, number, token=True, **kw):
    body = {"phoneNumber": number}
    if token is True:
        body["recaptchaToken"] = mint_app_token(g, "prod-project", PROD_API_KEY)
    elif token:
        body["recaptchaToken"] = token
    return g.api("sendVerificationCode", body, key=PROD_API_KEY, **kw)


def test_production_app_verification(prod):
    assert_envelope(prod_send(prod, FR, token=None), 400, "MISSING_CLIENT_IDENTIFIER")
    assert_envelope(prod_send(prod, FR, token="forged"), 400, "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - MALFORMED")
    token = mint_app_token(prod, "prod-project", PROD_API_KEY)
    r = prod_send(prod, FR, token=token)
    assert r.status_code == 200, r.text
    assert_envelope(prod_send(prod, "+33612345601", token=token), 400, "CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED")
    # Test numbers need no app verification; the emulator listing does not exist in production.
    assert prod_send(prod, "+15555550100", token=None).status_code == 200
    assert prod.get("/emulator/v1/projects/prod-project/verificationCodes").status_code == 404
    # The SMS went out through the webhook with the origin-bound line of the project.
    text = json.loads(prod.gateway.wait_for(1)[0]["body"])["body"]
    assert text.endswith("@auth.example.test #" + code_in(text))


def test_production_send_limits(prod):
    for i in range(5):
        r = prod_send(prod, FR)
        assert r.status_code == 200, r.text
        expire_session(prod, r.json()["sessionInfo"])
    # The 6th code for the number in an hour is refused (and not counted against the IP).
    assert_envelope(prod_send(prod, FR), 400, "TOO_MANY_ATTEMPTS_TRY_LATER")
    # The IP address has 10 sends an hour: 5 used above, 5 more, then refused.
    for i in range(5):
        assert prod_send(prod, f"+3361234570{i}").status_code == 200
    assert_envelope(prod_send(prod, "+33612345709"), 400, "TOO_MANY_ATTEMPTS_TRY_LATER")
    for _ in range(3):
        assert prod_send(prod, "+15555550100", token=None).status_code == 200
