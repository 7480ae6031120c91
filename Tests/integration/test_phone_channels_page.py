"""The hosted phone page's other channels (dev mode, the dev outbox): "Send by WhatsApp" and "Call me
with the code" after the resend delay, in two languages; "not delivered" when the provider reports
so; and the automatic fallback's new code for the same session, noticed by the open page."""
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import Gatehouse, chromium_driver
from phone_helpers import TEST_NUMBERS, age_session, dev_config, session_hash, sql


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    config = dev_config(channels=["sms", "whatsapp", "voice"], fallback_after_seconds=600)
    g = Gatehouse(tmp_path_factory.mktemp("phone-channels"), config=config).start()
    yield g
    g.stop()


def browser_in(lang):
    """Headless Chromium whose Accept-Language is `lang` (the pages follow it on every request)."""
    import os
    import shutil
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=420,900", f"--lang={lang}"]:
        opts.add_argument(a)
    opts.add_experimental_option("prefs", {"intl.accept_languages": lang})
    for b in ["/usr/bin/chromium", "/usr/bin/chromium-browser"]:
        if os.path.exists(b):
            opts.binary_location = b
    return webdriver.Chrome(options=opts, service=Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver"))


def wait(d, seconds=10):
    return WebDriverWait(d, seconds)


def codes(gh, number):
    return [c for c in gh.get("/emulator/v1/projects/demo-gatehouse/verificationCodes").json()["verificationCodes"]
            if c["phoneNumber"] == number]


def messages(gh, number):
    return sql(gh, "SELECT id, channel, body, language, region, fallback_at, session_hash FROM outbox WHERE recipient = ? ORDER BY id",
               number)


def to_code_step(d, gh, number, region):
    d.get(gh.url("/__/auth/phone"))
    wait(d).until(EC.presence_of_element_located((By.ID, "phoneNumber")))
    Select(d.find_element(By.ID, "region")).select_by_value(region)
    d.find_element(By.ID, "phoneNumber").send_keys(number)
    d.find_element(By.ID, "send").click()
    wait(d).until(EC.presence_of_element_located((By.ID, "code")))


def replaced(old):
    """Whether the page `old` belonged to is gone. Touching its root fails once it is; chromedriver
    reports that as a stale element or, when the swap happens mid-call, as another error."""
    def gone(_):
        try:
            old.is_enabled()
            return False
        except Exception:
            return True
    return gone


def reload_code_step(d):
    """Renders the code step again (a wrong try), so the page's resend wait is read afresh."""
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.ID, "code").send_keys("1")
    d.find_element(By.ID, "verify").click()
    wait(d).until(replaced(old))
    wait(d).until(EC.presence_of_element_located((By.ID, "code")))


def click_and_load(d, element_id):
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.ID, element_id).click()
    wait(d).until(replaced(old))
    wait(d).until(EC.presence_of_element_located((By.ID, "code")))


def test_send_by_whatsapp_then_sign_in_with_its_code(gh, output_dir):
    number = "+33611111111"
    d = chromium_driver()
    try:
        to_code_step(d, gh, "06 11 11 11 11", "FR")
        whatsapp, voice = d.find_element(By.ID, "resend-whatsapp"), d.find_element(By.ID, "resend-voice")
        assert whatsapp.text == "Send by WhatsApp" and voice.text == "Call me with the code"
        assert not whatsapp.is_enabled() and not voice.is_enabled(), "the other channels wait as send again does"
        d.save_screenshot(str(output_dir / "channels-code-step-en.png"))
        first = codes(gh, number)[-1]
        age_session(gh, first["sessionInfo"], 61)
        reload_code_step(d)
        wait(d).until(EC.element_to_be_clickable((By.ID, "resend-whatsapp")))
        click_and_load(d, "resend-whatsapp")
        info = d.find_element(By.ID, "form-info").text
        assert "by WhatsApp" in info, info
        d.save_screenshot(str(output_dir / "channels-whatsapp-sent-en.png"))
        rows = messages(gh, number)
        assert [r["channel"] for r in rows] == ["sms", "whatsapp"]
        wa = rows[-1]
        assert wa["region"] == "FR" and wa["language"] == "en"
        latest = codes(gh, number)[-1]
        assert latest["sessionInfo"] != first["sessionInfo"] and wa["body"] == latest["code"], "WhatsApp carries the code alone"
        d.find_element(By.ID, "code").send_keys(latest["code"])
        d.find_element(By.ID, "verify").click()
        wait(d).until(EC.url_contains("/__/auth/account"))
    finally:
        d.quit()


def test_call_me_in_french_says_the_digits(gh, output_dir):
    number = "+4915122222222"
    d = browser_in("fr")
    try:
        to_code_step(d, gh, "0151 22222222", "DE")
        assert d.find_element(By.ID, "resend-voice").text == "Recevoir le code par appel"
        first = codes(gh, number)[-1]
        age_session(gh, first["sessionInfo"], 61)
        reload_code_step(d)
        wait(d).until(EC.element_to_be_clickable((By.ID, "resend-voice")))
        click_and_load(d, "resend-voice")
        assert "appel" in d.find_element(By.ID, "form-info").text
        d.save_screenshot(str(output_dir / "channels-voice-sent-fr.png"))
        call = messages(gh, number)[-1]
        code = codes(gh, number)[-1]["code"]
        assert call["channel"] == "voice" and call["language"] == "fr"
        assert call["body"].startswith("Votre code de vérification pour ") and ", ".join(code) in call["body"], call["body"]
    finally:
        d.quit()


