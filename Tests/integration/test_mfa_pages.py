"""The phone second factor's hosted pages in headless Chromium: an email link for a user with a
factor goes on to /__/auth/mfa and ends signed in with the second factor; the account page
enrols and removes a phone; nginx's step-up (/demo/mfa/, protect-mfa.conf) sends a session
without a second factor to enrolment or to the second-factor page and back. Screenshots of every
step go to test-output/test_mfa_pages/<test>/."""
import time
import urllib.parse
import uuid
from urllib.parse import quote

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from conftest import chromium_driver
from email_support import jwks_verify
from session_support import COOKIE, claims

MFA_COOKIE = "__Host-gh_mfa"


def addr(tag):
    return f"{tag}-{uuid.uuid4().hex[:8]}@example.com"


def number():
    """A fresh French mobile number (dev mode texts any number, to the dev outbox)."""
    return "+3361" + str(uuid.uuid4().int % 10_000_000).zfill(7)


def shot(d, output_dir, name):
    d.save_screenshot(str(output_dir / f"{name}.png"))


def wait_for(d, by, what, timeout=10):
    return WebDriverWait(d, timeout).until(EC.presence_of_element_located((by, what)))


def user_with_factor(g, address, phone, name="Work phone"):
    """A verified email account with one phone factor, made through the admin API."""
    r = g.admin("/accounts", {"email": address, "emailVerified": True})
    assert r.status_code == 200, r.text
    uid = r.json()["localId"]
    r = g.admin("/accounts:update", {"localId": uid, "mfa": {"enrollments": [{"phoneInfo": phone, "displayName": name}]}})
    assert r.status_code == 200, r.text
    return uid


def sign_in_link(g, address, continue_url):
    r = g.admin("/accounts:sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": address, "returnOobLink": True,
                                          "continueUrl": continue_url})
    assert r.status_code == 200, r.text
    return r.json()["oobLink"]


def code_for(g, session_info):
    for _ in range(50):
        r = g.get("/emulator/v1/projects/demo-gatehouse/verificationCodes")
        for c in r.json()["verificationCodes"]:
            if c["sessionInfo"] == session_info:
                return c["code"]
        time.sleep(0.05)
    raise AssertionError("no code for the session")


def confirm_link(d, g, link, address, output_dir, prefix):
    """Opens an email link in a browser that did not ask for it: the address is typed."""
    d.get(link)
    field = wait_for(d, By.ID, "email")
    field.send_keys(address)
    shot(d, output_dir, f"{prefix}-confirm-link")
    d.find_element(By.ID, "confirm").click()


def pass_second_factor(d, g, output_dir, prefix, wrong_first=False):
    """On /__/auth/mfa: send the code, (optionally type a wrong one), type the right one."""
    send = wait_for(d, By.ID, "send")
    assert "/__/auth/mfa" in d.current_url
    lead = d.find_element(By.ID, "mfa-lead").text
    assert "*" in lead, lead
    shot(d, output_dir, f"{prefix}-second-factor")
    send.click()
    code_field = wait_for(d, By.ID, "code")
    assert code_field.get_attribute("autocomplete") == "one-time-code"
    assert code_field.get_attribute("inputmode") == "numeric"
    session_info = d.find_element(By.NAME, "sessionInfo").get_attribute("value")
    shot(d, output_dir, f"{prefix}-code")
    code = code_for(g, session_info)
    if wrong_first:
        wrong = "000000" if code != "000000" else "111111"
        code_field.send_keys(wrong)
        d.find_element(By.ID, "verify").click()
        error = wait_for(d, By.ID, "form-error")
        assert "4" in error.text, error.text
        shot(d, output_dir, f"{prefix}-wrong-code")
        code_field = d.find_element(By.ID, "code")
    code_field.send_keys(code)
    d.find_element(By.ID, "verify").click()


def session_claims(g, d):
    cookie = d.get_cookie(COOKIE)
    assert cookie, d.get_cookies()
    return jwks_verify(g, cookie["value"], issuer="https://session.firebase.google.com/demo-gatehouse")


