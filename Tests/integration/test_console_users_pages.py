"""The console's Users pages in headless Chromium, at a phone's width (420 CSS px) and a desktop's
(1280): the list, a search, a user with live sign-ins and an audit trail, a confirmation and its
result. Whole-page screenshots go to test-output/; the checks are what a person would see: no
horizontal scrolling of the page (wide tables scroll inside their panel), the actions reachable,
the confirmation's button doing what it says."""
import base64
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

import console_support as cs
from conftest import Gatehouse, chromium_driver
from mfa_support import PROJECT

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.5 Mobile/15E148 Safari/604.1")


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("gh-console-pages"), config=cs.config()).start()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def people(gh):
    """An operator, a user signed in from two browsers and an app with a trail, and some accounts."""
    op = cs.operator(gh, "op")
    victim = cs.Operator(None, cs.totp_user(gh, "ada"))
    for i in range(12):
        r = gh.admin("/accounts", {"localId": f"seed-{i:02d}-{uuid.uuid4().hex[:12]}", "email": f"person{i}@example.org",
                                   "phoneNumber": f"+33612{i:02d}{uuid.uuid4().int % 10_000:04d}", "disabled": i % 5 == 3},
                     project=PROJECT)
        assert r.status_code == 200, r.text
    gh.admin("/accounts:update", {"localId": victim.uid, "displayName": "Ada Lovelace"}, project=PROJECT)
    return op, victim


def browser(width):
    if width >= 1000:
        return chromium_driver(width=width, height=1000)
    d = chromium_driver()
    # Headless Chromium keeps its window at least 500 px wide: the phone's width is emulated.
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": True})
    return d


def signed_in(d, gh, op):
    """The operator's session cookie in the browser (made on the hosted pages by console_support)."""
    d.get(gh.url("/__/auth/health"))
    d.add_cookie({"name": cs.SESSION_COOKIE, "value": op.client.session_cookie, "path": "/", "secure": True, "httpOnly": True})


def shot(d, output_dir, name):
    """The whole page, beyond the viewport."""
    png = d.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
    path = output_dir / f"{name}.png"
    path.write_bytes(base64.b64decode(png))
    return path


def wait_for(d, element_id, timeout=10):
    return WebDriverWait(d, timeout).until(EC.presence_of_element_located((By.ID, element_id)))


def no_page_scroll(d):
    """The page itself never scrolls sideways (tables scroll inside their panel)."""
    width = d.execute_script("return document.documentElement.clientWidth")
    assert d.execute_script("return document.documentElement.scrollWidth") <= width + 1


@pytest.mark.parametrize("width", [420, 1280])
def test_users_pages(gh, people, output_dir, width):
    op, victim = people
    # Two browsers (and, the first time, the enrolment's app sign-in).
    cs.sign_in(gh, victim.user, user_agent=FIREFOX)
    cs.sign_in(gh, victim.user, user_agent=IPHONE)
    d = browser(width)
    try:
        signed_in(d, gh, op)
        d.get(gh.url(f"{cs.CONSOLE}/users"))
        assert d.find_element(By.ID, "users-title").text == "Users"
        assert len(d.find_elements(By.CSS_SELECTOR, "#users-table tbody tr")) >= 14
        assert d.find_element(By.CSS_SELECTOR, '.gh-console-nav a[aria-current="page"]').text == "Users"
        no_page_scroll(d)
        shot(d, output_dir, f"{width}-1-users")

        # A search typed in the form.
        field = d.find_element(By.ID, "users-q")
        field.send_keys("PERSON1")
        field.send_keys("@")
        d.find_element(By.ID, "users-search-button").click()
        assert "person1@" in wait_for(d, "users-searching").text
        rows = d.find_elements(By.CSS_SELECTOR, "#users-table tbody tr")
        assert len(rows) == 1 and "person1@example.org" in rows[0].text
        no_page_scroll(d)
        shot(d, output_dir, f"{width}-2-search")

        # The user: two browsers and an app, the trail.
        d.get(gh.url(f"{cs.CONSOLE}/users/{victim.uid}?project={PROJECT}"))
        sessions = d.find_elements(By.CSS_SELECTOR, ".gh-console-session")
        assert len(sessions) >= 2
        text = d.find_element(By.TAG_NAME, "body").text
        assert "Firefox on Linux" in text and "Safari on iOS" in text and "Authenticator app" in text
        assert "mfa.sign_in" in text and "Ada Lovelace" in text
        no_page_scroll(d)
        shot(d, output_dir, f"{width}-3-user")

        # Sign out everywhere: the confirmation, then the result.
        d.find_element(By.ID, "action-signout").click()
        assert wait_for(d, "confirm-title").text == "Sign this user out everywhere?"
        no_page_scroll(d)
        shot(d, output_dir, f"{width}-4-confirm")
        d.find_element(By.ID, "confirm-submit").click()
        assert wait_for(d, "console-notice").text == "The user is signed out everywhere."
        assert d.find_elements(By.ID, "user-no-sessions")
        shot(d, output_dir, f"{width}-5-done")

        # In French.
        d.get(gh.url(f"{cs.CONSOLE}/users?hl=fr"))
        assert d.find_element(By.ID, "users-title").text == "Utilisateurs"
        shot(d, output_dir, f"{width}-6-users-fr")
    finally:
        d.quit()
