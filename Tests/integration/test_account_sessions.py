"""The account page's "Where you're signed in" through the real nginx: sign-ins by the API (with a
User-Agent) and by the hosted pages are listed with their device, network, times and method;
each button revokes exactly what it names (the old cookie is refused by nginx's auth_request at
/demo/, a revoked family's refresh token by the token endpoint); a form without its CSRF token is
refused. Screenshots of the list (headless Chromium) go to test-output/test_account_sessions/."""
import html
import re
import time
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import chromium_driver
from mfa_support import email_link_code
from session_support import COOKIE, get_with_cookie, refresh

FIREFOX_WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
IOS_APP = "MyApp/3.1 CFNetwork/1494.0.7 Darwin/23.4.0"
CHROME_LINUX = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/126.0.0.0 Safari/537.36")


def addr(tag):
    return f"{tag}-{uuid.uuid4().hex[:8]}@example.com"


def api_sign_in(g, email, user_agent):
    """An email-link sign-in through the API, as an app with `user_agent` does it."""
    code = email_link_code(g, email)
    r = g.api("signInWithEmailLink", {"email": email, "oobCode": code}, headers={"User-Agent": user_agent})
    assert r.status_code == 200, r.text
    return r.json()


def hosted_sign_in(g, email, user_agent=CHROME_LINUX):
    """The hosted email-link page, as a browser: opens the link, confirms the address; the session cookie."""
    r = g.admin("/accounts:sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": True,
                                          "continueUrl": g.url("/__/auth/account")})
    assert r.status_code == 200, r.text
    link = r.json()["oobLink"]
    path = link[len(g.base):] if link.startswith(g.base) else link[link.index("/__/auth/"):]
    page = g.get(path, headers={"User-Agent": user_agent})
    assert page.status_code == 200, page.text
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    fields = {k: html.unescape(v) for k, v in fields.items()}
    csrf_cookie = re.search(r"__Host-gh_csrf=([^;]+)", page.headers["Set-Cookie"]).group(1)
    fields["email"] = email
    r = g.post("/__/auth/action", data=fields, headers={"User-Agent": user_agent, "Origin": g.base,
                                                         "Cookie": f"__Host-gh_csrf={csrf_cookie}"})
    assert r.status_code in (302, 303), r.text
    return re.search(rf"{COOKIE}=([^;]+)", r.headers["Set-Cookie"]).group(1)


class AccountPage:
    """The account page as a cookie holder sees it: the list, and its forms' CSRF."""

    def __init__(self, g, cookie, query=""):
        self.g, self.cookie = g, cookie
        r = get_with_cookie(g, "/__/auth/account?hl=en" + query, cookie)
        assert r.status_code == 200, r.text
        self.text = r.text
        m = re.search(r"__Host-gh_csrf=([^;]+)", r.headers.get("Set-Cookie", ""))
        self.csrf_cookie = m.group(1) if m else None
        section = re.search(r'<section[^>]*id="sessions".*?</section>', r.text, re.S)
        self.section = section.group(0) if section else ""
        self.entries = []
        for li in re.findall(r'<li class="gh-account-factor gh-account-session"(.*?)</li>', self.section, re.S):
            self.entries.append({
                "id": html.unescape(re.search(r'data-session-id="([^"]+)"', li).group(1)),
                "kind": re.search(r'data-kind="([^"]+)"', li).group(1),
                "device": html.unescape(re.search(r'gh-account-session-device">([^<]*)<', li).group(1)),
                "network": html.unescape(re.search(r'gh-account-session-network" dir="ltr">([^<]*)<', li).group(1)),
                "how": html.unescape(re.search(r'gh-account-session-how">([^<]*)<', li).group(1)),
                "times": re.findall(r'<time datetime="([^"]+)">', li),
                "current": 'id="session-current"' in li,
            })
        m = re.search(r'action="/__/auth/account/sessions/revoke-all[^"]*".*?name="csrf" value="([^"]+)"', self.section, re.S)
        self.csrf = html.unescape(m.group(1)) if m else None

    def post(self, action, data=None, csrf=True):
        body = dict(data or {})
        if csrf:
            body["csrf"] = self.csrf
        cookies = f"{COOKIE}={self.cookie}"
        if self.csrf_cookie:
            cookies += f"; __Host-gh_csrf={self.csrf_cookie}"
        return self.g.post(f"/__/auth/account/sessions/{action}", data=body,
                           headers={"Cookie": cookies, "Origin": self.g.base})


def protected(g, cookie, deadline=3.0):
    """What nginx's auth_request answers for /demo/ with `cookie`, once it settles (the verify
    cache's lag is at most 2 s; this process evicts at once, so it rarely waits)."""
    return get_with_cookie(g, "/demo/", cookie).status_code