def test_email_link_then_second_factor_signs_in(gatehouse, output_dir):
    g = gatehouse
    a = addr("mfa-link")
    uid = user_with_factor(g, a, number())
    target = g.url("/__/auth/health?from=mfa")
    link = sign_in_link(g, a, target)
    d = chromium_driver()
    try:
        confirm_link(d, g, link, a, output_dir, "1")
        wait_for(d, By.ID, "send")
        assert d.current_url == g.url("/__/auth/mfa?hl=en"), "the pending credential is never in a URL"
        assert d.get_cookie(COOKIE) is None, "no session before the second factor"
        pending = d.get_cookie(MFA_COOKIE)
        assert pending and pending["httpOnly"] and pending["secure"] and pending["sameSite"] == "Strict"
        assert pending["path"] == "/"
        pass_second_factor(d, g, output_dir, "2", wrong_first=True)
        WebDriverWait(d, 10).until(lambda d: d.current_url.startswith(target))
        c = session_claims(g, d)
        assert c["sub"] == uid
        assert c["firebase"]["sign_in_provider"] == "password"
        assert c["firebase"]["sign_in_second_factor"] == "phone"
        assert c["firebase"]["second_factor_identifier"]
        assert d.get_cookie(MFA_COOKIE) is None, "the pending cookie is cleared"
        d.get(g.url("/__/auth/account"))
        wait_for(d, By.ID, "mfa-factors")
        shot(d, output_dir, "3-account")
        # The same link again: used.
        d.get(link)
        assert wait_for(d, By.ID, "problem").get_attribute("data-problem") == "used"
    finally:
        d.quit()


def test_choosing_among_several_phones(gatehouse, output_dir):
    g = gatehouse
    a = addr("mfa-two")
    work, home = number(), number()
    r = g.admin("/accounts", {"email": a, "emailVerified": True})
    uid = r.json()["localId"]
    r = g.admin("/accounts:update", {"localId": uid, "mfa": {"enrollments": [
        {"phoneInfo": work, "displayName": "Travail"}, {"phoneInfo": home, "displayName": "Maison"}]}})
    assert r.status_code == 200, r.text
    target = g.url("/__/auth/health?from=two")
    d = chromium_driver()
    try:
        confirm_link(d, g, sign_in_link(g, a, target) + "&hl=fr", a, output_dir, "1")
        choices = wait_for(d, By.CSS_SELECTOR, "fieldset.factor-list")
        assert d.find_element(By.TAG_NAME, "h1").text == "Confirmez qu’il s’agit bien de vous"
        labels = [" ".join(e.text.split()) for e in choices.find_elements(By.CSS_SELECTOR, "label.factor")]
        assert labels == [f"Travail +*******{work[-4:]}", f"Maison +*******{home[-4:]}"], labels
        assert work[:-4] not in d.page_source and home[:-4] not in d.page_source
        shot(d, output_dir, "2-choose-fr")
        d.find_element(By.ID, "factor-1").click()
        d.find_element(By.ID, "send").click()
        wait_for(d, By.ID, "code")
        assert home[-4:] in d.find_element(By.ID, "mfa-lead").text
        shot(d, output_dir, "3-code-fr")
        code = code_for(g, d.find_element(By.NAME, "sessionInfo").get_attribute("value"))
        d.find_element(By.ID, "code").send_keys(code)
        d.find_element(By.ID, "verify").click()
        WebDriverWait(d, 10).until(lambda d: d.current_url.startswith(target))
        d.get(g.url("/__/auth/account?hl=fr"))
        assert home[-4:] in wait_for(d, By.ID, "account-second-factor").text
        shot(d, output_dir, "4-account-fr")
    finally:
        d.quit()


