"""Passkeys on the hosted pages in headless Chromium, with WebDriver's virtual authenticator
(CTAP2, internal, resident keys, user verification): a user signed in by email link adds a
passkey on the account page (or from the offer at its top), signs out, and signs in again from
the chooser's "Sign in with a passkey"; the email page's address field offers it through the
browser's autofill (conditional mediation); nginx's /demo/passkey/ (protect-passkey.conf) sends
any other session to the passkey page and back; passkeys are renamed and removed; a passkey the
server does not know is refused in words. What Chromium made (the attestation and the assertion
the pages post) is also checked by the independent `webauthn` library.

WebAuthn needs a secure context and a relying party id matching the page's host: in dev mode the
relying party is `localhost`, so the browser opens http://localhost:<port> (a secure context like
127.0.0.1, but the id must match), and the project's public origin says the same, so that every
link and redirect the server makes stays on that origin (its cookies are the browser's there).
Screenshots of every step go to test-output/test_passkey_pages/<test>/."""
import base64
import json
import re
import secrets
import time
import uuid
from urllib.parse import quote

import pytest
import requests
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Credential, VirtualAuthenticatorOptions
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from conftest import Gatehouse, chromium_driver
from email_support import jwks_verify
from mfa_support import email_user, mfa, totp_user
from session_support import COOKIE

PROJECT = "demo-gatehouse"
OFFER_COOKIE = "__Host-gatehouse-passkey-offer"
MFA_COOKIE = "__Host-gh_mfa"
POSTS = "gh-test-posts"

# Every form the pages submit from script is recorded (action and fields) in the origin's
# localStorage just before it goes, so a test can read what Chromium's authenticator produced.
RECORD_POSTS = """(function () {
  var submit = HTMLFormElement.prototype.submit;
  HTMLFormElement.prototype.submit = function () {
    try {
      var entry = { action: this.getAttribute('action') };
      new FormData(this).forEach(function (v, k) { entry[k] = v; });
      var all = JSON.parse(window.localStorage.getItem('%s') || '[]');
      all.push(entry);
      window.localStorage.setItem('%s', JSON.stringify(all));
    } catch (e) {}
    return submit.call(this);
  };
}());""" % (POSTS, POSTS)


def project(**passkeys) -> dict:
    """The dev project: passkeys on (a challenge budget for a whole module from one address),
    phone and TOTP second factors, budgets high enough for every test's sign-ins."""
    return {"id": PROJECT, "api_keys": ["test-api-key"], "authorized_domains": ["localhost", "127.0.0.1"],
            "mfa": "ENABLED", "mfa_totp": {"enabled": True, "adjacent_intervals": 1},
            "passkeys": dict({"enabled": True, "challenges_per_ip_per_5min": 10000}, **passkeys),
            "phone": {"verify_attempts_per_ip_per_5min": 10000, "failure_budget_per_day": 100},
            "email_link": {"sends_per_ip_per_hour": 10000}}


def start(data, **passkeys) -> Gatehouse:
    """A Gatehouse whose public origin is http://localhost:<its port> (the config names the port,
    so it is written once the port is chosen)."""
    g = Gatehouse(data)
    g.site = g.base = f"http://localhost:{g.port}"
    g.config_path = data / "gatehouse.json"
    g.config_path.write_text(json.dumps({"mode": "dev", "public_origin": g.site, "projects": [project(**passkeys)]}, indent=2))
    return g.start()


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = start(tmp_path_factory.mktemp("gh-passkey-pages"))
    yield g
    g.stop()


@pytest.fixture
def other_gatehouse(tmp_path_factory):
    """Started by the tests that need a project set up otherwise."""
    started = []

    def make(**passkeys):
        g = start(tmp_path_factory.mktemp("gh-passkey-other"), **passkeys)
        started.append(g)
        return g

    yield make
    for g in started:
        g.stop()


# --- the browser ------------------------------------------------------------------------------------

def browser(authenticator=True):
    """Chromium 420 CSS px wide (a phone), recording the forms its scripts submit, with a virtual
    platform authenticator (passkeys: resident keys, user verification that succeeds)."""
    d = chromium_driver()
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 420, "height": 900, "deviceScaleFactor": 1, "mobile": True})
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_POSTS})
    if authenticator:
        add_authenticator(d)
    return d


