"""The short code beside every bound email link, through nginx: the API extension
(`emailCodeBinding` on sendOobCode, `accounts:signInWithEmailCode`) end to end, Firebase's own
fields and answers unchanged, and the hosted page's code form in headless Chromium: a code typed
on another browser than the one that asked is refused there and accepted where it was asked for,
in English and in French. Screenshots go to test-output/."""
import re
import time
import uuid
from email.utils import parseaddr
from urllib.parse import quote

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from conftest import Gatehouse, assert_envelope, chromium_driver, free_port
from email_support import SMTPSink, action_params, config, jwks_verify, link_from_mail, smtp_section

BINDING = "app-install-secret-" + uuid.uuid4().hex
OTHER_BINDING = "someone-elses-secret-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def sink():
    with SMTPSink(free_port()) as s:
        yield s


@pytest.fixture(scope="module")
def gh(tmp_path_factory, sink):
    g = Gatehouse(tmp_path_factory.mktemp("gh-email-code"), config=config(email_section=smtp_section(sink.port))).start()
    yield g
    g.stop()


def addr(tag):
    return f"{tag}-{uuid.uuid4().hex[:8]}@example.com"


def mails_for(sink, address, count=1, timeout=15.0):
    """Every message to `address` so far (at least `count`), in the order they arrived."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = [m for m in sink.wait(len(sink.messages) or 1, timeout=timeout) if parseaddr(str(m["To"]))[1] == address]
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} mail(s) for {address}")


def code_in(msg):
    """The code of a message's plain-text part (indented alone on its line), or None; the HTML
    part must show the same code, or none."""
    text = msg.get_body(preferencelist=("plain",)).get_content()
    html = msg.get_body(preferencelist=("html",)).get_content()
    m = re.search(r"^ {4}(\d{6})\r?$", text, re.M)
    if m:
        assert f">{m.group(1)}</span>" in html, html
    else:
        assert not re.search(r">\d{6}</span>", html)
    return m.group(1) if m else None


def send(gh, address, **body):
    payload = {"requestType": "EMAIL_SIGNIN", "email": address, "continueUrl": f"{gh.base}/__/auth/health"}
    payload.update(body)
    return gh.api("sendOobCode", payload)


def received(sink, address):
    """How many messages `address` has received so far."""
    if not sink.messages:
        return 0
    return sum(1 for m in sink.wait(len(sink.messages)) if parseaddr(str(m["To"]))[1] == address)


def ask_with_code(gh, sink, address, binding=BINDING):
    before = received(sink, address)
    r = send(gh, address, emailCodeBinding=binding)
    assert r.status_code == 200, r.text
    msg = mails_for(sink, address, count=before + 1)[-1]
    code = code_in(msg)
    assert code, msg.get_body(preferencelist=("plain",)).get_content()
    return code, action_params(link_from_mail(msg))["oobCode"]


def sign_in_code(gh, address, code, binding=BINDING, **extra):
    return gh.api("signInWithEmailCode", {"email": address, "code": code, "emailCodeBinding": binding, **extra})


# --- The API extension -------------------------------------------------------------------------

def test_send_answer_is_identical_with_and_without_the_binding(gh, sink):
    a = addr("same-answer")
    plain = send(gh, a)
    bound = send(gh, a, emailCodeBinding=BINDING)
    assert plain.status_code == bound.status_code == 200
    assert plain.json() == bound.json() == {"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": a}
    assert plain.headers["Content-Type"] == bound.headers["Content-Type"]
    first, second = mails_for(sink, a, count=2)
    # A Firebase request (no binding) gets the link alone, as before; the bound one the code beside it.
    assert code_in(first) is None
    code = code_in(second)
    text = second.get_body(preferencelist=("plain",)).get_content()
    assert "type this code" in text and "only in the browser or app that asked for it" in text
    assert text.index(link_from_mail(second)) < text.index(code), "the code comes right after the link"


def test_the_code_signs_in_like_the_link_and_uses_it(gh, sink):
    a = addr("api")
    code, oob = ask_with_code(gh, sink, a)
    r = sign_in_code(gh, a.upper(), code)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "identitytoolkit#EmailLinkSigninResponse"
    assert set(body) == {"kind", "idToken", "refreshToken", "expiresIn", "email", "localId", "isNewUser"}
    assert body["email"] == a and body["isNewUser"] is True
    claims = jwks_verify(gh, body["idToken"])
    assert claims["email"] == a and claims["email_verified"] is True and claims["firebase"]["sign_in_provider"] == "password"
    # One sign-in per request: the code again, and the link, are used.
    assert_envelope(sign_in_code(gh, a, code), 400, "SESSION_EXPIRED")
    assert_envelope(gh.api("signInWithEmailLink", {"email": a, "oobCode": oob}), 400, "INVALID_OOB_CODE")
    # The refresh token works as any other.
    t = gh.post("/securetoken.googleapis.com/v1/token", params={"key": "test-api-key"},
                data={"grant_type": "refresh_token", "refresh_token": body["refreshToken"]})
    assert t.status_code == 200, t.text
    # A second sign-in of the same address by code is the same account.
    again, _ = ask_with_code(gh, sink, a)
    r2 = sign_in_code(gh, a, again)
    assert r2.status_code == 200, r2.text
    assert r2.json()["localId"] == body["localId"] and r2.json()["isNewUser"] is False


def test_the_link_used_first_makes_the_code_dead(gh, sink):
    a = addr("link-first")
    code, oob = ask_with_code(gh, sink, a)
    assert gh.api("signInWithEmailLink", {"email": a, "oobCode": oob}).status_code == 200
    assert_envelope(sign_in_code(gh, a, code), 400, "SESSION_EXPIRED : No code of this address can be used")


def test_only_the_binding_that_asked(gh, sink):
    a = addr("binding")
    code, _ = ask_with_code(gh, sink, a)
    assert_envelope(sign_in_code(gh, a, code, binding=OTHER_BINDING), 400, "CREDENTIAL_MISMATCH : The code was asked for on another")
    assert_envelope(gh.api("signInWithEmailCode", {"email": a, "code": code}), 400, "INVALID_ARGUMENT : emailCodeBinding is required")
    assert_envelope(sign_in_code(gh, a, "12345x"), 400, "INVALID_CODE")
    assert sign_in_code(gh, a, code).status_code == 200


def test_five_tries_per_code_then_dead(gh, sink):
    a = addr("tries")
    code, oob = ask_with_code(gh, sink, a)
    wrong = "000000" if code != "000000" else "111111"
    for _ in range(5):
        assert_envelope(sign_in_code(gh, a, wrong), 400, "INVALID_CODE")
    assert_envelope(sign_in_code(gh, a, code), 400, "TOO_MANY_ATTEMPTS_TRY_LATER : Too many wrong codes")
    # The link itself keeps working.
    assert gh.api("signInWithEmailLink", {"email": a, "oobCode": oob}).status_code == 200


def test_bad_bindings_and_missing_fields(gh):
    a = addr("bad")
    assert_envelope(send(gh, a, emailCodeBinding="short"), 400, "INVALID_ARGUMENT : emailCodeBinding must be 16 to 256")
    assert_envelope(send(gh, a, emailCodeBinding="x" * 257), 400, "INVALID_ARGUMENT")
    assert_envelope(gh.admin("/accounts:sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": a, "returnOobLink": True,
                                                       "emailCodeBinding": BINDING}), 400, "INVALID_ARGUMENT : emailCodeBinding is only for")
    assert_envelope(sign_in_code(gh, "", "123456"), 400, "MISSING_EMAIL")
    assert_envelope(sign_in_code(gh, a, ""), 400, "MISSING_CODE")
    assert_envelope(sign_in_code(gh, a, "123456"), 400, "SESSION_EXPIRED")


def test_firebase_link_sign_in_unchanged_by_a_code(gh, sink):
    """A bound request's link answers signInWithEmailLink exactly as a plain one's."""
    a, b = addr("fb-plain"), addr("fb-bound")
    assert send(gh, a).status_code == 200
    plain_oob = action_params(link_from_mail(mails_for(sink, a)[-1]))["oobCode"]
    _, bound_oob = ask_with_code(gh, sink, b)
    plain = gh.api("signInWithEmailLink", {"email": a, "oobCode": plain_oob}).json()
    bound = gh.api("signInWithEmailLink", {"email": b, "oobCode": bound_oob}).json()
    assert set(plain) == set(bound) and plain["kind"] == bound["kind"]
    assert plain["isNewUser"] is bound["isNewUser"] is True


# --- The hosted page in Chromium ---------------------------------------------------------------

def wait_for(d, by, what, timeout=10):
    return WebDriverWait(d, timeout).until(EC.presence_of_element_located((by, what)))


def shot(d, output_dir, name):
    d.save_screenshot(str(output_dir / f"{name}.png"))


def continue_url(gh):
    return gh.url("/__/auth/health?from=email-code")


def type_code(d, code):
    field = wait_for(d, By.ID, "code")
    field.clear()
    field.send_keys(code)
    d.find_element(By.ID, "code-submit").click()


WORDS = {
    "en": {"browser": "asked for in another browser", "wrong": "That code is not right", "mail": "type this code"},
    "fr": {"browser": "demandé dans un autre navigateur", "wrong": "Ce code n’est pas le bon", "mail": "saisissez ce code"},
}


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_code_on_another_browser_is_refused_there_and_accepted_where_asked(gh, sink, browser, output_dir, lang):
    a = addr(f"page-{lang}")
    words = WORDS[lang]
    browser.get(gh.url(f"/__/auth/email?hl={lang}&continueUrl={quote(continue_url(gh), safe='')}"))
    wait_for(browser, By.ID, "email").send_keys(a)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(browser, By.ID, "code-form")
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == lang
    shot(browser, output_dir, "1-asked")
    msg = mails_for(sink, a)[-1]
    code = code_in(msg)
    assert code and words["mail"] in msg.get_body(preferencelist=("plain",)).get_content()
    # The HTML part as a mail reader shows it.
    (output_dir / "mail.html").write_text(msg.get_body(preferencelist=("html",)).get_content())
    viewer = chromium_driver(width=620)
    try:
        viewer.get((output_dir / "mail.html").as_uri())
        shot(viewer, output_dir, "0-mail")
    finally:
        viewer.quit()

    # Another browser (no pending cookie of the request) opens the code form and types the right code.
    other = chromium_driver()
    try:
        other.get(gh.url(f"/__/auth/email/code?hl={lang}&email={quote(a)}&continueUrl={quote(continue_url(gh), safe='')}"))
        type_code(other, code)
        error = wait_for(other, By.ID, "code-error")
        assert words["browser"] in error.text
        assert other.find_element(By.ID, "code").get_attribute("aria-invalid") == "true"
        assert other.get_cookie("__Host-gatehouse") is None, "not signed in there"
        shot(other, output_dir, "2-other-browser-refused")
    finally:
        other.quit()

    # Where it was asked: a wrong code first, then the right one signs in.
    type_code(browser, "000000" if code != "000000" else "111111")
    assert words["wrong"] in wait_for(browser, By.ID, "code-error").text
    shot(browser, output_dir, "3-wrong-code")
    type_code(browser, code)
    WebDriverWait(browser, 10).until(lambda d: d.current_url.startswith(continue_url(gh)))
    cookie = browser.get_cookie("__Host-gatehouse")
    assert cookie and cookie["httpOnly"] and cookie["secure"]
    claims = jwks_verify(gh, cookie["value"], issuer="https://session.firebase.google.com/demo-gatehouse")
    assert claims["email"] == a and claims["firebase"]["sign_in_provider"] == "password"
    assert browser.get_cookie("__Host-gh_email") is None, "the pending cookie is cleared"

    # The code signed in once, and took its link with it.
    browser.get(link_from_mail(msg))
    assert wait_for(browser, By.ID, "problem").get_attribute("data-problem") == "used"
    shot(browser, output_dir, "4-link-used")


def test_code_form_refusals_on_the_page(gh, sink, browser, output_dir):
    """Used code, a code form without a CSRF token, and a bad address: clear answers, no sign-in."""
    a = addr("page-used")
    browser.get(gh.url(f"/__/auth/email?hl=de&continueUrl={quote(continue_url(gh), safe='')}"))
    wait_for(browser, By.ID, "email").send_keys(a)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(browser, By.ID, "code-form")
    msg = mails_for(sink, a)[-1]
    # The link used first (here, by the API): the code form says so.
    oob = action_params(link_from_mail(msg))["oobCode"]
    assert gh.api("signInWithEmailLink", {"email": a, "oobCode": oob}).status_code == 200
    type_code(browser, code_in(msg))
    assert "kann nicht mehr verwendet werden" in wait_for(browser, By.ID, "code-error").text
    shot(browser, output_dir, "used-de")
    # No CSRF token: refused.
    r = requests.post(gh.url("/__/auth/email/code"), data={"email": a, "code": "123456"}, timeout=10, allow_redirects=False)
    assert r.status_code == 403
    # A malformed address on the GET form goes back to the request form.
    browser.get(gh.url("/__/auth/email/code?hl=pt&email=not-an-address"))
    assert "endereço de e-mail válido" in wait_for(browser, By.ID, "email-error").text
