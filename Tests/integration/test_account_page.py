"""The signed-in page /__/auth/account and sign-out, in headless Chromium (screenshots in output_dir)."""
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import chromium_driver
from session_support import COOKIE, session_cookie, sign_up


def set_session_cookie(d, g, value):
    """What a sign-in page does with Set-Cookie, done through DevTools for a cookie made via the API."""
    d.get(g.url("/__/auth/health"))
    d.execute_cdp_cmd("Network.enable", {})
    ok = d.execute_cdp_cmd("Network.setCookie", {"name": COOKIE, "value": value, "url": g.url("/"), "path": "/",
                                                 "secure": True, "httpOnly": True, "sameSite": "Lax"})
    assert ok.get("success", True)


@pytest.mark.parametrize("lang,sign_out_label", [("en", "Sign out"), ("fr", "Se déconnecter")])
def test_account_page_shows_who_you_are_and_signs_out(gatehouse, output_dir, lang, sign_out_label):
    s = sign_up(gatehouse)
    uid = s["localId"]
    email = f"ada.{lang}@example.com"
    r = gatehouse.admin("/accounts:update", {"localId": uid, "displayName": "Ada Lovelace", "email": email,
                                              "phoneNumber": "+33612345678" if lang == "en" else "+33612345679"})
    assert r.status_code == 200, r.text
    cookie = session_cookie(gatehouse, s["idToken"])
    d = chromium_driver()
    try:
        set_session_cookie(d, gatehouse, cookie)
        d.get(gatehouse.url(f"/__/auth/account?hl={lang}"))
        assert d.find_element(By.ID, "account-name").text == "Ada Lovelace"
        assert d.find_element(By.ID, "account-uid").text == uid
        assert d.find_element(By.ID, "account-email").text == email
        button = d.find_element(By.ID, "sign-out")
        assert button.text == sign_out_label
        d.save_screenshot(str(output_dir / f"account-{lang}.png"))
        d.get(gatehouse.url("/demo/"))
        assert uid in d.find_element(By.TAG_NAME, "body").text
        d.get(gatehouse.url(f"/__/auth/account?hl={lang}"))
        d.find_element(By.ID, "sign-out").click()
        WebDriverWait(d, 10).until(lambda d: "signedOut=1" in d.current_url)
        assert d.find_element(By.ID, "account-status").is_displayed()
        assert d.find_elements(By.ID, "sign-in")
        assert not [c for c in d.get_cookies() if c["name"] == COOKIE]
        d.save_screenshot(str(output_dir / f"signed-out-{lang}.png"))
        # Signed out: the protected demo sends the browser to the sign-in page.
        d.get(gatehouse.url("/demo/"))
        assert "/__/auth/signin?continueUrl=" in d.current_url
    finally:
        d.quit()
    # The server-side session is revoked too: replaying the old cookie gets nowhere.
    r = gatehouse.get("/demo/", headers={"Cookie": f"{COOKIE}={cookie}"})
    assert r.status_code == 302


def test_account_page_when_signed_out(gatehouse, output_dir):
    d = chromium_driver(width=1200, height=800)
    try:
        d.get(gatehouse.url("/__/auth/account"))
        assert d.find_element(By.ID, "account-anonymous").is_displayed()
        link = d.find_element(By.ID, "sign-in").get_attribute("href")
        assert "/__/auth/signin?continueUrl=" in link
        d.save_screenshot(str(output_dir / "not-signed-in-desktop.png"))
    finally:
        d.quit()
