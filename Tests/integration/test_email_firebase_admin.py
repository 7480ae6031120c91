"""Compatibility with the Firebase Admin SDK for Python in emulator mode (firebase-wire.md §6.4):
it generates email links against Gatehouse, the links complete through the REST API, and the
SDK then finds the user."""
import uuid

import pytest
import requests

from conftest import Gatehouse, admin_sdk
from email_support import action_params, config, insert_account, link_params

firebase_admin = pytest.importorskip("firebase_admin")
from firebase_admin import auth, exceptions  # noqa: E402,F401


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("gh-admin"), config=config()).start()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def app(gh):
    with admin_sdk(gh, "demo-gatehouse") as a:
        yield a


def complete(gh, address, link):
    r = gh.api("signInWithEmailLink", {"email": address, "oobCode": link_params(link)["oobCode"]})
    assert r.status_code == 200, r.text
    return r.json()


def test_generated_app_link_signs_in_a_user_the_sdk_then_finds(gh, app):
    address = f"admin-{uuid.uuid4().hex[:8]}@example.com"
    settings = auth.ActionCodeSettings(url="https://app.example.com/finish", handle_code_in_app=True,
                                       ios_bundle_id="com.example.gatehouse.demo", android_package_name="com.example.gatehouse",
                                       android_install_app=True, android_minimum_version="12")
    link = auth.generate_sign_in_with_email_link(address, settings, app=app)
    assert link.startswith(gh.base + "/__/auth/links?link=")
    seen = link_params(link)
    assert seen["mode"] == "signIn" and seen["oobCode"]
    body = complete(gh, address, link)
    assert body["isNewUser"] is True

    user = auth.get_user_by_email(address, app=app)
    assert user.uid == body["localId"] and user.email == address and user.email_verified is True
    assert [p.provider_id for p in user.provider_data] == ["password"]
    assert user.provider_data[0].uid == address
    assert auth.get_user(body["localId"], app=app).email == address


def test_generated_web_link_and_link_domain(gh, app):
    address = f"web-{uuid.uuid4().hex[:8]}@example.com"
    link = auth.generate_sign_in_with_email_link(address, auth.ActionCodeSettings(url=f"{gh.base}/__/auth/health"), app=app)
    params = action_params(link)
    assert link.startswith(gh.base + "/__/auth/action?") and params["continueUrl"] == f"{gh.base}/__/auth/health"
    page = requests.get(link, timeout=10)
    assert page.status_code == 200 and 'id="confirm"' in page.text, "handleCodeInApp false: the hosted page confirms"
    complete(gh, address, link)

    hosted = auth.generate_sign_in_with_email_link(
        address, auth.ActionCodeSettings(url="https://app.example.com/f", handle_code_in_app=True,
                                         ios_bundle_id="com.example.gatehouse.demo", link_domain="links.example.com"), app=app)
    assert hosted.startswith("https://links.example.com/__/auth/links?link=")
    legacy = auth.generate_sign_in_with_email_link(
        address, auth.ActionCodeSettings(url="https://app.example.com/f", handle_code_in_app=True,
                                         android_package_name="com.example.gatehouse", dynamic_link_domain="links.example.com"),
        app=app)
    assert legacy.startswith("https://links.example.com/__/auth/links?link=")


def test_email_verification_link(gh, app):
    address = f"verify-{uuid.uuid4().hex[:8]}@example.com"
    insert_account(gh, "AdminVerifyUser000000000001", address, verified=False)
    assert auth.get_user_by_email(address, app=app).email_verified is False
    link = auth.generate_email_verification_link(address, app=app)
    assert action_params(link)["mode"] == "verifyEmail"
    r = gh.api("update", {"oobCode": action_params(link)["oobCode"]})
    assert r.status_code == 200, r.text
    assert auth.get_user_by_email(address, app=app).email_verified is True


def test_sdk_errors_map_to_its_exception_types(gh, app):
    with pytest.raises(auth.InvalidHostingLinkDomainError):
        auth.generate_sign_in_with_email_link("x@example.com", auth.ActionCodeSettings(
            url="https://app.example.com/f", handle_code_in_app=True, ios_bundle_id="com.example.gatehouse.demo",
            link_domain="evil.example.net"), app=app)
    with pytest.raises(auth.InvalidDynamicLinkDomainError):
        auth.generate_sign_in_with_email_link("x@example.com", auth.ActionCodeSettings(
            url="https://app.example.com/f", dynamic_link_domain="x.page.link"), app=app)
    with pytest.raises(auth.UserNotFoundError):
        auth.generate_email_verification_link("nobody@example.com", app=app)
    with pytest.raises(firebase_admin.exceptions.InvalidArgumentError) as err:
        auth.generate_sign_in_with_email_link("x@example.com", auth.ActionCodeSettings(url="https://evil.example.net/"), app=app)
    assert "UNAUTHORIZED_DOMAIN" in str(err.value) and "Domain not allowlisted by project" in str(err.value)
