"""Email-link wire endpoints through nginx (firebase-wire.md §2.3–§2.5, §2.7, §2.16, §2.18, §4.1)."""
import base64
import json
import uuid

import pytest
import requests

from conftest import Gatehouse, assert_envelope
from email_support import (ANDROID_PRINT, action_params, config, expire_link, insert_account, jwks_verify, latest_link,
                           link_params, oob_codes)

ITK = "/identitytoolkit.googleapis.com/v1"
LEGACY = "/www.googleapis.com/identitytoolkit/v3/relyingparty"


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("gh-email"), config=config()).start()
    yield g
    g.stop()


def addr(tag="user") -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}@Example.com"


def send(gh, address, **body):
    payload = {"requestType": "EMAIL_SIGNIN", "email": address, "continueUrl": f"{gh.base}/__/auth/health"}
    payload.update(body)
    return gh.api("sendOobCode", payload)


def sign_in(gh, address, **body):
    r = send(gh, address)
    assert r.status_code == 200, r.text
    code = latest_link(gh, address)["oobCode"]
    r = gh.api("signInWithEmailLink", {"email": address, "oobCode": code, **body})
    assert r.status_code == 200, r.text
    return r.json()


# --- sendOobCode ------------------------------------------------------------------------------

def test_send_answers_kind_and_email_and_queues_a_link(gh):
    a = addr()
    r = send(gh, a)
    assert r.status_code == 200
    assert r.json() == {"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": a.lower()}
    entry = latest_link(gh, a)
    assert set(entry) == {"email", "oobCode", "oobLink", "requestType"}
    assert entry["requestType"] == "EMAIL_SIGNIN"
    assert f"oobCode={entry['oobCode']}" in entry["oobLink"]


def test_send_accepts_integer_request_type_and_legacy_path(gh):
    a, b = addr("int"), addr("legacy")
    assert send(gh, a, requestType=6).status_code == 200
    assert latest_link(gh, a)["requestType"] == "EMAIL_SIGNIN"
    r = gh.post(LEGACY + "/getOobConfirmationCode", params={"key": "test-api-key"},
                json={"request_type": "EMAIL_SIGNIN", "email": b, "continue_url": f"{gh.base}/x"})
    assert r.status_code == 200, r.text
    latest_link(gh, b)


def test_send_is_the_same_for_known_and_unknown_addresses(gh):
    known = addr("known")
    sign_in(gh, known)
    assert send(gh, known).json() == {"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": known.lower()}
    unknown = addr("unknown")
    assert send(gh, unknown).json() == {"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": unknown.lower()}


@pytest.mark.parametrize("body,status,message", [
    ({"requestType": None}, 400, "MISSING_REQ_TYPE"),
    ({"requestType": "OOB_REQ_TYPE_UNSPECIFIED"}, 400, "MISSING_REQ_TYPE"),
    ({"requestType": "NOT_A_TYPE"}, 400, "INVALID_ARGUMENT"),
    ({"returnOobLink": True}, 400, "INSUFFICIENT_PERMISSION"),
    ({"continueUrl": "not a url"}, 400, "INVALID_CONTINUE_URI"),
    ({"continueUrl": "https://evil.example.net/x"}, 400, "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project"),
    ({"continueUrl": "unknownapp://done"}, 400, "UNAUTHORIZED_DOMAIN"),
    ({"continueUrl": None, "canHandleCodeInApp": True}, 400, "MISSING_CONTINUE_URI"),
    ({"email": None}, 400, "MISSING_EMAIL"),
    ({"email": "not-an-email"}, 400, "INVALID_EMAIL"),
    ({"linkDomain": "evil.example.net"}, 400, "INVALID_HOSTING_LINK_DOMAIN"),
    ({"dynamicLinkDomain": "x.page.link"}, 400, "INVALID_DYNAMIC_LINK_DOMAIN"),
    ({"iOSAppStoreId": "123"}, 400, "MISSING_IOS_BUNDLE_ID"),
    ({"androidInstallApp": True}, 400, "MISSING_ANDROID_PACKAGE_NAME"),
    ({"requestType": "PASSWORD_RESET"}, 400, "PASSWORD_LOGIN_DISABLED"),
    ({"requestType": "VERIFY_EMAIL"}, 400, "INVALID_ID_TOKEN"),
    ({"targetProjectId": "demo-gatehouse"}, 400, "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id."),
    ({"tenantId": "t1"}, 400, "UNSUPPORTED_TENANT_OPERATION"),
])
def test_send_errors(gh, body, status, message):
    payload = {"requestType": "EMAIL_SIGNIN", "email": addr("err"), "continueUrl": f"{gh.base}/x"}
    for k, v in body.items():
        if v is None:
            payload.pop(k, None)
        else:
            payload[k] = v
    err = assert_envelope(gh.api("sendOobCode", payload), status, message)
    if message.startswith("UNAUTHORIZED_DOMAIN :"):
        assert err["message"] == message


