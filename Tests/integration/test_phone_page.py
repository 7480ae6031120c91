"""The hosted phone sign-in page: in headless Chromium (number → code from the emulator listing →
signed in and redirected with the session cookie; wrong code; expired code and "send again"),
and as plain HTML forms without JavaScript (dev mode)."""
import html
import re
import time

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import Gatehouse, chromium_driver
from phone_helpers import age_session, decode_jwt, dev_config, expire_session

COOKIE = "__Host-gatehouse"


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("phone-page"), config=dev_config()).start()
    yield g
    g.stop()


def latest_code(gh, number):
    found = [c for c in gh.get("/emulator/v1/projects/demo-gatehouse/verificationCodes").json()["verificationCodes"]
             if c["phoneNumber"] == number]
    assert found, f"no code for {number}"
    return found[-1]


def shot(driver, output_dir, name):
    driver.save_screenshot(str(output_dir / f"{name}.png"))


def wait(driver, seconds=10):
    return WebDriverWait(driver, seconds)


def click_and_load(driver, element_id):
    """Clicks a submit button and waits for the next page to replace this one."""
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.ID, element_id).click()

    def replaced(_):
        # The old document is gone once touching its root fails; chromedriver reports that either
        # as a stale element or, when the swap happens mid-call, as an inspector error.
        try:
            old.is_enabled()
            return False
        except Exception:
            return True
    wait(driver).until(replaced)


def start_phone_flow(driver, gh, output_dir, number, region, prefix):
    """From the chooser to the code step; returns the continue URL used."""
    target = gh.url("/__/auth/health?from=phone")
    driver.get(gh.url("/__/auth/signin?continueUrl=" + requests.utils.quote(target, safe="")))
    shot(driver, output_dir, f"{prefix}1-chooser")
    driver.find_element(By.ID, "choose-phone").click()
    wait(driver).until(EC.presence_of_element_located((By.ID, "phoneNumber")))
    Select(driver.find_element(By.ID, "region")).select_by_value(region)
    driver.find_element(By.ID, "phoneNumber").send_keys(number)
    shot(driver, output_dir, f"{prefix}2-number")
    driver.find_element(By.ID, "send").click()
    wait(driver).until(EC.presence_of_element_located((By.ID, "code")))
    return target


def test_sign_in_with_a_phone_number(gh, browser, output_dir):
    target = start_phone_flow(browser, gh, output_dir, "06 12 34 56 78", "FR", "")
    assert browser.switch_to.active_element.get_attribute("id") == "code"
    code_input = browser.find_element(By.ID, "code")
    assert code_input.get_attribute("autocomplete") == "one-time-code" and code_input.get_attribute("inputmode") == "numeric"
    assert "+33612345678" in browser.find_element(By.CSS_SELECTOR, ".lead").text
    resend = browser.find_element(By.ID, "resend")
    assert not resend.is_enabled(), "send again waits 60 s"
    assert re.search(r"\d+ s", browser.find_element(By.ID, "resend-status").text)
    shot(browser, output_dir, "3-code")
    code = latest_code(gh, "+33612345678")["code"]
    code_input.send_keys(code[:3] + " " + code[3:])  # pasted with a space: the page keeps digits only
    assert code_input.get_attribute("value") == code
    browser.find_element(By.ID, "verify").click()
    wait(browser).until(EC.url_to_be(target))
    shot(browser, output_dir, "4-signed-in")
    cookies = {c["name"]: c for c in browser.get_cookies()}
    assert COOKIE in cookies, cookies
    assert cookies[COOKIE]["httpOnly"] and cookies[COOKIE]["secure"] and cookies[COOKIE]["sameSite"] == "Lax"
    claims = decode_jwt(cookies[COOKIE]["value"])
    assert claims["iss"] == "https://session.firebase.google.com/demo-gatehouse"
    assert claims["phone_number"] == "+33612345678" and claims["firebase"]["sign_in_provider"] == "phone"


def test_wrong_code_shows_attempts_left(gh, browser, output_dir):
    start_phone_flow(browser, gh, output_dir, "+49 151 23456789", "DE", "")
    code = latest_code(gh, "+4915123456789")["code"]
    wrong = "000000" if code != "000000" else "111111"
    browser.find_element(By.ID, "code").send_keys(wrong)
    click_and_load(browser, "verify")
    alert = wait(browser).until(EC.presence_of_element_located((By.ID, "form-error")))
    assert "You have 4 attempts left" in alert.text
    assert browser.find_element(By.ID, "code").get_attribute("aria-invalid") == "true"
    shot(browser, output_dir, "wrong-code")
    browser.find_element(By.ID, "code").send_keys(code)
    browser.find_element(By.ID, "verify").click()
    wait(browser).until(EC.url_contains("/__/auth/health"))