def test_expired_second_factor_page(gatehouse, output_dir):
    d = chromium_driver()
    try:
        d.get(gatehouse.url("/__/auth/health"))
        d.execute_cdp_cmd("Network.enable", {})
        d.execute_cdp_cmd("Network.setCookie", {"name": MFA_COOKIE, "value": "ghmfa1.forged|", "url": gatehouse.url("/"),
                                                "path": "/", "secure": True, "httpOnly": True, "sameSite": "Strict"})
        d.get(gatehouse.url("/__/auth/mfa?hl=de"))
        wait_for(d, By.ID, "mfa-expired")
        assert "abgelaufen" in d.find_element(By.TAG_NAME, "h1").text
        assert d.find_element(By.ID, "sign-in-again").get_attribute("href").startswith(gatehouse.url("/__/auth/signin"))
        shot(d, output_dir, "expired-de")
    finally:
        d.quit()


def email_sign_in(d, g, address, target, output_dir, prefix):
    """Signs in with an email link (no factor yet) and lands on `target`."""
    confirm_link(d, g, sign_in_link(g, address, target), address, output_dir, prefix)
    WebDriverWait(d, 10).until(lambda d: d.current_url.startswith(target))


def test_enrol_and_remove_a_phone_from_the_account_page(gatehouse, output_dir):
    g = gatehouse
    a = addr("enrol")
    phone = number()
    d = chromium_driver()
    try:
        email_sign_in(d, g, a, g.url("/__/auth/account"), output_dir, "1")
        wait_for(d, By.ID, "mfa-none")
        shot(d, output_dir, "2-account-no-factor")
        d.find_element(By.ID, "mfa-add").click()
        wait_for(d, By.ID, "phoneNumber").send_keys(phone)
        d.find_element(By.ID, "displayName").send_keys("My phone")
        shot(d, output_dir, "3-enrol-number")
        d.find_element(By.ID, "send").click()
        code_field = wait_for(d, By.ID, "code")
        assert code_field.get_attribute("autocomplete") == "one-time-code"
        session_info = d.find_element(By.NAME, "sessionInfo").get_attribute("value")
        shot(d, output_dir, "4-enrol-code")
        code_field.send_keys(code_for(g, session_info))
        d.find_element(By.ID, "verify").click()
        wait_for(d, By.ID, "mfa-status")
        assert "enrolled=1" in d.current_url
        items = d.find_elements(By.CSS_SELECTOR, "#mfa-factors li")
        assert len(items) == 1 and "My phone" in items[0].text and phone[-4:] in items[0].text
        assert phone[:-4] not in items[0].text, "numbers are obfuscated"
        c = session_claims(g, d)
        assert c["firebase"]["sign_in_second_factor"] == "phone"
        assert c["firebase"]["second_factor_identifier"] == items[0].get_attribute("data-enrollment-id")
        shot(d, output_dir, "5-enrolled")
        old = d.get_cookie(COOKIE)["value"]
        # Remove it: earlier sessions are revoked, this browser stays signed in.
        items[0].find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait_for(d, By.ID, "mfa-none")
        assert "removed=1" in d.current_url
        new = d.get_cookie(COOKIE)["value"]
        assert new != old
        assert "sign_in_second_factor" not in claims(new)["firebase"]
        r = g.get("/demo/", headers={"Cookie": f"{COOKIE}={old}"})
        assert r.status_code == 302, "the old session is revoked"
        r = g.get("/demo/", headers={"Cookie": f"{COOKIE}={new}"})
        assert r.status_code == 200
        shot(d, output_dir, "6-removed")
    finally:
        d.quit()