def test_send_needs_an_api_key(gh):
    r = gh.post(ITK + "/accounts:sendOobCode", json={"requestType": "EMAIL_SIGNIN", "email": addr()})
    assert_envelope(r, 403, "The request is missing a valid API key.")
    assert_envelope(gh.api("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": addr()}, key="wrong"), 400, "API key not valid")


def test_five_sends_to_one_address_then_one_per_client_block_within_the_hour(gh):
    a = addr("limit")
    for _ in range(5):
        assert send(gh, a).status_code == 200
    # The mailbox's five are spent; this network's block keeps one of its own (the owner's reserve).
    assert send(gh, a).status_code == 200
    assert_envelope(send(gh, a), 400, "TOO_MANY_ATTEMPTS_TRY_LATER")
    # +tag variants are the same mailbox.
    assert_envelope(send(gh, a.replace("@", "+x@")), 400, "TOO_MANY_ATTEMPTS_TRY_LATER")


def test_sends_per_ip_are_limited(make_gatehouse):
    g = make_gatehouse(config(email_link={"sends_per_ip_per_hour": 2}))
    assert send(g, addr()).status_code == 200
    assert send(g, addr()).status_code == 200
    assert_envelope(send(g, addr()), 400, "TOO_MANY_ATTEMPTS_TRY_LATER")


def test_admin_generates_a_link_without_sending(gh):
    a = addr("admin")
    r = gh.admin("/accounts:sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": a, "returnOobLink": True,
                                           "continueUrl": "https://app.example.com/done", "canHandleCodeInApp": False})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "identitytoolkit#GetOobConfirmationCodeResponse" and body["email"] == a.lower()
    assert action_params(body["oobLink"])["oobCode"] == body["oobCode"]
    assert not [c for c in oob_codes(gh) if c["email"] == a.lower()]
    # Off the Admin SDK path the admin credential is not read: no key, no call; with a key, a user's.
    r = gh.post(ITK + "/accounts:sendOobCode", headers={"Authorization": "Bearer owner"},
                json={"requestType": "EMAIL_SIGNIN", "email": a, "returnOobLink": True})
    assert r.status_code == 403 and r.json()["error"]["status"] == "PERMISSION_DENIED"
    r = gh.post(ITK + "/accounts:sendOobCode", params={"key": "test-api-key"}, headers={"Authorization": "Bearer owner"},
                json={"requestType": "EMAIL_SIGNIN", "email": a, "returnOobLink": True})
    assert_envelope(r, 400, "INSUFFICIENT_PERMISSION")


def test_invalid_bearer_is_unauthenticated_on_the_admin_path_only(gh):
    body = {"requestType": "EMAIL_SIGNIN", "email": addr()}
    r = gh.admin("/accounts:sendOobCode", body, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.json()["error"]["status"] == "UNAUTHENTICATED"
    r = gh.post(ITK + "/accounts:sendOobCode", params={"key": "test-api-key"}, headers={"Authorization": "Bearer nope"}, json=body)
    assert r.status_code == 200, r.text


# --- link shapes -------------------------------------------------------------------------------

def test_app_link_is_wrapped_once_and_carries_the_locale(gh):
    a = addr("app")
    r = gh.api("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": a, "continueUrl": "https://app.example.com/finish?x=1",
                               "canHandleCodeInApp": True, "iOSBundleId": "com.example.gatehouse.demo",
                               "clientType": "CLIENT_TYPE_IOS"}, headers={"X-Firebase-Locale": "de"})
    assert r.status_code == 200, r.text
    entry = latest_link(gh, a)
    link = entry["oobLink"]
    assert link.startswith(gh.base + "/__/auth/links?link=")
    seen = link_params(link)
    assert seen["mode"] == "signIn" and seen["oobCode"] == entry["oobCode"] and seen["lang"] == "de"
    inner = action_params(link)
    assert inner["apiKey"] == "test-api-key" and inner["continueUrl"] == "https://app.example.com/finish?x=1"


