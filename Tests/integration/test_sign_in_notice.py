"""The new sign-in notice through the real nginx: with `new_sign_in_notice` on, a phone sign-in
from a device the account has not used before mails its verified address (the first device, a
known one and an email-link sign-in do not); the link's GET only shows a confirmation (scanners
fetch links), its POST (CSRF) signs out everywhere; a replay is refused; the daily budget holds."""
import html
import re
import time
import uuid
from urllib.parse import urlparse

import pytest

from conftest import chromium_driver
from email_support import config
from mfa_support import email_link_code
from phone_helpers import outbox
from session_support import COOKIE, get_with_cookie, refresh
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
CHROME_MAC = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
SAFARI_IOS = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
EDGE = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0"
ANDROID_APP = "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A.240605.024)"


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    from conftest import Gatehouse
    g = Gatehouse(tmp_path_factory.mktemp("gh"), config=config(new_sign_in_notice={"enabled": True, "per_account_per_day": 2})).start()
    yield g
    g.stop()


def user(g, verified=True):
    """An account with a phone and an email address (verified or not)."""
    email = f"notice-{uuid.uuid4().hex[:8]}@example.com"
    phone = "+3361" + str(uuid.uuid4().int % 10_000_000).zfill(7)
    r = g.admin("/accounts", {"email": email, "emailVerified": verified, "phoneNumber": phone})
    assert r.status_code == 200, r.text
    return email, phone


def phone_sign_in(g, phone, user_agent):
    r = g.api("sendVerificationCode", {"phoneNumber": phone})
    assert r.status_code == 200, r.text
    session = r.json()["sessionInfo"]
    code = None
    for _ in range(50):
        codes = g.get("/emulator/v1/projects/demo-gatehouse/verificationCodes").json()["verificationCodes"]
        code = next((c["code"] for c in codes if c["sessionInfo"] == session), None)
        if code:
            break
        time.sleep(0.05)
    r = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code}, headers={"User-Agent": user_agent})
    assert r.status_code == 200, r.text
    return r.json()


def notices(g, email):
    return [r for r in outbox(g) if r["recipient"] == email and "sign_in_notice" in (r["metadata"] or "")]


def link_in(row):
    m = re.search(r"(https?://\S+/__/auth/signout-everywhere\?token=[^\s&]+&hl=\w+)", row["body"])
    assert m, row["body"]
    u = urlparse(m.group(1))
    return u.path + "?" + u.query


def test_only_a_new_device_is_mailed(gh):
    email, phone = user(gh)
    phone_sign_in(gh, phone, FIREFOX)             # the account's first device
    phone_sign_in(gh, phone, FIREFOX)             # known
    assert notices(gh, email) == []
    phone_sign_in(gh, phone, CHROME_MAC)          # new
    rows = notices(gh, email)
    assert len(rows) == 1, rows
    body = rows[0]["body"]
    assert "Chrome on macOS" in body and "127.0.0.0/24" in body, body
    assert "New sign-in to demo-gatehouse" in rows[0]["subject"]
    assert "/__/auth/signout-everywhere?token=" in (rows[0]["html_body"] or "")
    phone_sign_in(gh, phone, CHROME_MAC)          # known now
    assert len(notices(gh, email)) == 1
    # An email-link sign-in from a new device: its own link email was the message.
    code = email_link_code(gh, email)
    r = gh.api("signInWithEmailLink", {"email": email, "oobCode": code}, headers={"User-Agent": SAFARI_IOS})
    assert r.status_code == 200, r.text
    assert len(notices(gh, email)) == 1


def test_never_to_an_unverified_address(gh):
    email, phone = user(gh, verified=False)
    phone_sign_in(gh, phone, FIREFOX)
    phone_sign_in(gh, phone, CHROME_MAC)
    assert notices(gh, email) == []


def test_the_budget_stops_the_mail_never_the_sign_in(gh):
    email, phone = user(gh)
    phone_sign_in(gh, phone, FIREFOX)
    for ua in (CHROME_MAC, SAFARI_IOS, EDGE, ANDROID_APP):
        assert "refreshToken" in phone_sign_in(gh, phone, ua)
    assert len(notices(gh, email)) == 2