def add_authenticator(d):
    d.add_virtual_authenticator(VirtualAuthenticatorOptions(
        protocol=VirtualAuthenticatorOptions.Protocol.CTAP2, transport=VirtualAuthenticatorOptions.Transport.INTERNAL,
        has_resident_key=True, has_user_verification=True, is_user_verified=True))


def shot(d, output_dir, name):
    path = output_dir / f"{name}.png"
    d.save_screenshot(str(path))
    return path


def full_shot(d, output_dir, name):
    """The whole page, however long (the account page with its passkeys is taller than a phone)."""
    height = d.execute_script("return Math.max(document.documentElement.scrollHeight, document.body.scrollHeight)")
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 420, "height": max(900, int(height)), "deviceScaleFactor": 1,
                                                             "mobile": True})
    try:
        return shot(d, output_dir, name)
    finally:
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 420, "height": 900, "deviceScaleFactor": 1, "mobile": True})


def wait_for(d, by, what, timeout=10):
    return WebDriverWait(d, timeout).until(EC.presence_of_element_located((by, what)))


def wait_visible(d, by, what, timeout=10):
    return WebDriverWait(d, timeout).until(EC.visibility_of_element_located((by, what)))


def wait_url(d, prefix, timeout=10):
    WebDriverWait(d, timeout).until(lambda d: d.current_url.startswith(prefix))


def click(d, element):
    d.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def click_to_next_page(d, element, timeout=10):
    """Clicks, and waits for the page to be replaced (the next page may have the same ids)."""
    page = d.find_element(By.TAG_NAME, "html")
    click(d, element)

    def replaced(_):
        try:
            page.get_attribute("lang")
            return False
        except WebDriverException:  # stale, or (some chromedriver versions) a node of no document
            return True
    WebDriverWait(d, timeout).until(replaced)


def posted(d, action_prefix):
    """The last recorded form submitted to an action starting with `action_prefix`."""
    entries = json.loads(d.execute_script(f"return window.localStorage.getItem('{POSTS}') || '[]'"))
    found = [e for e in entries if e["action"].startswith(action_prefix)]
    assert found, entries
    return found[-1]


def session_claims(g, d):
    cookie = d.get_cookie(COOKIE)
    assert cookie, d.get_cookies()
    return jwks_verify(g, cookie["value"], issuer=f"https://session.firebase.google.com/{PROJECT}")


def b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- signing in by email link ----------------------------------------------------------------------

def address(tag):
    return f"{tag}-{uuid.uuid4().hex[:8]}@example.com"


def sign_in_link(g, email, continue_url):
    r = g.admin("/accounts:sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": True,
                                          "continueUrl": continue_url})
    assert r.status_code == 200, r.text
    link = r.json()["oobLink"]
    assert link.startswith(g.site + "/__/auth/action?"), link
    return link


def email_sign_in(d, g, email, continue_url=None, output_dir=None, name=None, hl=None):
    """Opens an email link in a browser that did not ask for it (the address is typed) and
    confirms; lands on `continue_url` (the account page by default)."""
    target = continue_url or g.site + "/__/auth/account"
    link = sign_in_link(g, email, target)
    d.get(link + (f"&hl={hl}" if hl else ""))
    wait_for(d, By.ID, "email").send_keys(email)
    if output_dir:
        shot(d, output_dir, name)
    d.find_element(By.ID, "confirm").click()
    wait_url(d, target)


def add_passkey(d, name=None, output_dir=None, shot_name=None):
    """On the account page: "Add a passkey" (with `name`), and back to the page with its notice."""
    form = wait_visible(d, By.ID, "passkey-add")
    if name:
        form.find_element(By.ID, "passkey-name").send_keys(name)
    if output_dir:
        shot(d, output_dir, shot_name)
    click_to_next_page(d, d.find_element(By.ID, "passkey-add-button"))
    wait_for(d, By.ID, "passkey-status")
    assert "passkey=added" in d.current_url


def passkey_items(d):
    return d.find_elements(By.CSS_SELECTOR, "#passkey-list li")


def passkey_sign_in(d, output_dir=None, shot_name=None):
    """On /__/auth/passkey: the button, the authenticator answers, the form posts."""
    button = wait_visible(d, By.ID, "passkey-signin")
    if output_dir:
        shot(d, output_dir, shot_name)
    click(d, button)