def test_link_domain_and_browser_links(gh):
    a = addr("domain")
    r = gh.api("sendOobCode", {"requestType": 6, "email": a, "continueUrl": "https://app.example.com/f",
                               "canHandleCodeInApp": True, "androidPackageName": "com.example.gatehouse",
                               "androidInstallApp": True, "androidMinimumVersion": "12", "linkDomain": "links.example.com"})
    assert r.status_code == 200, r.text
    assert latest_link(gh, a)["oobLink"].startswith("https://links.example.com/__/auth/links?link=")
    b = addr("web")
    send(gh, b)
    link = latest_link(gh, b)["oobLink"]
    assert link.startswith(gh.base + "/__/auth/action?apiKey=test-api-key&mode=signIn&oobCode=")


# --- signInWithEmailLink -----------------------------------------------------------------------

def test_sign_in_creates_a_verified_user_with_password_provider_tokens(gh):
    a = addr("new")
    body = sign_in(gh, a)
    assert body["kind"] == "identitytoolkit#EmailLinkSigninResponse"
    assert body["email"] == a.lower() and body["isNewUser"] is True and body["expiresIn"] == "3600"
    assert body["refreshToken"] and body["localId"]
    claims = jwks_verify(gh, body["idToken"])
    assert claims["sub"] == body["localId"] and claims["email"] == a.lower() and claims["email_verified"] is True
    assert claims["firebase"]["sign_in_provider"] == "password"
    user = gh.admin("/accounts:lookup", {"localId": [body["localId"]]}).json()["users"][0]
    assert user["emailVerified"] is True and user["emailLinkSignin"] is True and "passwordHash" not in user
    assert user["providerUserInfo"] == [{"providerId": "password", "rawId": a.lower(), "federatedId": a.lower(), "email": a.lower()}]
    again = sign_in(gh, a)
    assert again["isNewUser"] is False and again["localId"] == body["localId"]


def test_sign_in_errors(gh):
    a = addr("errors")
    send(gh, a)
    code = latest_link(gh, a)["oobCode"]
    assert_envelope(gh.api("signInWithEmailLink", {"oobCode": code}), 400, "MISSING_EMAIL")
    assert_envelope(gh.api("signInWithEmailLink", {"email": a}), 400, "MISSING_OOB_CODE")
    assert_envelope(gh.api("signInWithEmailLink", {"email": a, "oobCode": "unknown-code"}), 400, "INVALID_OOB_CODE")
    err = assert_envelope(gh.api("signInWithEmailLink", {"email": "someone-else@example.com", "oobCode": code}), 400, "INVALID_EMAIL")
    assert err["message"] == "INVALID_EMAIL : The email provided does not match the sign-in email address."
    r = gh.post(LEGACY + "/emailLinkSignin", params={"key": "test-api-key"}, json={"email": a.upper(), "oobCode": code})
    assert r.status_code == 200, r.text
    assert_envelope(gh.api("signInWithEmailLink", {"email": a, "oobCode": code}), 400, "INVALID_OOB_CODE")
    assert_envelope(gh.api("signInWithEmailLink", {"email": a, "oobCode": code, "idToken": "bad"}), 400, "INVALID_ID_TOKEN")


def test_an_expired_link_is_expired_oob_code(gh):
    a = addr("expired")
    send(gh, a)
    code = latest_link(gh, a)["oobCode"]
    expire_link(gh, code)
    assert_envelope(gh.api("signInWithEmailLink", {"email": a, "oobCode": code}), 400, "EXPIRED_OOB_CODE")


def test_a_new_link_does_not_invalidate_the_previous_one(gh):
    a = addr("two")
    send(gh, a)
    first = latest_link(gh, a)["oobCode"]
    send(gh, a)
    second = latest_link(gh, a)["oobCode"]
    assert first != second
    assert gh.api("signInWithEmailLink", {"email": a, "oobCode": first}).status_code == 200
    assert gh.api("signInWithEmailLink", {"email": a, "oobCode": second}).status_code == 200


def test_linking_with_an_id_token_and_email_exists(gh):
    first = sign_in(gh, addr("first"))
    b = addr("second")
    linked = sign_in(gh, b, idToken=first["idToken"])
    assert linked["localId"] == first["localId"] and linked["email"] == b.lower() and linked["isNewUser"] is False
    owner = sign_in(gh, addr("owner"))
    send(gh, owner["email"])
    code = latest_link(gh, owner["email"])["oobCode"]
    assert_envelope(gh.api("signInWithEmailLink", {"email": owner["email"], "oobCode": code, "idToken": linked["idToken"]}),
                    400, "EMAIL_EXISTS")