def test_enrolment_needs_an_email_link_sign_in(gatehouse, output_dir):
    g = gatehouse
    s = g.api("signUp", {"returnSecureToken": True}).json()
    r = g.post("/identitytoolkit.googleapis.com/v1/projects/demo-gatehouse:createSessionCookie",
               json={"idToken": s["idToken"], "validDuration": 3600}, headers={"Authorization": "Bearer owner"})
    d = chromium_driver()
    try:
        d.get(g.url("/__/auth/health"))
        d.execute_cdp_cmd("Network.enable", {})
        d.execute_cdp_cmd("Network.setCookie", {"name": COOKIE, "value": r.json()["sessionCookie"], "url": g.url("/"),
                                                "path": "/", "secure": True, "httpOnly": True, "sameSite": "Lax"})
        d.get(g.url("/__/auth/account?enrol=1&hl=fr"))
        blocked = wait_for(d, By.ID, "enrol-blocked")
        assert "lien par e-mail" in blocked.text  # a guest session cannot enrol
        assert not d.find_elements(By.ID, "phoneNumber")
        shot(d, output_dir, "blocked-fr")
    finally:
        d.quit()


def test_step_up_at_nginx(gatehouse, output_dir):
    g = gatehouse
    a = addr("stepup")
    phone = number()
    target = g.url("/demo/mfa/page?x=1")
    d = chromium_driver()
    try:
        # Not signed in: sign in first (the usual 401 → sign-in page).
        d.get(target)
        WebDriverWait(d, 10).until(lambda d: "/__/auth/signin?continueUrl=" in d.current_url)
        email_sign_in(d, g, a, g.url("/demo/"), output_dir, "1")
        # Signed in without a factor: on to enrolment, then back to the protected page.
        d.get(target)
        wait_for(d, By.ID, "phoneNumber")
        assert d.current_url.startswith(g.url("/__/auth/account?enrol=1&continueUrl="))
        shot(d, output_dir, "2-step-up-enrol")
        d.find_element(By.ID, "phoneNumber").send_keys(phone)
        d.find_element(By.ID, "send").click()
        code_field = wait_for(d, By.ID, "code")
        code_field.send_keys(code_for(g, d.find_element(By.NAME, "sessionInfo").get_attribute("value")))
        shot(d, output_dir, "3-step-up-enrol-code")
        d.find_element(By.ID, "verify").click()
        WebDriverWait(d, 10).until(lambda d: d.current_url == target)
        assert "you are signed in" in d.find_element(By.TAG_NAME, "body").text
        shot(d, output_dir, "4-protected-after-enrol")

        # Another user, signed in before a factor was added (by an administrator): nginx sends
        # the session to the second-factor page, which starts from the session's user.
        d.delete_all_cookies()
        b = addr("stepup2")
        email_sign_in(d, g, b, g.url("/demo/"), output_dir, "5")
        user = g.admin("/accounts:lookup", {"email": [b]}).json()["users"][0]
        r = g.admin("/accounts:update", {"localId": user["localId"],
                                         "mfa": {"enrollments": [{"phoneInfo": number(), "displayName": "Desk"}]}})
        assert r.status_code == 200, r.text
        d.get(g.url("/demo/"))
        assert "you are signed in" in d.find_element(By.TAG_NAME, "body").text, "plain protection needs no second factor"
        d.get(target)
        wait_for(d, By.ID, "send")
        assert d.current_url == g.url("/__/auth/mfa?continueUrl=" + quote(target, safe=""))
        pass_second_factor(d, g, output_dir, "6")
        WebDriverWait(d, 10).until(lambda d: d.current_url == target)
        assert "you are signed in" in d.find_element(By.TAG_NAME, "body").text
        assert session_claims(g, d)["firebase"]["sign_in_second_factor"] == "phone"
        shot(d, output_dir, "7-protected-after-second-factor")
    finally:
        d.quit()


def test_step_up_answers_of_verify(gatehouse):
    """Without a browser: what nginx answers for /demo/mfa/ with and without a session."""
    r = gatehouse.get("/demo/mfa/")
    assert r.status_code == 302
    loc = urllib.parse.urlsplit(r.headers["Location"])
    assert loc.path == "/__/auth/signin"
    # The step-up location is internal, like the verify location.
    assert gatehouse.get("/__/auth/verify%3Frequire=mfa").status_code == 404
    assert gatehouse.get("/__/auth/verify?require=mfa").status_code == 404