def enrolled_user(d, g, tag, name="Laptop"):
    """A new user signed in by email link in `d`, with one passkey on `d`'s authenticator: (email, uid)."""
    email = address(tag)
    email_sign_in(d, g, email)
    add_passkey(d, name)
    uid = session_claims(g, d)["sub"]
    return email, uid


def sign_out(d):
    click_to_next_page(d, wait_for(d, By.ID, "sign-out"))
    wait_for(d, By.ID, "account-status")
    assert d.get_cookie(COOKIE) is None


# --- tests ---------------------------------------------------------------------------------------------

def test_add_a_passkey_then_sign_in_with_it(gh, output_dir):
    webauthn = pytest.importorskip("webauthn")
    g = gh
    email = address("passkey")
    target = g.site + "/__/auth/health?from=passkey"
    d = browser()
    try:
        # First factor: an email link, landing on the account page with the offer at its top.
        email_sign_in(d, g, email, output_dir=output_dir, name="01-confirm-link")
        offer = wait_visible(d, By.ID, "passkey-offer")
        assert "Add a passkey for faster sign-in" in offer.text
        assert wait_for(d, By.ID, "passkeys-none").is_displayed()
        assert d.find_element(By.ID, "account-method").text == "Email link"
        shot(d, output_dir, "02-account-offer")
        full_shot(d, output_dir, "03-account-no-passkey-full")

        # Add one from the passkeys section, named.
        add_passkey(d, "Work laptop", output_dir, "04-add-named")
        assert "Passkey added" in d.find_element(By.ID, "passkey-status").text
        assert not d.find_elements(By.ID, "passkey-offer"), "no offer once the user has a passkey"
        items = passkey_items(d)
        assert len(items) == 1
        text = items[0].text
        assert "Work laptop" in text and "Created " in text and "Not used yet" in text, text
        credential_id = items[0].get_attribute("data-credential-id")
        on_device = d.get_credentials()
        assert len(on_device) == 1 and on_device[0].is_resident_credential and on_device[0].rp_id == "localhost"
        assert b64decode(on_device[0].id) == b64decode(credential_id)
        uid = session_claims(g, d)["sub"]
        assert b64decode(on_device[0].user_handle) == uid.encode(), "the user handle is the local id"
        full_shot(d, output_dir, "05-account-added-full")

        # What Chromium made, as the page posted it, is a registration the webauthn library accepts.
        reg = posted(d, "/__/auth/account/passkey/verify")
        assert reg["name"] == "Work laptop" and reg["type"] == "public-key" and reg["id"] == credential_id
        client_data = json.loads(b64decode(reg["clientDataJSON"]))
        assert client_data["type"] == "webauthn.create" and client_data["origin"] == g.site
        verified = webauthn.verify_registration_response(
            credential={"id": reg["id"], "rawId": reg["rawId"], "type": reg["type"],
                        "response": {"clientDataJSON": reg["clientDataJSON"], "attestationObject": reg["attestationObject"]}},
            expected_challenge=b64decode(client_data["challenge"]), expected_origin=g.site, expected_rp_id="localhost",
            require_user_verification=True)
        assert verified.credential_id == b64decode(credential_id)
        assert verified.user_verified

        # Sign out; back in from the chooser's "Sign in with a passkey", on to the continue URL.
        sign_out(d)
        d.get(g.site + "/__/auth/signin?continueUrl=" + quote(target, safe=""))
        choice = wait_for(d, By.ID, "choose-passkey")
        assert choice.text.startswith("Sign in with a passkey")
        shot(d, output_dir, "06-chooser")
        click(d, choice)
        wait_url(d, g.site + "/__/auth/passkey?continueUrl=")
        assert d.find_element(By.ID, "passkey-unsupported").is_displayed() is False
        passkey_sign_in(d, output_dir, "07-passkey-page")
        wait_url(d, target)
        c = session_claims(g, d)
        assert c["sub"] == uid and c["firebase"]["sign_in_provider"] == "passkey"
        assert "sign_in_second_factor" not in c["firebase"]

        # The assertion the page posted: the webauthn library accepts it with the registered key.
        assertion = posted(d, "/__/auth/passkey")
        assert assertion["id"] == credential_id and b64decode(assertion["userHandle"]) == uid.encode()
        client_data = json.loads(b64decode(assertion["clientDataJSON"]))
        assert client_data["type"] == "webauthn.get" and client_data["origin"] == g.site
        checked = webauthn.verify_authentication_response(
            credential={"id": assertion["id"], "rawId": assertion["rawId"], "type": assertion["type"],
                        "response": {"clientDataJSON": assertion["clientDataJSON"], "authenticatorData": assertion["authenticatorData"],
                                     "signature": assertion["signature"], "userHandle": assertion["userHandle"]}},
            expected_challenge=b64decode(client_data["challenge"]), expected_origin=g.site, expected_rp_id="localhost",
            credential_public_key=verified.credential_public_key, credential_current_sign_count=verified.sign_count,
            require_user_verification=True)
        assert checked.credential_id == b64decode(credential_id) and checked.user_verified

        # The account page says how this session signed in, and when the passkey was last used.
        d.get(g.site + "/__/auth/account")
        assert wait_for(d, By.ID, "account-method").text == "Passkey"
        assert "Last used " in passkey_items(d)[0].text
        assert not d.find_elements(By.ID, "passkey-offer")
        full_shot(d, output_dir, "08-account-after-passkey-sign-in-full")

        # Without a continue URL, a passkey sign-in lands on the account page.
        sign_out(d)
        d.get(g.site + "/__/auth/passkey")
        passkey_sign_in(d)
        wait_url(d, g.site + "/__/auth/account")
        assert wait_for(d, By.ID, "account-method").text == "Passkey"
    finally:
        d.quit()


