"""The firebase-admin PyPI package (pinned in requirements.txt) against Gatehouse in emulator mode:
FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:<port>, project demo-gatehouse (firebase-wire.md §6.4)."""
import datetime
import time
import uuid

import pytest
from firebase_admin import auth, exceptions

from conftest import admin_sdk, assert_envelope
from session_support import PROJECT, refresh, session_cookie, sign_up


@pytest.fixture(scope="module")
def app(gatehouse):
    with admin_sdk(gatehouse, PROJECT) as a:
        yield a


def uid(prefix="u"):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def id_token_for(gatehouse, user_id):
    """An ID token for an existing user (operator tool, same store)."""
    return gatehouse.tool("tokens", "mint", "--uid", user_id).stdout.strip()


def test_create_and_get_user_by_uid_email_and_phone(app):
    u = uid("alice")
    rec = auth.create_user(uid=u, display_name="Alice", email="Alice@Example.com", phone_number="+16505553434",
                           photo_url="https://example.com/alice.png", email_verified=True, app=app)
    assert rec.uid == u
    assert rec.email == "alice@example.com"
    assert rec.phone_number == "+16505553434"
    assert rec.display_name == "Alice"
    assert rec.photo_url == "https://example.com/alice.png"
    assert rec.email_verified is True and rec.disabled is False
    assert rec.user_metadata.creation_timestamp > 0
    assert [p.provider_id for p in rec.provider_data] == ["phone"]
    for got in (auth.get_user(u, app=app), auth.get_user_by_email("alice@example.com", app=app),
                auth.get_user_by_phone_number("+16505553434", app=app)):
        assert got.uid == u and got.email == "alice@example.com" and got.phone_number == "+16505553434"
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user("nobody-here", app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user_by_phone_number("+16505550000", app=app)


def test_create_user_errors_map_to_admin_sdk_exceptions(app):
    u = uid()
    auth.create_user(uid=u, email=f"{u}@example.com", phone_number="+33612345670", app=app)
    with pytest.raises(auth.UidAlreadyExistsError):
        auth.create_user(uid=u, app=app)
    with pytest.raises(auth.EmailAlreadyExistsError):
        auth.create_user(email=f"{u}@example.com", app=app)
    with pytest.raises(auth.PhoneNumberAlreadyExistsError):
        auth.create_user(phone_number="+33612345670", app=app)
    with pytest.raises(exceptions.InvalidArgumentError, match="INVALID_PHONE_NUMBER"):
        auth.create_user(phone_number="+1234", app=app)
    generated = auth.create_user(app=app)
    assert len(generated.uid) == 28


def test_update_user_fields_and_deletions(app):
    u = uid()
    auth.create_user(uid=u, display_name="Before", phone_number="+33612345671", photo_url="https://example.com/p.png", app=app)
    rec = auth.update_user(u, display_name="After", email="after@example.com", email_verified=True, app=app)
    assert rec.display_name == "After" and rec.email == "after@example.com" and rec.email_verified
    rec = auth.update_user(u, phone_number="+33612345672", disabled=True, app=app)
    assert rec.phone_number == "+33612345672" and rec.disabled
    rec = auth.update_user(u, display_name=auth.DELETE_ATTRIBUTE, photo_url=auth.DELETE_ATTRIBUTE,
                           phone_number=auth.DELETE_ATTRIBUTE, disabled=False, app=app)
    assert rec.display_name is None and rec.photo_url is None and rec.phone_number is None and not rec.disabled
    assert "phone" not in [p.provider_id for p in rec.provider_data]
    with pytest.raises(auth.UserNotFoundError):
        auth.update_user("nobody-here", display_name="x", app=app)


def test_set_custom_user_claims_reach_tokens(app, gatehouse):
    u = uid()
    auth.create_user(uid=u, app=app)
    auth.set_custom_user_claims(u, {"role": "admin", "tier": 2}, app=app)
    assert auth.get_user(u, app=app).custom_claims == {"role": "admin", "tier": 2}
    decoded = auth.verify_id_token(id_token_for(gatehouse, u), app=app)
    assert decoded["role"] == "admin" and decoded["tier"] == 2
    auth.set_custom_user_claims(u, None, app=app)
    assert auth.get_user(u, app=app).custom_claims is None
    # What the SDK validates client-side, the server refuses too (wire format of §3.1).
    r = gatehouse.admin("/accounts:update", {"localId": u, "customAttributes": '{"sub": "x"}'})
    assert_envelope(r, 400, "FORBIDDEN_CLAIM : sub")
    r = gatehouse.admin("/accounts:update", {"localId": u, "customAttributes": '{"a": "' + "x" * 1000 + '"}'})
    assert_envelope(r, 400, "CLAIMS_TOO_LARGE")
    r = gatehouse.admin("/accounts:update", {"localId": u, "customAttributes": "[1]"})
    assert_envelope(r, 400, "INVALID_CLAIMS")


def test_list_users_pages_through_everyone(app):
    mine = sorted(uid("list") for _ in range(5))
    for u in mine:
        auth.create_user(uid=u, app=app)
    page = auth.list_users(max_results=2, app=app)
    pages, seen = 0, []
    while page:
        pages += 1
        assert len(page.users) <= 2
        seen += [u.uid for u in page.users]
        page = page.get_next_page()
    assert seen == sorted(seen)
    assert set(mine) <= set(seen)
    assert len(seen) == len(set(seen))
    assert pages >= 3
    assert [u.uid for u in auth.list_users(app=app).iterate_all()] == seen


def test_revoke_refresh_tokens_revokes_id_tokens_refresh_tokens_and_cookies(app, gatehouse):
    s = sign_up(gatehouse)
    cookie = session_cookie(gatehouse, s["idToken"])
    assert auth.verify_id_token(s["idToken"], check_revoked=True, app=app)["uid"] == s["localId"]
    assert auth.verify_session_cookie(cookie, check_revoked=True, app=app)["uid"] == s["localId"]
    time.sleep(1.05)  # validSince has whole seconds: tokens of the revocation's own second stay valid
    auth.revoke_refresh_tokens(s["localId"], app=app)
    assert auth.get_user(s["localId"], app=app).tokens_valid_after_timestamp >= int(time.time() - 2) * 1000
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(s["idToken"], check_revoked=True, app=app)
    with pytest.raises(auth.RevokedSessionCookieError):
        auth.verify_session_cookie(cookie, check_revoked=True, app=app)
    r = refresh(gatehouse, s["refreshToken"])
    assert_envelope(r, 400, "TOKEN_EXPIRED")


def test_create_and_verify_session_cookie(app, gatehouse):
    s = sign_up(gatehouse)
    cookie = auth.create_session_cookie(s["idToken"], expires_in=datetime.timedelta(minutes=10), app=app)
    claims = auth.verify_session_cookie(cookie, check_revoked=True, app=app)
    assert claims["uid"] == s["localId"]
    assert claims["iss"] == f"https://session.firebase.google.com/{PROJECT}"
    assert claims["exp"] - claims["iat"] == 600
    assert claims["firebase"]["sign_in_provider"] == "anonymous"
    with pytest.raises(ValueError):  # the SDK's own bound; the server's is tested below
        auth.create_session_cookie(s["idToken"], expires_in=datetime.timedelta(seconds=299), app=app)
    r = gatehouse.post(f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}:createSessionCookie",
                       json={"idToken": s["idToken"], "validDuration": 1209601}, headers={"Authorization": "Bearer owner"})
    assert_envelope(r, 400, "INVALID_SESSION_COOKIE_DURATION")