def test_expired_code_then_send_again(gh, browser, output_dir):
    start_phone_flow(browser, gh, output_dir, "+62 812 3456 7890", "ID", "")
    first = latest_code(gh, "+6281234567890")
    expire_session(gh, first["sessionInfo"])
    browser.find_element(By.ID, "code").send_keys(first["code"])
    click_and_load(browser, "verify")
    alert = wait(browser).until(EC.presence_of_element_located((By.ID, "form-error")))
    assert "expired" in alert.text
    shot(browser, output_dir, "expired")
    # The server allows "send again" 60 s after the code was issued; pretend that time has passed.
    age_session(gh, first["sessionInfo"], 61)
    browser.find_element(By.ID, "code").send_keys("1")  # another try renders the page again with the new wait
    click_and_load(browser, "verify")
    wait(browser).until(EC.element_to_be_clickable((By.ID, "resend")))
    click_and_load(browser, "resend")
    info = wait(browser).until(EC.presence_of_element_located((By.ID, "form-info")))
    assert "new code" in info.text
    shot(browser, output_dir, "resent")
    second = latest_code(gh, "+6281234567890")
    assert second["sessionInfo"] != first["sessionInfo"]
    browser.find_element(By.ID, "code").send_keys(second["code"])
    browser.find_element(By.ID, "verify").click()
    wait(browser).until(EC.url_contains("/__/auth/health"))


def test_pages_in_french_and_dark_mode(gh, output_dir):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    import shutil
    opts = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=420,900",
              "--lang=fr-FR", "--force-dark-mode", "--blink-settings=preferredColorScheme=0"]:
        opts.add_argument(a)
    opts.add_experimental_option("prefs", {"intl.accept_languages": "fr-FR,fr"})
    for b in ["/usr/bin/chromium", "/usr/bin/chromium-browser"]:
        if __import__("os").path.exists(b):
            opts.binary_location = b
    d = webdriver.Chrome(options=opts, service=Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    try:
        d.get(gh.url("/__/auth/signin"))
        assert "Connexion" in d.find_element(By.TAG_NAME, "h1").text
        shot(d, output_dir, "fr-chooser-dark")
        d.get(gh.url("/__/auth/phone"))
        assert Select(d.find_element(By.ID, "region")).first_selected_option.get_attribute("value") == "FR"
        assert "France (+33)" in Select(d.find_element(By.ID, "region")).first_selected_option.text
        d.find_element(By.ID, "phoneNumber").send_keys("12")
        d.find_element(By.ID, "send").click()
        alert = WebDriverWait(d, 10).until(EC.presence_of_element_located((By.ID, "form-error")))
        assert "trop court" in alert.text or "pas valide" in alert.text
        shot(d, output_dir, "fr-number-error-dark")
    finally:
        d.quit()


# --- Without JavaScript: plain form posts ----------------------------------------------------

class Browserless:
    """Plain HTTP with a cookie jar that, like browsers, treats 127.0.0.1 as a secure origin
    (requests would withhold the `Secure` CSRF cookie over http)."""

    def __init__(self, gh, accept_language="en"):
        self.gh = gh
        self.cookies = {}
        self.accept_language = accept_language

    def request(self, method, path, **kw):
        headers = {"Accept-Language": self.accept_language, **kw.pop("headers", {})}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        kw.setdefault("allow_redirects", False)
        r = requests.request(method, self.gh.url(path), headers=headers, timeout=10, **kw)
        for c in r.raw.headers.getlist("Set-Cookie"):
            name, value = c.split(";", 1)[0].split("=", 1)
            self.cookies[name] = value
        return r

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)


def hidden(page, name, form=None):
    """A hidden field's value, from the form with id `form` when given."""
    if form:
        page = page[page.index(f'id="{form}"'):]
        page = page[:page.index("</form>")]
    m = re.search(r'name="%s" value="([^"]*)"' % re.escape(name), page)
    assert m, f"no hidden field {name}"
    return html.unescape(m.group(1))


