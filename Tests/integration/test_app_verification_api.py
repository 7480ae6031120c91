"""App verification endpoints through nginx: difficulty and limits, the handler parameters'
redirect, recaptchaParams/recaptchaConfig, external verifiers against a local fake siteverify,
and configuration checks."""
import json
import subprocess

import pytest

from appverify_helpers import DEMO_APP_ID, DEMO_BUNDLE, DEMO_SCHEME, TOKEN_RE, FakeSiteverify, handler_path, ios_parse, solve
from conftest import assert_envelope, binary


def project(**app_verification):
    p = {"id": "demo-gatehouse", "api_keys": ["good-key"]}
    if app_verification:
        p["app_verification"] = app_verification
    return {"projects": [p]}


@pytest.fixture
def fake_siteverify():
    fake = FakeSiteverify({
        "good": {"success": True, "hostname": "127.0.0.1", "challenge_ts": "2026-01-01T00:00:00Z"},
        "good2": {"success": True, "hostname": "127.0.0.1"},
        "elsewhere": {"success": True, "hostname": "evil.example"},
        "low": {"success": True, "hostname": "127.0.0.1", "score": 0.2, "action": "verify"},
    })
    yield fake
    fake.close()


def test_difficulty_rises_with_the_callers_rate_and_is_capped(make_gatehouse):
    g = make_gatehouse(project(min_difficulty=1000, max_difficulty=5000, free_challenges_per_ip=2))
    sizes = [g.get("/__/auth/challenge").json()["maxnumber"] for _ in range(9)]
    assert sizes == [1000, 1000, 2000, 2000, 4000, 4000, 5000, 5000, 5000]


def test_difficulty_rises_per_api_key(make_gatehouse):
    g = make_gatehouse(project(min_difficulty=1000, free_challenges_per_ip=1000, free_challenges_per_key=3))
    sizes = [g.get("/__/auth/challenge", params={"apiKey": "good-key"}).json()["maxnumber"] for _ in range(4)]
    assert sizes == [1000, 1000, 1000, 2000]
    # Without a key the caller is judged by IP alone.
    assert g.get("/__/auth/challenge").json()["maxnumber"] == 1000


def test_redemptions_per_ip_are_limited(make_gatehouse):
    g = make_gatehouse(project(min_difficulty=1000, redemptions_per_ip=2))
    for _ in range(2):
        assert_envelope(g.post("/__/auth/challenge", json={"payload": "bogus"}), 400, "CAPTCHA_CHECK_FAILED")
    payload = solve(g.get("/__/auth/challenge").json())
    assert_envelope(g.post("/__/auth/challenge", json={"payload": payload}), 400, "TOO_MANY_ATTEMPTS_TRY_LATER")


def test_unknown_api_key_is_refused(make_gatehouse):
    g = make_gatehouse(project())
    r = g.get("/__/auth/challenge", params={"apiKey": "wrong"})
    assert_envelope(r, 400, "API key not valid")
    assert_envelope(g.post("/__/auth/challenge", json={"payload": "x", "apiKey": "wrong"}), 400, "API key not valid")


def test_handler_parameters_give_the_server_computed_redirect(gatehouse):
    c = gatehouse.get("/__/auth/challenge", params={"apiKey": "test-api-key"}).json()
    body = {"payload": solve(c), "apiKey": "test-api-key", "eventId": "QWERTYUIOP", "ibi": DEMO_BUNDLE, "appId": DEMO_APP_ID}
    r = gatehouse.post("/__/auth/challenge", json=body)
    assert r.status_code == 200, r.text
    token, redirect = r.json()["token"], r.json()["redirect"]
    items = ios_parse(redirect, DEMO_SCHEME, "QWERTYUIOP")
    assert items["recaptchaToken"] == token and TOKEN_RE.fullmatch(token)
    assert redirect.startswith(DEMO_SCHEME + "://firebaseauth/link?deep_link_id=https%3A%2F%2F127.0.0.1%3A")


