"""The hosted email pages in headless Chromium: ask for a link, open it from the received mail,
confirm, end up signed in (session cookie) at continueUrl. Screenshots go to test-output/."""
import time
import uuid
from email.utils import parseaddr
from urllib.parse import quote

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from conftest import Gatehouse, chromium_driver, free_port
from email_support import SMTPSink, action_params, config, expire_link, insert_account, jwks_verify, link_from_mail, smtp_section


@pytest.fixture(scope="module")
def sink():
    with SMTPSink(free_port()) as s:
        yield s


@pytest.fixture(scope="module")
def gh(tmp_path_factory, sink):
    g = Gatehouse(tmp_path_factory.mktemp("gh-pages"), config=config(email_section=smtp_section(sink.port))).start()
    yield g
    g.stop()


def addr(tag):
    return f"{tag}-{uuid.uuid4().hex[:8]}@example.com"


def mail_for(sink, address, timeout=15.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for m in reversed(sink.wait(len(sink.messages) or 1, timeout=timeout)):
            if parseaddr(str(m["To"]))[1] == address:
                return m
        time.sleep(0.05)
    raise AssertionError(f"no mail for {address}")


def shot(d, output_dir, name):
    d.save_screenshot(str(output_dir / f"{name}.png"))


def wait_for(d, by, what, timeout=10):
    return WebDriverWait(d, timeout).until(EC.presence_of_element_located((by, what)))


def continue_url(gh):
    return gh.url("/__/auth/health?from=email")


def request_link_in(d, gh, address, output_dir=None, lang="en"):
    d.get(gh.url(f"/__/auth/email?hl={lang}&continueUrl={quote(continue_url(gh), safe='')}"))
    field = wait_for(d, By.ID, "email")
    if output_dir:
        shot(d, output_dir, "1-request")
    field.send_keys(address)
    d.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(d, By.ID, "sent-to")


def session_claims(gh, d):
    cookie = d.get_cookie("__Host-gatehouse")
    assert cookie, d.get_cookies()
    assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Lax"
    return jwks_verify(gh, cookie["value"], issuer="https://session.firebase.google.com/demo-gatehouse")


def test_same_browser_flow(gh, sink, browser, output_dir):
    a = addr("same")
    request_link_in(browser, gh, a, output_dir)
    assert a in browser.find_element(By.ID, "sent-to").text
    resend = browser.find_element(By.CSS_SELECTOR, "button[data-gh-wait]")
    assert not resend.is_enabled(), "resend waits 60 s"
    assert "60" in browser.find_element(By.CSS_SELECTOR, "[data-gh-wait-status]").text or "59" in browser.page_source
    shot(browser, output_dir, "2-sent")

    link = link_from_mail(mail_for(sink, a))
    assert action_params(link)["mode"] == "signIn"
    browser.get(link)
    known = wait_for(browser, By.ID, "confirm-known")
    assert a in known.text
    assert not browser.find_elements(By.ID, "email"), "the asking browser is not asked for the address"
    shot(browser, output_dir, "3-confirm")
    browser.find_element(By.ID, "confirm").click()
    WebDriverWait(browser, 10).until(lambda d: d.current_url.startswith(continue_url(gh)))
    claims = session_claims(gh, browser)
    assert claims["email"] == a and claims["email_verified"] is True
    assert claims["firebase"]["sign_in_provider"] == "password"
    assert browser.get_cookie("__Host-gh_email") is None, "the pending cookie is cleared"

    # The link is now used: a clear page with a way to ask again.
    browser.get(link)
    problem = wait_for(browser, By.ID, "problem")
    assert problem.get_attribute("data-problem") == "used"
    assert browser.find_element(By.ID, "new-link").get_attribute("href").startswith(gh.url("/__/auth/email?"))
    shot(browser, output_dir, "4-used")


def test_cross_browser_flow_asks_for_the_address(gh, sink, browser, output_dir):
    a = addr("cross")
    request_link_in(browser, gh, a, lang="fr")
    link = link_from_mail(mail_for(sink, a))
    assert action_params(link)["lang"] == "fr"
    other = chromium_driver()
    try:
        other.get(link)
        field = wait_for(other, By.ID, "email")
        assert other.find_element(By.ID, "confirm-unknown").text.startswith("Ce lien a été ouvert")
        assert a not in other.page_source, "the address is not revealed to another browser"
        shot(other, output_dir, "1-ask-address")
        field.send_keys("mallory@example.com")
        other.find_element(By.ID, "confirm").click()
        error = wait_for(other, By.ID, "email-error")
        assert "pas l’adresse" in error.text
        shot(other, output_dir, "2-wrong-address")
        other.find_element(By.ID, "email").clear()
        other.find_element(By.ID, "email").send_keys(a.upper())
        other.find_element(By.ID, "confirm").click()
        WebDriverWait(other, 10).until(lambda d: d.current_url.startswith(continue_url(gh)))
        assert session_claims(gh, other)["email"] == a
    finally:
        other.quit()


def test_prefetch_does_not_use_the_link(gh, sink, browser, output_dir):
    a = addr("prefetch")
    request_link_in(browser, gh, a)
    link = link_from_mail(mail_for(sink, a))
    for _ in range(2):
        assert requests.get(link, timeout=10).status_code == 200
        assert requests.head(link, timeout=10).status_code == 200
    browser.get(link)
    wait_for(browser, By.ID, "confirm").click()
    WebDriverWait(browser, 10).until(lambda d: d.current_url.startswith(continue_url(gh)))
    assert session_claims(gh, browser)["email"] == a
    shot(browser, output_dir, "signed-in")


def test_expired_and_invalid_links(gh, sink, browser, output_dir):
    a = addr("expired")
    request_link_in(browser, gh, a, lang="de")
    link = link_from_mail(mail_for(sink, a))
    expire_link(gh, action_params(link)["oobCode"])
    browser.get(link)
    problem = wait_for(browser, By.ID, "problem")
    assert problem.get_attribute("data-problem") == "expired"
    assert "abgelaufen" in browser.find_element(By.TAG_NAME, "h1").text
    new_link = browser.find_element(By.ID, "new-link").get_attribute("href")
    assert "continueUrl=" in new_link and "hl=de" in new_link
    shot(browser, output_dir, "1-expired")
    browser.get(gh.url("/__/auth/action?apiKey=test-api-key&mode=signIn&oobCode=forged&lang=pt"))
    assert wait_for(browser, By.ID, "problem").get_attribute("data-problem") == "invalid"
    shot(browser, output_dir, "2-invalid")
    browser.find_element(By.ID, "new-link").click()
    wait_for(browser, By.ID, "email")
    assert browser.current_url.startswith(gh.url("/__/auth/email"))


def test_verify_email_page(gh, browser, output_dir):
    a = addr("verify")
    insert_account(gh, "PageVerifyUser0000000000001", a, verified=False)
    r = gh.admin("/accounts:sendOobCode", {"requestType": "VERIFY_EMAIL", "email": a, "returnOobLink": True,
                                           "continueUrl": continue_url(gh)})
    link = r.json()["oobLink"]
    requests.get(link, timeout=10)
    browser.get(link)
    wait_for(browser, By.ID, "confirm")
    assert a in browser.page_source
    shot(browser, output_dir, "1-confirm")
    browser.find_element(By.ID, "confirm").click()
    cont = wait_for(browser, By.ID, "continue")
    assert cont.get_attribute("href") == continue_url(gh)
    shot(browser, output_dir, "2-verified")
    user = gh.admin("/accounts:lookup", {"localId": ["PageVerifyUser0000000000001"]}).json()["users"][0]
    assert user["emailVerified"] is True


def test_app_link_in_a_browser_reaches_the_continue_url(gh, browser):
    a = addr("app")
    r = gh.admin("/accounts:sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": a, "returnOobLink": True,
                                           "continueUrl": continue_url(gh), "canHandleCodeInApp": True,
                                           "iOSBundleId": "com.example.gatehouse.demo"})
    link = r.json()["oobLink"]
    assert "/__/auth/links?link=" in link
    browser.get(link)
    WebDriverWait(browser, 10).until(lambda d: d.current_url.startswith(continue_url(gh)))
    assert f"oobCode={r.json()['oobCode']}" in browser.current_url and "mode=signIn" in browser.current_url
    assert gh.api("signInWithEmailLink", {"email": a, "oobCode": r.json()["oobCode"]}).status_code == 200


def test_request_page_errors_are_localized(gh, browser, output_dir):
    browser.get(gh.url("/__/auth/email?hl=pt"))
    field = wait_for(browser, By.ID, "email")
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "pt"
    browser.execute_script("arguments[0].type = 'text'", field)  # let the server see a malformed address
    field.send_keys("not-an-address")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    error = wait_for(browser, By.ID, "email-error")
    assert "endereço de e-mail válido" in error.text
    assert browser.find_element(By.ID, "email").get_attribute("aria-invalid") == "true"
    shot(browser, output_dir, "invalid-address")
    browser.get(gh.url("/__/auth/email?continueUrl=" + quote("https://evil.example.net/", safe="")))
    assert wait_for(browser, By.ID, "problem").get_attribute("data-problem") == "continue"
