"""The authenticator app (TOTP) on the hosted pages in headless Chromium, 420 px wide: a user
signed in by email link adds an app on the account page (codes from pyotp, the QR code read back
from the screenshot with zbarimg and compared with the otpauth URI the page shows as text), signs
out, signs in again and passes the app's code on the second-factor page, and then nginx's step-up
(/demo/mfa/, protect-mfa.conf) lets the session through. Screenshots of every step go to
test-output/test_totp_pages/<test>/."""
import shutil
import subprocess
import time
import urllib.parse
import uuid

import pyotp
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from conftest import chromium_driver
from email_support import jwks_verify
from session_support import COOKIE

MFA_COOKIE = "__Host-gh_mfa"

pytestmark = pytest.mark.skipif(shutil.which("zbarimg") is None, reason="zbarimg (Debian package zbar-tools) is not installed")


def shot(d, output_dir, name):
    path = output_dir / f"{name}.png"
    d.save_screenshot(str(path))
    return path


def wait_for(d, by, what, timeout=10):
    return WebDriverWait(d, timeout).until(EC.presence_of_element_located((by, what)))


def sign_in_link(g, address, continue_url):
    r = g.admin("/accounts:sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": address, "returnOobLink": True,
                                          "continueUrl": continue_url})
    assert r.status_code == 200, r.text
    return r.json()["oobLink"]


def confirm_link(d, link, address, output_dir, name):
    """Opens an email link in a browser that did not ask for it: the address is typed."""
    d.get(link)
    wait_for(d, By.ID, "email").send_keys(address)
    shot(d, output_dir, name)
    d.find_element(By.ID, "confirm").click()


def session_claims(g, d):
    cookie = d.get_cookie(COOKIE)
    assert cookie, d.get_cookies()
    return jwks_verify(g, cookie["value"], issuer="https://session.firebase.google.com/demo-gatehouse")


def decode_qr(png):
    """Every QR code zbarimg finds in the image, as text."""
    out = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(png)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, f"zbarimg found no QR code in {png}: {out.stderr}"
    return out.stdout.splitlines()


def phone_browser():
    """Chromium with a 420 CSS px wide viewport: headless Chromium keeps its window at least 500 px
    wide whatever --window-size says, so the phone's width is emulated."""
    d = chromium_driver()
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 420, "height": 900, "deviceScaleFactor": 1, "mobile": True})
    return d


def scroll_to(d, element):
    d.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)