@pytest.mark.parametrize("params,detail", [
    ({"ibi": DEMO_BUNDLE, "appId": "1:123456789:ios:0000000000000000"}, "The callback scheme is not registered for this app."),
    ({"ibi": "com.evil.app", "appId": DEMO_APP_ID}, "The app is not registered for this project."),
    ({"ibi": DEMO_BUNDLE}, "clientId or appId is required."),
    ({"apn": "com.example.unknown"}, "The app is not registered for this project."),
])
def test_handler_parameters_are_checked_before_any_work(gatehouse, params, detail):
    body = dict({"payload": "not even looked at", "eventId": "QWERTYUIOP"}, **params)
    assert_envelope(gatehouse.post("/__/auth/challenge", json=body), 400, "INVALID_ARGUMENT : " + detail)


def test_plain_redemption_binds_web_or_a_registered_app(gatehouse):
    c = gatehouse.get("/__/auth/challenge").json()
    assert_envelope(gatehouse.post("/__/auth/challenge", json={"payload": solve(c), "app": "com.unknown"}), 400, "INVALID_ARGUMENT")
    r = gatehouse.post("/__/auth/challenge", json={"payload": solve(c), "app": DEMO_BUNDLE})
    assert r.status_code == 200, r.text


def test_recaptcha_endpoints_answer_off_for_the_proof_of_work(gatehouse):
    for path in ["/identitytoolkit.googleapis.com/v2/recaptchaConfig", "/v2/recaptchaConfig"]:
        r = gatehouse.get(path, params={"key": "test-api-key", "clientType": "CLIENT_TYPE_IOS", "version": "RECAPTCHA_ENTERPRISE"})
        assert r.status_code == 200, r.text
        body = r.json()
        # Four parts (iOS splits it), naming what it is; both providers off, so no client runs reCAPTCHA.
        assert body["recaptchaKey"] == "projects/demo-gatehouse/keys/gatehouse-proof-of-work"
        assert body["recaptchaEnforcementState"] == [
            {"provider": "EMAIL_PASSWORD_PROVIDER", "enforcementState": "OFF"},
            {"provider": "PHONE_PROVIDER", "enforcementState": "OFF"},
        ]
    for path in ["/identitytoolkit.googleapis.com/v1/recaptchaParams", "/v1/recaptchaParams",
                 "/www.googleapis.com/identitytoolkit/v3/relyingparty/getRecaptchaParam"]:
        r = gatehouse.get(path, params={"key": "test-api-key"})
        # Documented placeholders (docs/configuration-app-verification.md), as the emulator answers.
        assert r.json() == {"kind": "identitytoolkit#GetRecaptchaParamResponse",
                            "recaptchaSiteKey": "gatehouse-no-recaptcha-site-key",
                            "recaptchaStoken": "gatehouse-no-recaptcha-stoken"}, (path, r.text)
    assert_envelope(gatehouse.get("/v2/recaptchaConfig"), 403, "The request is missing a valid API key.")


def test_recaptcha_endpoints_agree_when_recaptcha_is_configured(make_gatehouse):
    g = make_gatehouse(project(provider="recaptcha", site_key="6LcSITEKEY", secret="s", enforcement="AUDIT"))
    config = g.get("/v2/recaptchaConfig", params={"key": "good-key"}).json()
    assert config["recaptchaKey"] == "projects/demo-gatehouse/keys/6LcSITEKEY"
    assert len(config["recaptchaKey"].split("/")) == 4
    assert {"provider": "PHONE_PROVIDER", "enforcementState": "AUDIT"} in config["recaptchaEnforcementState"]
    params = g.get("/v1/recaptchaParams", params={"key": "good-key"}).json()
    assert params["recaptchaSiteKey"] == "6LcSITEKEY"
    assert params["recaptchaStoken"] == "gatehouse-no-recaptcha-stoken"
    assert g.get("/__/auth/challenge").json() == {"provider": "recaptcha", "siteKey": "6LcSITEKEY", "version": "v2"}