def refused_within(g, cookie, seconds=3.0):
    end = time.time() + seconds
    while time.time() < end:
        if get_with_cookie(g, "/demo/", cookie).status_code == 302:
            return True
        time.sleep(0.2)
    return False


def signed_in_everywhere(g, tag):
    """One account signed in four times: two API sign-ins (Firefox on Windows, an iOS app) and two
    hosted sessions (Chrome on Linux: `mine` and `other`)."""
    email = addr(tag)
    firefox = api_sign_in(g, email, FIREFOX_WINDOWS)
    app = api_sign_in(g, email, IOS_APP)
    other = hosted_sign_in(g, email)
    mine = hosted_sign_in(g, email)
    return email, firefox, app, other, mine


def test_the_list_shows_every_sign_in_with_its_device(gatehouse):
    g = gatehouse
    _, firefox, app, other, mine = signed_in_everywhere(g, "list")
    page = AccountPage(g, mine)
    assert "Where you're signed in" in html.unescape(page.section)
    entries = page.entries
    assert len(entries) == 4, entries
    # This browser first, marked; the other browser; the apps by their refresh families.
    assert entries[0]["current"] and entries[0]["device"] == "Chrome on Linux" and entries[0]["id"].startswith("s.")
    assert "This device" in page.section
    assert sum(e["current"] for e in entries) == 1
    devices = sorted(e["device"] for e in entries)
    assert devices == ["Chrome on Linux", "Chrome on Linux", "Firefox on Windows", "MyApp on iOS"], devices
    for e in entries:
        assert e["network"] == "Network 127.0.0.0/24", e
        assert e["how"] == "Email link", e
        assert len(e["times"]) == 2 and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", t) for t in e["times"]), e
    kinds = sorted(e["kind"] for e in entries)
    assert kinds == ["app", "app", "browser", "browser"]
    # A refresh keeps the family's device (and the family is listed once).
    r = refresh(g, firefox["refreshToken"])
    assert r.status_code == 200, r.text
    page = AccountPage(g, mine)
    assert sorted(e["device"] for e in page.entries) == devices
    # The current entry has no "Sign out" of its own (the page's sign-out button is that).
    assert page.section.count('action="/__/auth/account/sessions/revoke?') == 3


def test_sign_out_one_revokes_exactly_it(gatehouse):
    g = gatehouse
    _, firefox, app, other, mine = signed_in_everywhere(g, "one")
    assert protected(g, other) == 200
    page = AccountPage(g, mine)
    other_entry = [e for e in page.entries if e["kind"] == "browser" and not e["current"]][0]
    r = page.post("revoke", {"id": other_entry["id"]})
    assert r.status_code in (302, 303) and "sessions=revoked" in r.headers["Location"], (r.status_code, r.headers)
    assert refused_within(g, other)
    assert protected(g, mine) == 200
    # The apps are untouched.
    assert refresh(g, firefox["refreshToken"]).status_code == 200
    # Now an app: its family ends, the other app goes on.
    page = AccountPage(g, mine, "&sessions=revoked")
    assert "That device has been signed out." in page.text
    ios = [e for e in page.entries if e["device"] == "MyApp on iOS"][0]
    assert page.post("revoke", {"id": ios["id"]}).status_code in (302, 303)
    r = refresh(g, app["refreshToken"])
    assert r.status_code == 400 and "TOKEN_EXPIRED" in r.text, r.text
    page = AccountPage(g, mine)
    assert sorted(e["device"] for e in page.entries) == ["Chrome on Linux", "Firefox on Windows"]
    assert protected(g, mine) == 200
    # An id of nothing (or another user's) revokes nothing.
    assert page.post("revoke", {"id": "a.not-a-family"}).status_code in (302, 303)
    assert len(AccountPage(g, mine).entries) == 2


def test_sign_out_all_others_keeps_this_browser(gatehouse):
    g = gatehouse
    _, firefox, app, other, mine = signed_in_everywhere(g, "others")
    page = AccountPage(g, mine)
    r = page.post("revoke-others")
    assert r.status_code in (302, 303) and "sessions=others" in r.headers["Location"]
    assert refused_within(g, other)
    for t in (firefox, app):
        r = refresh(g, t["refreshToken"])
        assert r.status_code == 400 and "TOKEN_EXPIRED" in r.text, r.text
    assert protected(g, mine) == 200
    page = AccountPage(g, mine, "&sessions=others")
    assert [e["current"] for e in page.entries] == [True]
    assert "Every other device has been signed out." in page.text
    assert 'id="sessions-revoke-others"' not in page.section


