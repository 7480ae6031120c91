"""The app verification page in headless Chromium: it solves the proof of work by itself, returns
to the registered app's custom scheme with a token the iOS SDK can read, falls back to a visible
button, and refuses (with a localized page that redirects nowhere) anything not registered."""
import json
import time

import pytest
from selenium.webdriver.common.by import By

from appverify_helpers import (DEMO_APP_ID, DEMO_BUNDLE, DEMO_SCHEME, TOKEN_RE, DevToolsLog, handler_path, ios_parse,
                               perf_driver, send_verification_code_implemented, wait_for)
from conftest import Gatehouse, assert_envelope

API_KEY = "good-key"
ANDROID_PACKAGE = "com.example.gatehouse.android"
CONFIG = {"projects": [{
    "id": "demo-gatehouse",
    "api_keys": [API_KEY],
    "android_apps": [{"package_name": ANDROID_PACKAGE}],
}]}


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("gh"), config=CONFIG).start()
    yield g
    g.stop()


@pytest.fixture
def driver():
    d = perf_driver()
    yield d
    d.quit()


def open_and_capture(driver, gh, path, prefix=DEMO_SCHEME + "://", timeout=15):
    log = DevToolsLog(driver)
    driver.get(gh.url(path))
    navigations = wait_for(lambda: log.navigations(prefix), timeout=timeout)
    return log, navigations


def test_demo_app_returns_to_its_scheme_with_a_single_use_token(gh, driver, output_dir):
    log, navigations = open_and_capture(driver, gh, handler_path(API_KEY, event_id="KQZXWVUTSR"))
    driver.save_screenshot(str(output_dir / "done.png"))
    assert len(navigations) == 1, navigations
    url = navigations[0]
    items = ios_parse(url, DEMO_SCHEME, "KQZXWVUTSR")
    assert items["authType"] == "verifyApp" and items["eventId"] == "KQZXWVUTSR"
    assert TOKEN_RE.fullmatch(items["recaptchaToken"]), items
    assert "firebaseError" not in items
    # The page also offers the same URL as a link, and says it is done.
    assert driver.find_element(By.ID, "verify-return").get_attribute("href") == url
    assert driver.find_element(By.ID, "verify-status").text == "Done. Returning to the app…"
    assert not driver.find_element(By.ID, "verify-cancel").is_displayed()
    # What the page posted: a solution bound to the handler's parameters; replaying it fails.
    posted = [json.loads(b) for b in log.posted_bodies("/__/auth/challenge")]
    assert len(posted) == 1
    body = posted[0]
    assert {k: body[k] for k in ["apiKey", "eventId", "ibi", "appId"]} == {
        "apiKey": API_KEY, "eventId": "KQZXWVUTSR", "ibi": DEMO_BUNDLE, "appId": DEMO_APP_ID}
    assert "clientId" not in body and "apn" not in body
    assert_envelope(gh.post("/__/auth/challenge", json=body), 400, "CAPTCHA_CHECK_FAILED : Proof of work verification failed - REPLAYED")
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and "favicon" not in e["message"]]


def test_page_headers_forbid_framing_caching_and_inline_script(gh):
    r = gh.get(handler_path(API_KEY))
    assert r.status_code == 200
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert "worker-src 'self'" in csp
    assert r.headers["X-Frame-Options"] == "DENY"
    assert r.headers["Cache-Control"] == "no-store"
    assert r.headers["Referrer-Policy"] == "no-referrer"
    assert "<script>" not in r.text and " style=" not in r.text


@pytest.mark.skipif(not send_verification_code_implemented(), reason="accounts:sendVerificationCode not implemented in this build")
def test_send_verification_code_accepts_the_token_once(gh, driver):
    _, navigations = open_and_capture(driver, gh, handler_path(API_KEY, event_id="SENDCODEAA"))
    token = ios_parse(navigations[0], DEMO_SCHEME, "SENDCODEAA")["recaptchaToken"]
    first = gh.api("sendVerificationCode", {"phoneNumber": "+16505550101", "recaptchaToken": token, "clientType": "CLIENT_TYPE_IOS"},
                   key=API_KEY, headers={"X-Ios-Bundle-Identifier": DEMO_BUNDLE})
    assert first.status_code == 200, first.text
    assert first.json()["sessionInfo"]
    second = gh.api("sendVerificationCode", {"phoneNumber": "+16505550102", "recaptchaToken": token, "clientType": "CLIENT_TYPE_IOS"},
                    key=API_KEY, headers={"X-Ios-Bundle-Identifier": DEMO_BUNDLE})
    assert_envelope(second, 400, "CAPTCHA_CHECK_FAILED")


def test_visible_verify_button_retries_after_a_failure(gh, driver, output_dir):
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/__/auth/challenge*"]})
    log = DevToolsLog(driver)
    driver.get(gh.url(handler_path(API_KEY, event_id="RETRYRETRY")))
    button = driver.find_element(By.ID, "verify-button")
    assert wait_for(button.is_displayed, timeout=10)
    error = driver.find_element(By.ID, "verify-error")
    assert error.is_displayed() and error.text == "The check could not be completed. Check your connection and try again."
    assert driver.switch_to.active_element == button
    driver.save_screenshot(str(output_dir / "fallback.png"))
    assert not log.navigations(DEMO_SCHEME)
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    button.click()
    navigations = wait_for(lambda: log.navigations(DEMO_SCHEME + "://"), timeout=15)
    assert navigations, "no redirect after the retry"
    assert TOKEN_RE.fullmatch(ios_parse(navigations[0], DEMO_SCHEME, "RETRYRETRY")["recaptchaToken"])
    driver.save_screenshot(str(output_dir / "retried.png"))