def test_verify_id_token_check_revoked_sees_disabled_users(app, gatehouse):
    s = sign_up(gatehouse)
    assert auth.verify_id_token(s["idToken"], check_revoked=True, app=app)["firebase"]["sign_in_provider"] == "anonymous"
    auth.update_user(s["localId"], disabled=True, app=app)
    with pytest.raises(auth.UserDisabledError):
        auth.verify_id_token(s["idToken"], check_revoked=True, app=app)


def test_delete_user_and_delete_users(app, gatehouse):
    a, b, c, d = uid(), uid(), uid(), uid()
    for u in (a, b, c, d):
        auth.create_user(uid=u, app=app)
    auth.delete_user(a, app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(a, app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.delete_user(a, app=app)
    # delete_users always forces (the SDK sends force: true); unknown ids count as deleted.
    result = auth.delete_users([b, c, "never-existed"], app=app)
    assert result.success_count == 3 and result.failure_count == 0 and result.errors == []
    for u in (b, c):
        with pytest.raises(auth.UserNotFoundError):
            auth.get_user(u, app=app)
    # Without force, an enabled account is refused with Firebase's message.
    r = gatehouse.admin("/accounts:batchDelete", {"localIds": ["never-existed", d], "force": False})
    assert r.status_code == 200, r.text
    assert r.json() == {"errors": [{"index": 1, "localId": d, "message": "NOT_DISABLED : Disable the account before batch deletion."}]}
    assert auth.get_user(d, app=app).uid == d
    assert_envelope(gatehouse.admin("/accounts:batchDelete", {"localIds": []}), 400, "LOCAL_ID_LIST_EXCEEDS_LIMIT")