def test_enrol_an_app_then_sign_in_with_it(gatehouse, output_dir):
    g = gatehouse
    address = f"totp-{uuid.uuid4().hex[:8]}@example.com"
    protected = g.url("/demo/mfa/page?x=1")
    d = phone_browser()
    try:
        # First factor: an email link, landing on the account page.
        confirm_link(d, sign_in_link(g, address, g.url("/__/auth/account")), address, output_dir, "1-confirm-link")
        WebDriverWait(d, 10).until(lambda d: d.current_url.startswith(g.url("/__/auth/account")))
        assert d.execute_script("return window.innerWidth") == 420
        wait_for(d, By.ID, "mfa-add-totp")
        assert d.find_element(By.ID, "mfa-add").text == "Add a phone"
        shot(d, output_dir, "2-account-no-factor")

        # The French page's layout (a fresh secret each time the page is shown; this one is dropped).
        d.get(g.url("/__/auth/account?enrol=totp&hl=fr"))
        assert wait_for(d, By.ID, "enrol-title").text == "Ajouter une application d’authentification"
        shot(d, output_dir, "3-enrol-fr")

        d.get(g.url("/__/auth/account"))
        wait_for(d, By.ID, "mfa-add-totp").click()
        qr = wait_for(d, By.ID, "qr-code")
        assert "/__/auth/account?enrol=totp" in d.current_url
        uri = d.find_element(By.ID, "totp-uri").get_attribute("value")
        shown = d.find_element(By.ID, "totp-secret").text
        key = shown.replace(" ", "")
        assert [len(group) for group in shown.split(" ")] == [4] * 8, shown
        parsed = pyotp.parse_uri(uri)
        assert parsed.secret == key
        assert uri.startswith("otpauth://totp/") and f"secret={key}&" in uri
        assert urllib.parse.unquote(uri.split("?")[0].split(":", 2)[2]) == address

        # The QR code as the browser draws it: whole modules, read back by zbar from the page's
        # screenshot and from the QR code cut out of it, both exactly the URI shown as text.
        box = d.execute_script("const r = arguments[0].getBoundingClientRect(); "
                               "const v = arguments[0].viewBox.baseVal; return [r.width, r.height, v.width];", qr)
        module = min(box[0], box[1]) / box[2]
        assert module >= 2 and module == int(module), f"{module} px per module"
        page_png = shot(d, output_dir, "4-enrol-qr")
        assert decode_qr(page_png) == [uri]
        cut = output_dir / "4-enrol-qr-only.png"
        qr.screenshot(str(cut))
        assert decode_qr(cut) == [uri]

        name = d.find_element(By.ID, "displayName")
        scroll_to(d, name)
        name.send_keys("Pixel")
        # A wrong code first: said in words, and the key is not shown again.
        totp = pyotp.TOTP(key)
        good = totp.now()
        wrong = "000000" if good != "000000" else "111111"
        code_field = d.find_element(By.ID, "totp-code")
        code_field.send_keys(wrong)
        shot(d, output_dir, "5-enrol-code")
        d.find_element(By.ID, "verify").click()
        error = wait_for(d, By.ID, "form-error")
        assert error.text.startswith("That code is not right."), error.text
        assert key not in d.page_source and shown not in d.page_source and not d.find_elements(By.ID, "qr-code")
        shot(d, output_dir, "6-enrol-wrong-code")
        d.find_element(By.ID, "totp-code").send_keys(totp.now())
        d.find_element(By.ID, "verify").click()
        wait_for(d, By.ID, "mfa-status")
        assert "enrolled=totp" in d.current_url
        items = d.find_elements(By.CSS_SELECTOR, "#mfa-factors li")
        assert len(items) == 1 and "Pixel" in items[0].text and "Authenticator app" in items[0].text, items[0].text if items else ""
        assert key not in d.page_source and "otpauth" not in d.page_source, "the secret is never shown again"
        enrollment_id = items[0].get_attribute("data-enrollment-id")
        c = session_claims(g, d)
        assert c["firebase"]["sign_in_second_factor"] == "totp"
        assert c["firebase"]["second_factor_identifier"] == enrollment_id
        assert "Authenticator app (Pixel)" in d.find_element(By.ID, "account-second-factor").text
        shot(d, output_dir, "7-enrolled")
        # The step the enrolment's code was for cannot be used again: the next sign-in takes a
        # later one (the server accepts the next step too, so no need to wait for it).
        enrolled_at = time.time()

        # Sign out, then in again: the email link goes on to the app's code, nothing sent.
        d.find_element(By.ID, "sign-out").click()
        wait_for(d, By.ID, "account-status")
        assert d.get_cookie(COOKIE) is None
        target = g.url("/__/auth/health?from=totp")
        confirm_link(d, sign_in_link(g, address, target), address, output_dir, "8-confirm-link-again")
        code_field = wait_for(d, By.ID, "totp-code")
        assert d.current_url == g.url("/__/auth/mfa?hl=en"), "the pending credential is never in a URL"
        assert d.get_cookie(COOKIE) is None, "no session before the second factor"
        assert d.get_cookie(MFA_COOKIE)["httpOnly"]
        assert "Pixel" in d.find_element(By.ID, "mfa-lead").text
        assert code_field.get_attribute("autocomplete") == "one-time-code"
        assert code_field.get_attribute("inputmode") == "numeric"
        assert not d.find_elements(By.ID, "send") and not d.find_elements(By.NAME, "sessionInfo")
        shot(d, output_dir, "9-second-factor")
        code_field.send_keys(wrong)
        d.find_element(By.ID, "verify").click()
        error = wait_for(d, By.ID, "form-error")
        assert error.text.startswith("That code is not right."), error.text
        shot(d, output_dir, "10-second-factor-wrong-code")
        d.find_element(By.ID, "totp-code").send_keys(totp.at(enrolled_at + 30))
        d.find_element(By.ID, "verify").click()
        WebDriverWait(d, 10).until(lambda d: d.current_url.startswith(target))
        c = session_claims(g, d)
        assert c["firebase"]["sign_in_provider"] == "password"
        assert c["firebase"]["sign_in_second_factor"] == "totp"
        assert c["firebase"]["second_factor_identifier"] == enrollment_id
        assert d.get_cookie(MFA_COOKIE) is None, "the pending cookie is cleared"

        # nginx's step-up (protect-mfa.conf) lets the app's session through.
        d.get(protected)
        WebDriverWait(d, 10).until(lambda d: d.current_url == protected)
        assert "you are signed in" in d.find_element(By.TAG_NAME, "body").text
        shot(d, output_dir, "11-protected-after-app")
        r = g.get("/demo/mfa/page", headers={"Cookie": f"{COOKIE}={d.get_cookie(COOKIE)['value']}"}, allow_redirects=False)
        assert r.status_code == 200
    finally:
        d.quit()


def test_step_up_without_a_factor_offers_the_app(gatehouse, output_dir):
    """nginx's step-up sends a user without a factor to the phone's enrolment, which offers the
    app instead; enrolling it goes on to the protected page."""
    g = gatehouse
    address = f"totp-step-{uuid.uuid4().hex[:8]}@example.com"
    protected = g.url("/demo/mfa/page?y=2")
    d = phone_browser()
    try:
        confirm_link(d, sign_in_link(g, address, g.url("/demo/")), address, output_dir, "1-confirm-link")
        WebDriverWait(d, 10).until(lambda d: d.current_url.startswith(g.url("/demo/")))
        d.get(protected)
        wait_for(d, By.ID, "enrol-totp-instead").click()
        wait_for(d, By.ID, "qr-code")
        assert d.current_url.startswith(g.url("/__/auth/account?enrol=totp&continueUrl="))
        key = d.find_element(By.ID, "totp-secret").text.replace(" ", "")
        shot(d, output_dir, "2-step-up-enrol-app")
        field = d.find_element(By.ID, "totp-code")
        scroll_to(d, field)
        field.send_keys(pyotp.TOTP(key).now())
        d.find_element(By.ID, "verify").click()
        WebDriverWait(d, 10).until(lambda d: d.current_url == protected)
        assert "you are signed in" in d.find_element(By.TAG_NAME, "body").text
        assert session_claims(g, d)["firebase"]["sign_in_second_factor"] == "totp"
        shot(d, output_dir, "3-protected-after-enrol")
    finally:
        d.quit()