def test_the_page_says_not_delivered_when_the_provider_reports_so(gh, output_dir):
    number = "+33633333333"
    d = chromium_driver()
    try:
        to_code_step(d, gh, "06 33 33 33 33", "FR")
        assert not d.find_element(By.ID, "not-delivered").is_displayed()
        sms = messages(gh, number)[-1]
        # What a provider's receipt records (the receipts themselves: test_delivery_receipts.py).
        sql(gh, "UPDATE outbox SET provider = 'twilio', delivery = 'undelivered', delivery_error = '30003' WHERE id = ?", sms["id"])
        alert = wait(d, 15).until(EC.visibility_of_element_located((By.ID, "not-delivered")))
        assert "could not be delivered" in alert.text
        d.save_screenshot(str(output_dir / "channels-not-delivered-en.png"))
        # Rendered again (no script needed), the page says it at once.
        reload_code_step(d)
        assert d.find_element(By.ID, "not-delivered").is_displayed()
    finally:
        d.quit()


def test_automatic_fallback_sends_a_new_code_for_the_same_session(gh, output_dir):
    number = "+33644444444"
    d = browser_in("de")
    try:
        to_code_step(d, gh, "06 44 44 44 44", "FR")
        first = codes(gh, number)[-1]
        sms = messages(gh, number)[-1]
        assert sms["fallback_at"] is not None and sms["session_hash"] == session_hash(first["sessionInfo"])
        # The provider reports the text undelivered: the next channel takes over at once.
        sql(gh, "UPDATE outbox SET provider = 'twilio', delivery = 'undelivered', fallback_at = 1 WHERE id = ?", sms["id"])
        deadline = time.time() + 10
        while time.time() < deadline and [r["channel"] for r in messages(gh, number)] != ["sms", "whatsapp"]:
            time.sleep(0.1)
        assert [r["channel"] for r in messages(gh, number)] == ["sms", "whatsapp"]
        latest = codes(gh, number)[-1]
        assert latest["sessionInfo"] == first["sessionInfo"] and latest["code"] != first["code"]
        notice = wait(d, 15).until(EC.visibility_of_element_located((By.ID, "fallback-notice")))
        assert "WhatsApp" in notice.text
        d.save_screenshot(str(output_dir / "channels-fallback-de.png"))
        # The old code no longer works; the new one does, on the same page.
        d.find_element(By.ID, "code").send_keys(first["code"])
        d.find_element(By.ID, "verify").click()
        wait(d).until(EC.presence_of_element_located((By.ID, "form-error")))
        d.find_element(By.ID, "code").send_keys(latest["code"])
        d.find_element(By.ID, "verify").click()
        wait(d).until(EC.url_contains("/__/auth/account"))
    finally:
        d.quit()


def test_a_tampered_channel_is_refused(gh):
    from test_phone_page import Browserless, hidden
    s = Browserless(gh)
    page = s.get("/__/auth/phone")
    r = s.post("/__/auth/phone", data={"csrf": hidden(page.text, "csrf"), "phoneNumber": "+33655555555"})
    session = hidden(r.text, "sessionInfo")
    age_session(gh, session, 61)
    r = s.post("/__/auth/phone", data={"csrf": hidden(r.text, "csrf", form="resend-form"), "resend": session, "channel": "fax"})
    # Not a channel: a text, as "Send a new code" sends.
    assert r.status_code == 200 and messages(gh, "+33655555555")[-1]["channel"] == "sms"


def test_second_factor_page_offers_a_call(tmp_path_factory, output_dir):
    from mfa_support import config as mfa_config
    from test_mfa_pages import code_for, confirm_link, sign_in_link, user_with_factor
    config = mfa_config("ENABLED")
    config["projects"][0].setdefault("phone", {}).update({"channels": ["sms", "voice"], "verify_attempts_per_ip_per_5min": 10000})
    g = Gatehouse(tmp_path_factory.mktemp("mfa-channels"), config=config).start()
    d = chromium_driver()
    try:
        address = f"mfa-call-{time.time_ns()}@example.com"
        phone = "+33677777777"
        user_with_factor(g, address, phone)
        confirm_link(d, g, sign_in_link(g, address, g.url("/__/auth/health?from=mfa-call")), address, output_dir, "mfa-call")
        wait(d).until(EC.presence_of_element_located((By.ID, "send"))).click()
        wait(d).until(EC.presence_of_element_located((By.ID, "code")))
        assert d.find_element(By.ID, "resend-voice").text == "Call me with the code"
        assert d.find_elements(By.ID, "resend-whatsapp") == [], "only the project's channels"
        session = d.find_element(By.NAME, "sessionInfo").get_attribute("value")
        age_session(g, session, 61)
        reload_code_step(d)
        wait(d).until(EC.element_to_be_clickable((By.ID, "resend-voice")))
        click_and_load(d, "resend-voice")
        d.save_screenshot(str(output_dir / "mfa-call-sent-en.png"))
        call = messages(g, phone)[-1]
        assert call["channel"] == "voice"
        new_session = d.find_element(By.NAME, "sessionInfo").get_attribute("value")
        code = code_for(g, new_session)
        assert ", ".join(code) in call["body"]
        d.find_element(By.ID, "code").send_keys(code)
        d.find_element(By.ID, "verify").click()
        wait(d).until(EC.url_contains("from=mfa-call"))
    finally:
        d.quit()
        g.stop()