def test_the_offer_adds_a_passkey_or_is_dismissed(gh, output_dir):
    """After a sign-in by email link: "Add" in the offer enrols at once; "Not now" sets a
    long-lived HttpOnly cookie and the offer is not shown again in this browser."""
    g = gh
    d = browser()
    try:
        email_sign_in(d, g, address("offer-add"))
        click_to_next_page(d, wait_visible(d, By.ID, "passkey-offer-add"))
        wait_for(d, By.ID, "passkey-status")
        assert len(passkey_items(d)) == 1
        assert "Passkey" in passkey_items(d)[0].text, "an unnamed passkey is called by its kind"
        assert not d.find_elements(By.ID, "passkey-offer")
        shot(d, output_dir, "1-added-from-offer")

        # Another user in a fresh browser: "Not now".
        d.quit()
        d = browser()
        email_sign_in(d, g, address("offer-dismiss"), hl="fr")
        d.get(g.site + "/__/auth/account?hl=fr")
        offer = wait_visible(d, By.ID, "passkey-offer")
        assert "clé d’accès" in offer.text
        shot(d, output_dir, "2-offer-fr")
        click_to_next_page(d, d.find_element(By.ID, "passkey-offer-dismiss"))
        wait_for(d, By.ID, "passkeys-none")
        assert not d.find_elements(By.ID, "passkey-offer")
        cookie = d.get_cookie(OFFER_COOKIE)
        assert cookie and cookie["value"] == "dismissed"
        assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Lax" and cookie["path"] == "/"
        assert cookie["expiry"] > time.time() + 90 * 24 * 3600
        d.get(g.site + "/__/auth/account")
        wait_for(d, By.ID, "passkeys-none")
        assert not d.find_elements(By.ID, "passkey-offer")
        shot(d, output_dir, "3-offer-dismissed")
    finally:
        d.quit()