def test_forms_work_without_javascript(gh):
    s = Browserless(gh, accept_language="pt-BR,pt;q=0.9")
    target = gh.url("/__/auth/health?nojs=1")
    page = s.get("/__/auth/phone", params={"continueUrl": target})
    assert page.status_code == 200 and 'lang="pt"' in page.text
    assert '<option value="BR" selected>' in page.text
    assert 'autocomplete="tel"' in page.text and "tarifas" in page.text
    for header in ["Content-Security-Policy", "X-Frame-Options", "Referrer-Policy"]:
        assert header in page.headers
    assert "<script>" not in page.text and "style=" not in page.text
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "continueUrl": target,
                                              "region": "BR", "phoneNumber": "(11) 91234-5678"})
    assert r.status_code == 200, r.text
    session = hidden(r.text, "sessionInfo")
    code = latest_code(gh, "+5511912345678")
    assert code["sessionInfo"] == session
    # Send again before 60 s: refused by the server with the time left.
    early = s.post("/__/auth/phone", data={"csrf": hidden(r.text, "csrf", form="resend-form"), "continueUrl": target,
                                                  "resend": session})
    assert early.status_code == 400 and "Aguarde" in early.text
    done = s.post("/__/auth/phone/verify", data={"csrf": hidden(r.text, "csrf", form="code-form"), "continueUrl": target,
                                                        "sessionInfo": session, "code": code["code"]})
    assert done.status_code == 303 and done.headers["Location"] == target
    cookie = done.headers["Set-Cookie"]
    assert cookie.startswith(COOKIE + "=") and "HttpOnly" in cookie and "Secure" in cookie and "SameSite=Lax" in cookie


def test_unsafe_continue_url_goes_to_the_account_page(gh):
    s = Browserless(gh)
    page = s.get("/__/auth/phone")
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "phoneNumber": "+15555550102",
                                              "continueUrl": "https://evil.example/steal"})
    done = s.post("/__/auth/phone/verify", data={"csrf": hidden(r.text, "csrf"), "sessionInfo": hidden(r.text, "sessionInfo"),
                                                        "code": "222222", "continueUrl": "https://evil.example/steal"})
    assert done.status_code == 303 and done.headers["Location"] == "/__/auth/account"


def test_forms_without_csrf_are_refused(gh):
    s = Browserless(gh)
    page = s.get("/__/auth/phone")
    refused = 'id="error-message"'
    r = s.post("/__/auth/phone", data={"phoneNumber": "+33612345690"})
    assert r.status_code == 403 and refused in r.text
    r = s.post("/__/auth/phone/verify", data={"csrf": "forged", "sessionInfo": "x", "code": "123456"})
    assert r.status_code == 403 and refused in r.text
    # A token for the number form does not work on the code form.
    r = s.post("/__/auth/phone/verify", data={"csrf": hidden(page.text, "csrf"), "sessionInfo": "x", "code": "123456"})
    assert r.status_code == 403 and refused in r.text
    # A cross-site post (another Origin) is refused even with a valid token.
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "phoneNumber": "+33612345690"},
               headers={"Origin": "https://evil.example"})
    assert r.status_code == 403 and refused in r.text
    # Nothing was sent.
    assert not [c for c in gh.get("/emulator/v1/projects/demo-gatehouse/verificationCodes").json()["verificationCodes"]
                if c["phoneNumber"] == "+33612345690"]


def test_too_many_attempts_and_invalid_number_messages(make_gatehouse):
    g = make_gatehouse(config=dev_config(verify_attempts_per_ip_per_5min=1))
    s = Browserless(g, accept_language="de-DE")
    page = s.get("/__/auth/phone")
    bad = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "region": "DE", "phoneNumber": "12"})
    assert bad.status_code == 400 and ("zu kurz" in bad.text or "ungültig" in bad.text) and 'value="12"' in bad.text
    bad = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "region": "DE", "phoneNumber": "+1 555 0000 0000 0000"})
    assert bad.status_code == 400 and ("ungültig" in bad.text or "zu lang" in bad.text)
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "region": "DE", "phoneNumber": "0151 23456789"})
    session = hidden(r.text, "sessionInfo")
    verify = {"csrf": hidden(r.text, "csrf", form="code-form"), "sessionInfo": session}
    wrong = s.post("/__/auth/phone/verify", data=dict(verify, code="000001"))
    assert wrong.status_code == 400 and "noch 4 Versuche" in wrong.text
    blocked = s.post("/__/auth/phone/verify", data=dict(verify, code="000002"))
    assert blocked.status_code == 400 and "Zu viele Versuche" in blocked.text