def test_turnstile_replaces_the_proof_of_work(make_gatehouse, fake_siteverify):
    g = make_gatehouse(project(provider="turnstile", site_key="0xSITE", secret="turnstile-secret", verify_url=fake_siteverify.url))
    assert g.get("/__/auth/challenge", params={"apiKey": "good-key"}).json() == {"provider": "turnstile", "siteKey": "0xSITE"}
    r = g.post("/__/auth/challenge", json={"response": "good", "apiKey": "good-key"})
    assert r.status_code == 200, r.text
    assert TOKEN_RE.fullmatch(r.json()["token"])
    sent = fake_siteverify.requests[-1]
    assert sent["content_type"] == "application/x-www-form-urlencoded"
    assert sent["form"] == {"secret": "turnstile-secret", "response": "good", "remoteip": "127.0.0.1"}
    assert_envelope(g.post("/__/auth/challenge", json={"response": "good", "apiKey": "good-key"}), 400,
                    "CAPTCHA_CHECK_FAILED : External verification failed - REPLAYED")
    assert_envelope(g.post("/__/auth/challenge", json={"response": "forged"}), 400,
                    "CAPTCHA_CHECK_FAILED : External verification failed - INVALID_INPUT_RESPONSE")
    assert_envelope(g.post("/__/auth/challenge", json={"response": "elsewhere"}), 400,
                    "CAPTCHA_CHECK_FAILED : External verification failed - HOSTNAME")
    # A proof-of-work payload is no way around the configured verifier.
    assert_envelope(g.post("/__/auth/challenge", json={"payload": "eyJ9"}), 400, "MISSING_APP_CREDENTIAL")


def test_recaptcha_v3_score_and_hcaptcha_site_key(make_gatehouse, fake_siteverify):
    g = make_gatehouse(project(provider="recaptcha", recaptcha_version="v3", min_score=0.5, site_key="6Lv3", secret="rc",
                               verify_url=fake_siteverify.url))
    assert_envelope(g.post("/__/auth/challenge", json={"response": "low"}), 400,
                    "CAPTCHA_CHECK_FAILED : External verification failed - LOW_SCORE")
    assert "sitekey" not in fake_siteverify.requests[-1]["form"]
    h = make_gatehouse(project(provider="hcaptcha", site_key="h-site", secret="h-secret", verify_url=fake_siteverify.url))
    assert h.post("/__/auth/challenge", json={"response": "good2"}).status_code == 200
    assert fake_siteverify.requests[-1]["form"]["sitekey"] == "h-site"


def test_unreachable_verifier_fails_closed(make_gatehouse, fake_siteverify):
    url = fake_siteverify.url
    fake_siteverify.close()
    g = make_gatehouse(project(provider="hcaptcha", site_key="h", secret="s", verify_url=url))
    r = g.post("/__/auth/challenge", json={"response": "good"})
    assert_envelope(r, 500, "INTERNAL")
    assert "siteverify" in (g.data / "gatehouse.log").read_text()


def test_configuration_problems_are_reported(tmp_path):
    bad = project(provider="turnstile", min_difficulty=10, max_difficulty=2000, verify_url="ftp://x", enforcement="ENFORCE", colour="red")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    out = subprocess.run([str(binary()), "config", "check", "--config", str(path)], capture_output=True, text=True)
    assert out.returncode == 1
    for needle in ["app_verification.colour: unknown key", "app_verification.min_difficulty: expected an integer",
                   "app_verification.site_key: required", "app_verification.secret: required",
                   "app_verification.verify_url: expected an https:// URL", "app_verification.enforcement: only meaningful"]:
        assert needle in out.stdout, out.stdout


def test_verification_page_allows_only_the_configured_widget(make_gatehouse):
    g = make_gatehouse(project(provider="turnstile", site_key="0xSITE", secret="s"))
    r = g.get(handler_path("good-key"))
    assert r.status_code == 200, r.text
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self' https://challenges.cloudflare.com;" in csp
    assert "frame-src https://challenges.cloudflare.com;" in csp
    assert "google.com" not in csp and "hcaptcha" not in csp and "unsafe-inline" not in csp
    assert 'data-provider="turnstile"' in r.text and 'data-site-key="0xSITE"' in r.text and 'id="verify-widget"' in r.text
    # The proof-of-work page keeps the strict default policy and has no widget slot.
    pow_page = make_gatehouse(project()).get(handler_path("good-key"))
    assert "cloudflare" not in pow_page.headers["Content-Security-Policy"] and 'id="verify-widget"' not in pow_page.text