def test_conditional_ui_on_the_email_field(gh, output_dir):
    """The email page's address field is `autocomplete="username webauthn"` and its script starts
    a conditional request (the browser's autofill offers the passkeys it has for the site);
    choosing one signs in. Chromium's virtual authenticator answers a conditional request at
    once with the credential it holds (no autofill to choose from), which stands in for the
    choice; with no credential it refuses the request at once (a browser's autofill would offer
    nothing and wait), and the address form works as before."""
    g = gh
    target = g.site + "/__/auth/health?from=conditional"
    email_page = g.site + "/__/auth/email?continueUrl=" + quote(target, safe="")
    r = requests.get(email_page, timeout=10)
    assert 'autocomplete="username webauthn"' in r.text and 'data-conditional' in r.text

    # An authenticator with nothing for this site: no passkey sign-in; the email page stays.
    d = browser()
    try:
        d.get(email_page)
        field = wait_for(d, By.ID, "email")
        assert field.get_attribute("autocomplete") == "username webauthn"
        WebDriverWait(d, 10).until(lambda d: d.find_element(By.ID, "passkey-form").get_attribute("data-conditional-state"))
        state = d.find_element(By.ID, "passkey-form").get_attribute("data-conditional-state")
        if state == "unavailable":
            pytest.skip("this Chromium says conditional mediation is not available")
        assert state in ("waiting", "failed"), state
        time.sleep(0.5)
        assert d.current_url == email_page
        shot(d, output_dir, "1-email-page")
        # The address form still sends a link.
        field.send_keys(address("conditional-link"))
        d.find_element(By.CSS_SELECTOR, "form.gh-email-form button[type=submit]").click()
        wait_for(d, By.ID, "sent-to")
        shot(d, output_dir, "2-link-sent")
    finally:
        d.quit()

    # With a passkey: the conditional request resolves, the assertion posts, signed in.
    d = browser()
    try:
        _, uid = enrolled_user(d, g, "conditional")
        sign_out(d)
        d.get(email_page)
        try:
            wait_url(d, target, timeout=10)
        except Exception:
            shot(d, output_dir, "3-still-waiting")
            pytest.skip("Chromium's virtual authenticator left the conditional request pending: the autofill needs a "
                        "person's choice, which WebDriver cannot make")
        c = session_claims(g, d)
        assert c["sub"] == uid and c["firebase"]["sign_in_provider"] == "passkey"
        assertion = posted(d, "/__/auth/passkey")
        assert assertion["continueUrl"] == target
        assert json.loads(b64decode(assertion["clientDataJSON"]))["type"] == "webauthn.get"
        shot(d, output_dir, "3-signed-in-from-the-email-page")
    finally:
        d.quit()


def test_a_location_that_requires_a_passkey(gh, output_dir):
    """/demo/passkey/ (protect-passkey.conf): no session → sign in; a session from an email link →
    the passkey page, then back; a passkey session passes."""
    g = gh
    protected = g.site + "/demo/passkey/page?x=1"
    d = browser()
    try:
        d.get(protected)
        wait_url(d, g.site + "/__/auth/signin?continueUrl=")
        assert wait_for(d, By.ID, "choose-passkey")
        shot(d, output_dir, "1-not-signed-in")
        # Signed in by email link, with no passkey yet: the passkey page says where to make one.
        email_sign_in(d, g, address("protect"))
        uid = session_claims(g, d)["sub"]
        assert session_claims(g, d)["firebase"]["sign_in_provider"] == "password"
        d.get(protected)
        wait_url(d, g.site + "/__/auth/passkey?continueUrl=")
        assert d.current_url == g.site + "/__/auth/passkey?continueUrl=" + quote(protected, safe="")
        assert "You have no passkey yet." in wait_for(d, By.ID, "passkey-none").text
        shot(d, output_dir, "2-passkey-required-none-yet")
        click(d, d.find_element(By.ID, "passkey-none-add"))
        add_passkey(d, "Desk")
        d.get(protected)
        wait_url(d, g.site + "/__/auth/passkey?continueUrl=")
        assert not d.find_elements(By.ID, "passkey-none")
        passkey_sign_in(d, output_dir, "3-passkey-required")
        WebDriverWait(d, 10).until(lambda d: d.current_url == protected)
        body = d.find_element(By.TAG_NAME, "body").text
        assert "you are signed in" in body and "X-Auth-Provider: passkey" in body and f"X-Auth-User-Id: {uid}" in body
        shot(d, output_dir, "4-protected")
        # Without a browser: the passkey session passes, the email-link one does not.
        r = g.get("/demo/passkey/page", headers={"Cookie": f"{COOKIE}={d.get_cookie(COOKIE)['value']}"})
        assert r.status_code == 200
    finally:
        d.quit()