def test_sign_out_everywhere_signs_this_browser_out_too(gatehouse):
    g = gatehouse
    _, firefox, app, other, mine = signed_in_everywhere(g, "all")
    # validSince has whole seconds: a token of the revocation's own second still passes (as in Firebase).
    time.sleep(1.1)
    page = AccountPage(g, mine)
    r = page.post("revoke-all")
    assert r.status_code in (302, 303) and "signedOut=everywhere" in r.headers["Location"]
    assert re.search(rf"{COOKIE}=;.*Max-Age=0", r.headers["Set-Cookie"]), r.headers["Set-Cookie"]
    assert refused_within(g, mine) and refused_within(g, other)
    for t in (firefox, app):
        assert "TOKEN_EXPIRED" in refresh(g, t["refreshToken"]).text
    # ID tokens issued before are refused too (validSince).
    r = g.api("lookup", {"idToken": firefox["idToken"]})
    assert r.status_code == 400 and "TOKEN_EXPIRED" in r.text, r.text
    r = g.get("/__/auth/account?signedOut=everywhere&hl=en")
    assert "You have been signed out everywhere." in r.text


def test_a_form_without_its_csrf_token_or_from_elsewhere_is_refused(gatehouse):
    g = gatehouse
    _, firefox, app, other, mine = signed_in_everywhere(g, "csrf")
    page = AccountPage(g, mine)
    for action, data in (("revoke", {"id": page.entries[1]["id"]}), ("revoke-others", {}), ("revoke-all", {})):
        r = page.post(action, data, csrf=False)
        assert r.status_code == 403, (action, r.status_code, r.text[:200])
        r = page.post(action, dict(data, csrf="x" * 43), csrf=False)
        assert r.status_code == 403, (action, r.status_code)
    # A cross-site post with the right token is refused too.
    cookies = f"{COOKIE}={mine}; __Host-gh_csrf={page.csrf_cookie}"
    r = g.post("/__/auth/account/sessions/revoke-all", data={"csrf": page.csrf},
               headers={"Cookie": cookies, "Origin": "https://evil.example"})
    assert r.status_code == 403
    # Nothing was revoked.
    assert protected(g, other) == 200 and protected(g, mine) == 200
    assert refresh(g, app["refreshToken"]).status_code == 200
    assert len(AccountPage(g, mine).entries) == 4
    # Signed out, the forms do nothing.
    r = g.post("/__/auth/account/sessions/revoke-all", data={"csrf": page.csrf},
               headers={"Cookie": f"__Host-gh_csrf={page.csrf_cookie}", "Origin": g.base})
    assert r.status_code in (302, 303) and r.headers["Location"] == "/__/auth/account"
    assert protected(g, mine) == 200


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_list_in_chromium(gatehouse, output_dir, lang):
    g = gatehouse
    email = addr("shot")
    api_sign_in(g, email, FIREFOX_WINDOWS)
    api_sign_in(g, email, IOS_APP)
    other = hosted_sign_in(g, email)
    mine = hosted_sign_in(g, email)
    d = chromium_driver()
    try:
        d.get(g.url("/__/auth/health"))
        d.execute_cdp_cmd("Network.enable", {})
        d.execute_cdp_cmd("Network.setCookie", {"name": COOKIE, "value": mine, "url": g.url("/"), "path": "/",
                                                "secure": True, "httpOnly": True, "sameSite": "Lax"})
        d.get(g.url(f"/__/auth/account?hl={lang}#sessions"))
        section = d.find_element(By.ID, "sessions")
        d.execute_script("arguments[0].scrollIntoView()", section)
        items = d.find_elements(By.CSS_SELECTOR, "#session-list li")
        assert len(items) == 4
        assert d.find_element(By.ID, "session-current").is_displayed()
        d.save_screenshot(str(output_dir / f"sessions-{lang}.png"))
        d.set_window_size(1200, 1400)
        d.execute_script("arguments[0].scrollIntoView()", d.find_element(By.ID, "sessions"))
        d.save_screenshot(str(output_dir / f"sessions-{lang}-desktop.png"))
        # Sign out the other browser from the list.
        other_item = [i for i in items if i.get_attribute("data-kind") == "browser" and not i.find_elements(By.ID, "session-current")][0]
        other_item.find_element(By.TAG_NAME, "button").click()
        WebDriverWait(d, 10).until(lambda d: "sessions=revoked" in d.current_url)
        assert d.find_element(By.ID, "sessions-status").is_displayed()
        assert len(d.find_elements(By.CSS_SELECTOR, "#session-list li")) == 3
        d.save_screenshot(str(output_dir / f"sessions-{lang}-revoked.png"))
        assert refused_within(g, other)
        d.find_element(By.ID, "sessions-revoke-all").click()
        WebDriverWait(d, 10).until(lambda d: "signedOut=everywhere" in d.current_url)
        assert d.find_element(By.ID, "account-status").is_displayed()
        assert d.find_elements(By.ID, "sign-in")
        d.save_screenshot(str(output_dir / f"sessions-{lang}-everywhere.png"))
    finally:
        d.quit()