def test_first_link_sign_in_over_an_unverified_account_drops_the_password(gh):
    a = addr("unverified").lower()
    insert_account(gh, "UnverifiedUser0000000000001", a, verified=False, password_hash="c2NyeXB0")
    body = sign_in(gh, a)
    assert body["localId"] == "UnverifiedUser0000000000001" and body["isNewUser"] is False
    user = gh.admin("/accounts:lookup", {"email": [a]}).json()["users"][0]
    assert "passwordHash" not in user and user["emailVerified"] is True
    assert int(user["validSince"]) >= jwks_verify(gh, body["idToken"])["iat"] - 1


# --- createAuthUri -------------------------------------------------------------------------------

def test_create_auth_uri(gh):
    a = addr("uri")
    r = gh.api("createAuthUri", {"identifier": a, "continueUri": "http://localhost/"})
    assert r.status_code == 200
    body = r.json()
    assert body["kind"] == "identitytoolkit#CreateAuthUriResponse" and body["registered"] is False
    assert body["signinMethods"] == [] and len(body["sessionId"]) == 27
    sign_in(gh, a)
    r = gh.post(LEGACY + "/createAuthUri", params={"key": "test-api-key"},
                json={"identifier": a.upper(), "continueUri": "http://localhost/", "sessionId": "s-1"})
    assert r.json() == {"kind": "identitytoolkit#CreateAuthUriResponse", "registered": True, "allProviders": ["password"],
                        "sessionId": "s-1", "signinMethods": ["emailLink"]}


@pytest.mark.parametrize("body,message", [
    ({"continueUri": "http://localhost/"}, "MISSING_IDENTIFIER"),
    ({"identifier": "a@example.com"}, "MISSING_CONTINUE_URI"),
    ({"identifier": "+15555550100", "continueUri": "http://localhost/"}, "INVALID_IDENTIFIER"),
    ({"identifier": "a@example.com", "continueUri": "nope"}, "INVALID_CONTINUE_URI"),
])
def test_create_auth_uri_errors(gh, body, message):
    assert_envelope(gh.api("createAuthUri", body), 400, message)


# --- resetPassword (inspection) and accounts:update {oobCode} -------------------------------------

def test_reset_password_inspects_without_revealing_a_sign_in_address(gh):
    a = addr("inspect")
    send(gh, a)
    code = latest_link(gh, a)["oobCode"]
    r = gh.api("resetPassword", {"oobCode": code})
    assert r.json() == {"kind": "identitytoolkit#ResetPasswordResponse", "requestType": "EMAIL_SIGNIN"}
    assert gh.post(LEGACY + "/resetPassword", params={"key": "test-api-key"}, json={"oobCode": code}).status_code == 200
    assert_envelope(gh.api("resetPassword", {}), 400, "MISSING_OOB_CODE")
    assert_envelope(gh.api("resetPassword", {"oobCode": "nope"}), 400, "INVALID_OOB_CODE")
    assert_envelope(gh.api("resetPassword", {"oobCode": code, "newPassword": "secret123"}), 400, "PASSWORD_LOGIN_DISABLED")
    expire_link(gh, code)
    assert_envelope(gh.api("resetPassword", {"oobCode": code}), 400, "EXPIRED_OOB_CODE")


def test_verify_email_link_applied_through_accounts_update(gh):
    a = addr("verify").lower()
    insert_account(gh, "VerifyUser00000000000000001", a, verified=False)
    r = gh.admin("/accounts:sendOobCode", {"requestType": "VERIFY_EMAIL", "email": a, "returnOobLink": True})
    assert r.status_code == 200, r.text
    code = r.json()["oobCode"]
    assert action_params(r.json()["oobLink"])["mode"] == "verifyEmail"
    assert gh.api("resetPassword", {"oobCode": code}).json()["email"] == a
    r = gh.api("update", {"oobCode": code})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "identitytoolkit#SetAccountInfoResponse" and body["localId"] == "VerifyUser00000000000000001"
    assert body["emailVerified"] is True and body["email"] == a
    assert gh.admin("/accounts:lookup", {"localId": [body["localId"]]}).json()["users"][0]["emailVerified"] is True
    assert_envelope(gh.api("update", {"oobCode": code}), 400, "INVALID_OOB_CODE")
    r = gh.post(LEGACY + "/setAccountInfo", params={"key": "test-api-key"}, json={"oobCode": "nope"})
    assert_envelope(r, 400, "INVALID_OOB_CODE")