def test_rename_and_remove(gh, output_dir):
    g = gh
    d = browser()
    try:
        email, uid = enrolled_user(d, g, "rename", name="Old name")
        # Rename: the disclosure opens the form.
        item = passkey_items(d)[0]
        click(d, item.find_element(By.CSS_SELECTOR, "details summary"))
        field = item.find_element(By.CSS_SELECTOR, "input[name=name]")
        assert field.get_attribute("value") == "Old name"
        field.clear()
        field.send_keys("  Phone  ")
        full_shot(d, output_dir, "1-rename")
        click_to_next_page(d, item.find_element(By.CSS_SELECTOR, ".gh-account-rename-form button[type=submit]"))
        wait_for(d, By.ID, "passkey-status")
        assert "passkey=renamed" in d.current_url
        assert passkey_items(d)[0].find_element(By.CSS_SELECTOR, ".gh-account-passkey-name").text == "Phone"
        shot(d, output_dir, "2-renamed")

        # A passkey sign-in, then its removal: every passkey sign-in ends (the old cookie with
        # it), this browser goes on with a new session; the passkey is refused afterwards.
        sign_out(d)
        d.get(g.site + "/__/auth/passkey")
        passkey_sign_in(d)
        wait_url(d, g.site + "/__/auth/account")
        old = d.get_cookie(COOKIE)["value"]
        assert g.get("/demo/", headers={"Cookie": f"{COOKIE}={old}"}).status_code == 200
        item = passkey_items(d)[0]
        click_to_next_page(d, item.find_element(By.CSS_SELECTOR, "form[action^='/__/auth/account/passkey/remove'] button"))
        wait_for(d, By.ID, "passkeys-none")
        assert "passkey=removed" in d.current_url
        assert "ended" in d.find_element(By.ID, "passkey-status").text
        new = d.get_cookie(COOKIE)["value"]
        assert new != old
        assert g.get("/demo/", headers={"Cookie": f"{COOKIE}={old}"}).status_code == 302, "the passkey sign-in is revoked"
        assert g.get("/demo/", headers={"Cookie": f"{COOKIE}={new}"}).status_code == 200
        assert session_claims(g, d)["sub"] == uid
        full_shot(d, output_dir, "3-removed")

        # The authenticator still holds the credential: the server no longer knows it.
        sign_out(d)
        d.get(g.site + "/__/auth/passkey?hl=de")
        passkey_sign_in(d)
        error = wait_for(d, By.ID, "form-error")
        assert "für kein Konto registriert" in error.text, error.text
        assert d.get_cookie(COOKIE) is None
        shot(d, output_dir, "4-removed-passkey-refused-de")
    finally:
        d.quit()