def test_the_link_get_does_nothing_the_post_signs_out_everywhere_once(gh, output_dir):
    email, phone = user(gh)
    first = phone_sign_in(gh, phone, FIREFOX)
    stranger = phone_sign_in(gh, phone, CHROME_MAC)
    path = link_in(notices(gh, email)[0])
    # A scanner fetching the link (twice) changes nothing.
    for _ in range(2):
        r = gh.get(path)
        assert r.status_code == 200, r.text
        assert r.headers["Cache-Control"] == "no-store" and r.headers["Referrer-Policy"] == "no-referrer"
    assert refresh(gh, stranger["refreshToken"]).status_code == 200
    page = gh.get(path)
    fields = {k: html.unescape(v) for k, v in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text)}
    csrf_cookie = re.search(r"__Host-gh_csrf=([^;]+)", page.headers["Set-Cookie"]).group(1)
    # Without the CSRF token, or from another origin: refused.
    r = gh.post("/__/auth/signout-everywhere", data={"token": fields["token"]},
                headers={"Cookie": f"__Host-gh_csrf={csrf_cookie}", "Origin": gh.base})
    assert r.status_code == 403
    r = gh.post("/__/auth/signout-everywhere", data=fields, headers={"Cookie": f"__Host-gh_csrf={csrf_cookie}", "Origin": "https://evil.example"})
    assert r.status_code == 403
    assert refresh(gh, stranger["refreshToken"]).status_code == 200
    time.sleep(1.1)  # validSince has whole seconds
    r = gh.post("/__/auth/signout-everywhere", data=fields, headers={"Cookie": f"__Host-gh_csrf={csrf_cookie}", "Origin": gh.base})
    assert r.status_code == 200, r.text
    assert 'id="notice-done"' in r.text
    for t in (first, stranger):
        r2 = refresh(gh, t["refreshToken"])
        assert r2.status_code == 400 and "TOKEN_EXPIRED" in r2.text, r2.text
    assert "TOKEN_EXPIRED" in gh.api("lookup", {"idToken": stranger["idToken"]}).text
    # Replayed (the same form posted twice, or the link opened again): refused, nothing happens.
    again = phone_sign_in(gh, phone, FIREFOX)
    r = gh.post("/__/auth/signout-everywhere", data=fields, headers={"Cookie": f"__Host-gh_csrf={csrf_cookie}", "Origin": gh.base})
    assert r.status_code == 400 and 'id="notice-invalid"' in r.text
    assert gh.get(path).status_code == 400
    assert refresh(gh, again["refreshToken"]).status_code == 200
    # A forged token.
    assert gh.get("/__/auth/signout-everywhere?token=gsn1.ZGVtbw.AAAA").status_code == 400
    # The pages in Chromium.
    fresh = phone_sign_in(gh, phone, EDGE)
    rows = notices(gh, email)
    path = link_in(rows[-1])
    d = chromium_driver()
    try:
        d.get(gh.url(path.replace("hl=en", "hl=fr")))
        assert d.find_element(By.ID, "signout-everywhere").is_displayed()
        d.save_screenshot(str(output_dir / "notice-confirm-fr.png"))
        d.find_element(By.ID, "signout-everywhere").click()
        # The click starts a navigation; the answer page is waited for, not assumed.
        WebDriverWait(d, 10).until(EC.presence_of_element_located((By.ID, "notice-done")))
        d.save_screenshot(str(output_dir / "notice-done-fr.png"))
        d.get(gh.url(path))
        d.find_element(By.ID, "notice-invalid")
        d.save_screenshot(str(output_dir / "notice-used-en.png"))
    finally:
        d.quit()
    assert "TOKEN_EXPIRED" in refresh(gh, fresh["refreshToken"]).text


def hosted_phone_sign_in(g, phone, user_agent):
    """The hosted phone page without script, as a browser with `user_agent`: the session cookie."""
    from test_phone_page import Browserless, hidden
    s = Browserless(g)
    ua = {"User-Agent": user_agent, "Origin": g.base}
    page = s.get("/__/auth/phone", headers=ua)
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "phoneNumber": phone}, headers=ua)
    assert r.status_code == 200, r.text
    session = hidden(r.text, "sessionInfo")
    codes = g.get("/emulator/v1/projects/demo-gatehouse/verificationCodes").json()["verificationCodes"]
    code = next(c["code"] for c in codes if c["sessionInfo"] == session)
    done = s.post("/__/auth/phone/verify", data={"csrf": hidden(r.text, "csrf", form="code-form"), "sessionInfo": session, "code": code},
                  headers=ua)
    assert done.status_code == 303, done.text
    return s.cookies[COOKIE]


def test_hosted_sign_ins_are_noticed_too(gh):
    email, phone = user(gh)
    first = hosted_phone_sign_in(gh, phone, FIREFOX)     # the first device
    hosted_phone_sign_in(gh, phone, FIREFOX)             # known
    assert notices(gh, email) == []
    hosted_phone_sign_in(gh, phone, SAFARI_IOS)          # new
    rows = notices(gh, email)
    assert len(rows) == 1 and "Safari on iOS" in rows[0]["body"], rows
    # The same device through the API is known.
    phone_sign_in(gh, phone, SAFARI_IOS)
    assert len(notices(gh, email)) == 1
    assert get_with_cookie(gh, "/demo/", first).status_code == 200