def test_solves_on_the_page_when_the_worker_cannot_start(gh, driver):
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*pow-worker.js*"]})
    _, navigations = open_and_capture(driver, gh, handler_path(API_KEY, event_id="NOWORKERAA"), timeout=30)
    assert navigations, "the main-thread fallback did not finish"
    assert TOKEN_RE.fullmatch(ios_parse(navigations[0], DEMO_SCHEME, "NOWORKERAA")["recaptchaToken"])


def test_cancel_link_returns_a_firebase_error(gh, driver):
    driver.get(gh.url(handler_path(API_KEY, event_id="CANCELCANC")))
    href = driver.find_element(By.ID, "verify-cancel").get_attribute("href")
    items = ios_parse(href, DEMO_SCHEME, "CANCELCANC")
    assert "recaptchaToken" not in items
    assert json.loads(items["firebaseError"]) == {"code": "auth/captcha-check-failed", "message": "App verification could not be completed."}


def test_android_package_gets_an_intent_url(gh, driver):
    path = handler_path(API_KEY, event_id="ANDROIDEVT", bundle=None, app_id=None, apn=ANDROID_PACKAGE)
    _, navigations = open_and_capture(driver, gh, path, prefix="intent://")
    assert navigations, "no intent:// navigation"
    url = navigations[0]
    prefix = f"intent://firebase.auth/#Intent;scheme=recaptcha;package={ANDROID_PACKAGE};S.authType=verifyApp;S.eventId=ANDROIDEVT;S.link="
    assert url.startswith(prefix) and url.endswith(";B.encryptionEnabled=false;end;"), url


def test_page_is_localized(gh, driver, output_dir):
    driver.get(gh.url(handler_path(API_KEY, hl="de")))
    assert driver.find_element(By.TAG_NAME, "h1").text == "Ihr Gerät wird überprüft"
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de"
    wait_for(lambda: driver.find_element(By.ID, "verify-return").is_displayed())
    driver.save_screenshot(str(output_dir / "de.png"))


REFUSALS = [
    ("unregistered-scheme", handler_path(API_KEY, app_id="1:123456789:ios:ffffffffffffffff"),
     "The app's return address is not registered for this project, so this page cannot send you back to it."),
    ("unknown-bundle", handler_path(API_KEY, bundle="com.evil.app"),
     "The app that opened this page is not registered for this project."),
    ("bad-api-key", handler_path("not-a-key"), "This verification request names an unknown API key."),
    ("client-id-not-registered", handler_path(API_KEY, app_id=None, clientId="123-abc.apps.googleusercontent.com"),
     "The app's return address is not registered for this project, so this page cannot send you back to it."),
    ("wrong-auth-type", handler_path(API_KEY, authType="signInViaRedirect"), "This link is not a valid verification request."),
    ("missing-event", handler_path(API_KEY, event_id=None), "This verification request is incomplete. Return to the app and try again."),
    ("unknown-bundle-fr", handler_path(API_KEY, bundle="com.evil.app", hl="fr"),
     "L'application qui a ouvert cette page n'est pas enregistrée pour ce projet."),
]


@pytest.mark.parametrize("name,path,message", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refused_requests_render_an_error_page_that_redirects_nowhere(gh, driver, output_dir, name, path, message):
    r = gh.get(path)
    assert r.status_code == 400
    assert r.headers["Content-Type"].startswith("text/html")
    assert "pow.js" not in r.text and "firebaseauth" not in r.text and "Location" not in r.headers
    log = DevToolsLog(driver)
    driver.get(gh.url(path))
    assert driver.find_element(By.ID, "error-message").text == message
    assert not driver.find_elements(By.ID, "verify-app")
    time.sleep(0.5)
    assert not [u for u in (e["params"]["url"] for e in log.poll() if e["method"] == "Page.frameRequestedNavigation")
                if not u.startswith(gh.base)]
    driver.save_screenshot(str(output_dir / f"{name}.png"))


def test_callback_page_never_echoes_the_token(gh):
    ok = gh.get("/__/auth/callback", params={"authType": "verifyApp", "recaptchaToken": "ghat1.SECRETSECRET", "eventId": "E"})
    assert ok.status_code == 200 and "Verification finished" in ok.text and "SECRETSECRET" not in ok.text
    failed = gh.get("/__/auth/callback", params={"firebaseError": json.dumps({"code": "auth/x", "message": "m"}), "authType": "verifyApp"})
    assert failed.status_code == 200 and "Verification did not finish" in failed.text


def test_gatehouse_pow_token_api_for_hosted_pages(gh, driver):
    driver.get(gh.url(handler_path(API_KEY, event_id="TOKENAPIAA")))
    wait_for(lambda: driver.find_element(By.ID, "verify-return").is_displayed())
    driver.set_script_timeout(30)
    result = driver.execute_async_script("""
        var done = arguments[arguments.length - 1];
        Promise.all([GatehousePow.token(), GatehousePow.token({apiKey: arguments[0], app: 'web'})])
          .then(function (t) { done({tokens: t}); }, function (e) { done({error: e.message, code: e.code}); });
    """, API_KEY)
    assert "tokens" in result, result
    assert all(TOKEN_RE.fullmatch(t) for t in result["tokens"]) and len(set(result["tokens"])) == 2
    refused = driver.execute_async_script("""
        var done = arguments[arguments.length - 1];
        GatehousePow.token({apiKey: 'not-a-key'}).then(function (t) { done({token: t}); },
                                                     function (e) { done({code: e.code, status: e.status}); });
    """)
    assert refused == {"code": "API key not valid. Please pass a valid API key.", "status": 400}