def es256_credential(rp_id="localhost", user_handle=b"nobody"):
    """A resident credential of a fresh P-256 key, as WebDriver's add_credential takes it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    key = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return Credential.create_resident_credential(secrets.token_bytes(16), rp_id, user_handle, pkcs8, 0)


@pytest.mark.parametrize("hl", ["en", "fr"])
def test_a_passkey_the_server_does_not_know_is_refused(gh, output_dir, hl):
    """A second authenticator whose credential was never registered here: refused in words, no session."""
    g = gh
    d = browser(authenticator=False)
    try:
        add_authenticator(d)
        d.add_credential(es256_credential())
        d.get(g.site + f"/__/auth/passkey?hl={hl}")
        passkey_sign_in(d, output_dir, f"1-passkey-page-{hl}")
        error = wait_for(d, By.ID, "form-error")
        expected = {"en": "This passkey is not registered for an account here.",
                    "fr": "Cette clé d’accès n’est enregistrée pour aucun compte ici."}[hl]
        assert error.text.startswith(expected), error.text
        assert d.current_url.startswith(g.site + "/__/auth/passkey")
        assert d.get_cookie(COOKIE) is None
        # The page names the credential back for the browser's signal to its authenticator.
        form = d.find_element(By.ID, "passkey-form")
        assert form.get_attribute("data-unknown-credential") == posted(d, "/__/auth/passkey")["id"]
        assert form.get_attribute("data-rp-id") == "localhost"
        # The button works again (a new challenge each time).
        assert wait_visible(d, By.ID, "passkey-signin").is_enabled()
        shot(d, output_dir, f"2-unknown-passkey-{hl}")
    finally:
        d.quit()


def test_the_pages_in_french(gh, output_dir):
    """The whole journey in French: chooser, account page with its offer and passkeys, the passkey
    page; and the words of a cancelled ceremony (the authenticator refuses user verification)."""
    g = gh
    d = browser()
    try:
        email_sign_in(d, g, address("fr"), continue_url=g.site + "/__/auth/account?hl=fr", hl="fr")
        wait_visible(d, By.ID, "passkey-offer")
        assert d.find_element(By.ID, "passkeys-title").text == "Clés d’accès"
        full_shot(d, output_dir, "1-account-fr")
        add_passkey(d, "Ordinateur")
        assert d.find_element(By.ID, "passkey-status").text.startswith("Clé d’accès ajoutée.")
        assert "Pas encore utilisée" in passkey_items(d)[0].text
        full_shot(d, output_dir, "2-account-added-fr")
        sign_out(d)
        d.get(g.site + "/__/auth/signin?hl=fr")
        assert wait_for(d, By.ID, "choose-passkey").text.startswith("Se connecter avec une clé d’accès")
        shot(d, output_dir, "3-chooser-fr")
        d.get(g.site + "/__/auth/passkey?hl=fr")
        assert wait_for(d, By.ID, "passkey-title").text == "Se connecter avec une clé d’accès"
        shot(d, output_dir, "4-passkey-page-fr")
        # An authenticator that cannot verify its user: the ceremony fails in the browser, the
        # page says so in words, and nothing is posted.
        d.quit()
        d = browser(authenticator=False)
        d.add_virtual_authenticator(VirtualAuthenticatorOptions(
            protocol=VirtualAuthenticatorOptions.Protocol.CTAP2, transport=VirtualAuthenticatorOptions.Transport.INTERNAL,
            has_resident_key=True, has_user_verification=True, is_user_verified=False))
        d.add_credential(es256_credential())
        d.get(g.site + "/__/auth/passkey?hl=fr")
        passkey_sign_in(d)
        error = wait_visible(d, By.ID, "passkey-error")
        assert error.text.startswith("La demande de clé d’accès a été annulée"), error.text
        assert d.current_url == g.site + "/__/auth/passkey?hl=fr"
        assert not [e for e in json.loads(d.execute_script(f"return window.localStorage.getItem('{POSTS}') || '[]'"))
                    if e["action"].startswith("/__/auth/passkey")]
        shot(d, output_dir, "5-cancelled-fr")
    finally:
        d.quit()


def test_a_passkey_skips_the_second_factor_by_default(gh, output_dir):
    """A TOTP user adds a passkey (after a sign-in that passed the app's code); the passkey then
    signs in without the code (the authenticator verified the user). That session stands for the
    second step: the account page offers to add another passkey, with no sign-in again."""
    g = gh
    user = totp_user(g)
    d = browser()
    try:
        email_sign_in_with_totp(d, g, user, g.site + "/__/auth/account", user["totp"].now())
        assert session_claims(g, d)["firebase"]["sign_in_second_factor"] == "totp"
        add_passkey(d, "Key")
        sign_out(d)
        d.get(g.site + "/__/auth/passkey")
        passkey_sign_in(d)
        wait_url(d, g.site + "/__/auth/account")
        c = session_claims(g, d)
        assert c["firebase"]["sign_in_provider"] == "passkey" and "sign_in_second_factor" not in c["firebase"]
        wait_for(d, By.ID, "passkey-add")
        assert not d.find_elements(By.ID, "passkey-blocked")
        full_shot(d, output_dir, "1-passkey-session-of-a-totp-user")
    finally:
        d.quit()


def test_a_project_that_asks_for_the_second_factor_after_a_passkey(other_gatehouse, output_dir):
    """skip_second_factor false: a TOTP user's passkey sign-in goes on to /__/auth/mfa (the
    pending credential in its cookie, never in a URL) and ends with both factors."""
    g = other_gatehouse(skip_second_factor=False)
    user = totp_user(g)
    target = g.site + "/__/auth/health?from=passkey-mfa"
    d = browser()
    try:
        # The passkey's enrolment needs a sign-in that passed the second factor.
        email_sign_in_with_totp(d, g, user, g.site + "/__/auth/account", user["totp"].now())
        add_passkey(d, "Key")
        sign_out(d)
        d.get(g.site + "/__/auth/passkey?continueUrl=" + quote(target, safe=""))
        passkey_sign_in(d)
        code = wait_for(d, By.ID, "totp-code")
        assert d.current_url.startswith(g.site + "/__/auth/mfa"), d.current_url
        assert d.get_cookie(COOKIE) is None and d.get_cookie(MFA_COOKIE)["httpOnly"]
        shot(d, output_dir, "1-second-factor-after-passkey")
        code.send_keys(user["totp"].at(time.time() + 30))
        d.find_element(By.ID, "verify").click()
        wait_url(d, target)
        c = session_claims(g, d)
        assert c["sub"] == user["localId"] and c["firebase"]["sign_in_provider"] == "passkey"
        assert c["firebase"]["sign_in_second_factor"] == "totp"
    finally:
        d.quit()


def email_sign_in_with_totp(d, g, user, target, code):
    link = sign_in_link(g, user["email"], target)
    d.get(link)
    wait_for(d, By.ID, "email").send_keys(user["email"])
    d.find_element(By.ID, "confirm").click()
    wait_for(d, By.ID, "totp-code").send_keys(code)
    d.find_element(By.ID, "verify").click()
    wait_url(d, target)


# --- without a browser ---------------------------------------------------------------------------------

def csrf_pair(g, path):
    """The page at `path`: its CSRF cookie and its HTML."""
    r = requests.get(g.site + path, timeout=10)
    assert r.status_code == 200, r.text
    cookie = re.search(r"__Host-gh_csrf=([^;]+)", r.headers["Set-Cookie"]).group(1)
    return cookie, r.text


def test_the_options_endpoint(gh):
    g = gh
    cookie, html = csrf_pair(g, "/__/auth/passkey")
    token = re.search(r'data-options-csrf="([^"]+)"', html).group(1)
    headers = {"Cookie": f"__Host-gh_csrf={cookie}", "Origin": g.site}
    r = requests.post(g.site + "/__/auth/passkey/options", data={"csrf": token}, headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == "no-store"
    options = r.json()["publicKey"]
    assert options["rpId"] == "localhost" and options["userVerification"] == "required"
    assert len(base64.b64decode(options["challenge"])) == 32
    # Each call is a new challenge.
    again = requests.post(g.site + "/__/auth/passkey/options", data={"csrf": token}, headers=headers, timeout=10).json()
    assert again["publicKey"]["challenge"] != options["challenge"]
    # Without the token, or with the sign-in form's, or from another origin: refused.
    assert requests.post(g.site + "/__/auth/passkey/options", data={}, headers=headers, timeout=10).status_code == 403
    sign_in_token = re.search(r'name="csrf" value="([^"]+)"', html).group(1)
    assert requests.post(g.site + "/__/auth/passkey/options", data={"csrf": sign_in_token}, headers=headers,
                         timeout=10).status_code == 403
    assert requests.post(g.site + "/__/auth/passkey/options", data={"csrf": token},
                         headers=dict(headers, Origin="http://evil.example"), timeout=10).status_code == 403
    # The account page's enrolment checks its own token first.
    r = requests.post(g.site + "/__/auth/account/passkey", data={"csrf": "x"}, headers={"Cookie": f"__Host-gh_csrf={cookie}"},
                      timeout=10)
    assert r.status_code == 403


def test_an_empty_assertion_is_refused_in_words(gh):
    g = gh
    cookie, html = csrf_pair(g, "/__/auth/passkey?hl=pt")
    token = re.search(r'name="csrf" value="([^"]+)"', html).group(1)
    r = requests.post(g.site + "/__/auth/passkey?hl=pt", data={"csrf": token, "id": "AAAA", "clientDataJSON": "e30"},
                      headers={"Cookie": f"__Host-gh_csrf={cookie}", "Origin": g.site}, timeout=10, allow_redirects=False)
    assert r.status_code == 400
    assert 'id="form-error">Não foi possível verificar esta chave de acesso.' in r.text
    assert COOKIE not in r.headers.get("Set-Cookie", "")


def test_a_project_without_passkeys(other_gatehouse):
    """Nothing of passkeys is offered: the page says they cannot be used (403), the chooser and
    the email page are as before, the account page has no passkeys section."""
    g = other_gatehouse(enabled=False)
    r = requests.get(g.site + "/__/auth/passkey", timeout=10)
    assert r.status_code == 403 and 'id="passkey-unavailable"' in r.text and 'id="passkey-form"' not in r.text
    r = requests.get(g.site + "/__/auth/signin", timeout=10)
    assert 'id="choose-passkey"' not in r.text and 'id="choose-email"' in r.text
    r = requests.get(g.site + "/__/auth/email", timeout=10)
    assert 'autocomplete="email"' in r.text and "passkey.js" not in r.text and 'id="passkey-form"' not in r.text
    user = email_user(g, "no-passkeys")
    r = g.post(f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}:createSessionCookie",
               json={"idToken": user["idToken"], "validDuration": 3600}, headers={"Authorization": "Bearer owner"})
    assert r.status_code == 200, r.text
    r = requests.get(g.site + "/__/auth/account", headers={"Cookie": f"{COOKIE}={r.json()['sessionCookie']}"}, timeout=10)
    assert r.status_code == 200 and 'id="account-uid"' in r.text
    assert 'id="passkeys"' not in r.text and "passkey.js" not in r.text and 'id="passkey-offer"' not in r.text