def test_verify_email_sent_for_the_signed_in_user(gh):
    user = sign_in(gh, addr("me"))
    r = gh.api("sendOobCode", {"requestType": 4, "idToken": user["idToken"]})
    assert r.status_code == 200 and r.json()["email"] == user["email"]
    entry = latest_link(gh, user["email"], "VERIFY_EMAIL")
    assert gh.api("update", {"oobCode": entry["oobCode"]}).json()["emailVerified"] is True
    send(gh, user["email"])
    signin_code = latest_link(gh, user["email"])["oobCode"]
    assert_envelope(gh.api("update", {"oobCode": signin_code}), 400, "INVALID_OOB_CODE")
    assert gh.admin("/accounts:sendOobCode", {"requestType": "VERIFY_EMAIL", "email": "nobody@example.com",
                                              "returnOobLink": True}).json()["error"]["message"] == "USER_NOT_FOUND"


# --- action handler over plain HTTP (the browser flows are in test_email_pages.py) --------------

def test_app_link_forwards_to_continue_url_without_consuming(gh):
    a = addr("fwd")
    gh.api("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": a, "continueUrl": "https://app.example.com/done?keep=1#frag",
                           "canHandleCodeInApp": True, "iOSBundleId": "com.example.gatehouse.demo"},
           headers={"X-Firebase-Locale": "pt-BR"})
    entry = latest_link(gh, a)
    r = requests.get(entry["oobLink"], allow_redirects=False, timeout=10)
    assert r.status_code == 303 and r.headers["Location"].startswith(gh.base + "/__/auth/action?")
    for method in (requests.get, requests.head):
        r2 = method(r.headers["Location"], allow_redirects=False, timeout=10)
        assert r2.status_code == 303
        assert r2.headers["Location"] == (f"https://app.example.com/done?keep=1&mode=signIn&oobCode={entry['oobCode']}"
                                          "&apiKey=test-api-key&lang=pt#frag")
    assert gh.api("signInWithEmailLink", {"email": a, "oobCode": entry["oobCode"]}).status_code == 200
    r3 = requests.get(r.headers["Location"], allow_redirects=False, timeout=10)
    assert r3.status_code == 410 and 'data-problem="used"' in r3.text


def test_links_wrapper_only_forwards_to_our_action_handler(gh):
    assert gh.get("/__/auth/links", params={"link": "https://evil.example.net/__/auth/action?mode=signIn"}).status_code == 400
    assert gh.get("/__/auth/links", params={"link": gh.base + "/__/auth/handler?x=1"}).status_code == 400
    assert gh.get("/__/auth/links").status_code == 400
    r = gh.get("/__/auth/links", params={"link": gh.base + "/__/auth/action?apiKey=k&mode=signIn&oobCode=x"})
    assert r.status_code == 303 and r.headers["Location"] == gh.base + "/__/auth/action?apiKey=k&mode=signIn&oobCode=x"


@pytest.mark.parametrize("query,status,kind", [
    ({"mode": "signIn", "oobCode": "x"}, 400, "invalid"),
    ({"apiKey": "wrong", "mode": "signIn", "oobCode": "x"}, 400, "invalid"),
    ({"apiKey": "test-api-key", "mode": "resetPassword", "oobCode": "x"}, 400, "unsupported"),
    ({"apiKey": "test-api-key", "mode": "signIn", "oobCode": "unknown"}, 400, "invalid"),
])
def test_action_handler_problem_pages(gh, query, status, kind):
    r = gh.get("/__/auth/action", params=query)
    assert r.status_code == status and f'data-problem="{kind}"' in r.text
    assert r.headers["Content-Security-Policy"].startswith("default-src 'self'")
    assert "Location" not in r.headers


# --- emulator listing, app association files -----------------------------------------------------

def test_emulator_listing_shape(gh):
    codes = oob_codes(gh)
    assert codes and all(set(c) == {"email", "oobCode", "oobLink", "requestType"} for c in codes)


def test_apple_app_site_association(gh):
    for path in ("/.well-known/apple-app-site-association", "/apple-app-site-association"):
        r = gh.get(path)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
        detail = r.json()["applinks"]["details"][0]
        assert detail["appID"] == "DEMOTEAM01.com.example.gatehouse.demo"
        assert detail["appIDs"] == ["DEMOTEAM01.com.example.gatehouse.demo"]
        assert detail["paths"] == ["/__/auth/links*", "/__/auth/action*"]
        assert detail["components"] == [{"/": "/__/auth/links*"}, {"/": "/__/auth/action*"}]


def test_asset_links(gh):
    r = gh.get("/.well-known/assetlinks.json")
    assert r.status_code == 200
    assert r.json() == [{"relation": ["delegate_permission/common.handle_all_urls"],
                         "target": {"namespace": "android_app", "package_name": "com.example.gatehouse",
                                    "sha256_cert_fingerprints": [ANDROID_PRINT]}}]
