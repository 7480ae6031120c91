"""Prometheus metrics at /__/auth/metrics through the real nginx and responder: values move as
flows run (scrape, act, scrape), every line parses as the text exposition format, labels stay
within their closed sets, and the shipped nginx snippet refuses the path to other addresses."""
import http.client
import re

import pytest
import requests

from conftest import Gatehouse
from phone_helpers import dev_config
from session_support import get_with_cookie, session_cookie

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*)?\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$')


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("metrics"), config=dev_config()).start()
    yield g
    g.stop()


def scrape(gh) -> dict:
    """{(name, frozenset(labels)): value} of one scrape; asserts every line is well-formed."""
    r = gh.get("/__/auth/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for line in r.text.splitlines():
        if not line or line.startswith("#"):
            assert not line or line.startswith("# TYPE ") or line.startswith("# HELP "), line
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        samples[(m.group(1), labels)] = float(m.group(4))
    return samples


def value(samples, name, **labels) -> float:
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))


def phone_sign_in(gh, number):
    r = gh.api("sendVerificationCode", {"phoneNumber": number})
    assert r.status_code == 200, r.text
    session = r.json()["sessionInfo"]
    codes = gh.get("/emulator/v1/projects/demo-gatehouse/verificationCodes").json()["verificationCodes"]
    code = next(c["code"] for c in codes if c["sessionInfo"] == session)
    wrong = "000000" if code != "000000" else "111111"
    assert gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": wrong}).json()["error"]["message"] == "INVALID_CODE"
    r = gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code})
    assert r.status_code == 200, r.text
    return r.json()


def test_values_move_as_flows_run(gh):
    before = scrape(gh)
    body = phone_sign_in(gh, "+33612345601")
    assert get_with_cookie(gh, "/demo/", session_cookie(gh, body["idToken"])).status_code == 200
    assert gh.get("/demo/").status_code == 302
    assert gh.get("/__/auth/no-such-page").status_code == 404
    after = scrape(gh)

    send = "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode"
    sign_in = "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber"
    delta = lambda name, **l: value(after, name, **l) - value(before, name, **l)  # noqa: E731
    assert delta("gatehouse_http_requests_total", route=send, status="200") == 1
    assert delta("gatehouse_http_requests_total", route=sign_in, status="200") == 1
    assert delta("gatehouse_http_requests_total", route=sign_in, status="400") == 1
    assert delta("gatehouse_http_requests_total", route="unmatched", status="404") == 1
    assert delta("gatehouse_http_request_duration_seconds_count", route=send) == 1
    assert delta("gatehouse_flows_total", flow="phone", step="start", outcome="ok") == 1
    assert delta("gatehouse_flows_total", flow="phone", step="complete", outcome="ok") == 1
    assert delta("gatehouse_flows_total", flow="phone", step="complete", outcome="INVALID_CODE") == 1
    assert delta("gatehouse_session_verifications_total", result="ok") == 1
    assert delta("gatehouse_session_verifications_total", result="missing") == 1
    # The dev outbox delivered the SMS (the worker may still be on it: wait for the count).
    for _ in range(50):
        if value(scrape(gh), "gatehouse_outbox_deliveries_total", channel="sms", result="sent") > value(before, "gatehouse_outbox_deliveries_total", channel="sms", result="sent"):
            break
        __import__("time").sleep(0.1)
    else:
        pytest.fail("no SMS delivery counted")
    final = scrape(gh)
    assert value(final, "gatehouse_outbox_depth", channel="sms") == 0
    assert 0 <= value(final, "gatehouse_signing_key_age_seconds") < 3600
    # Labels come from closed sets: no request text (the unknown path) ever becomes a label.
    assert not any("no-such-page" in v for (_, ls) in final for _, v in ls)


def test_rate_limits_are_counted(make_gatehouse):
    g = make_gatehouse(config=dev_config(verify_attempts_per_ip_per_5min=3))
    before = scrape(g)
    messages = [g.api("signInWithPhoneNumber", {"sessionInfo": "ghs1.x", "code": "123456"}).json()["error"]["message"] for _ in range(5)]
    after = scrape(g)
    assert messages == ["INVALID_SESSION_INFO"] * 3 + ["TOO_MANY_ATTEMPTS_TRY_LATER"] * 2
    route = "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber"
    assert value(after, "gatehouse_rate_limited_total", route=route) - value(before, "gatehouse_rate_limited_total", route=route) == 2
    assert value(after, "gatehouse_flows_total", flow="phone", outcome="TOO_MANY_ATTEMPTS_TRY_LATER") == 2


def test_metrics_path_is_internal_in_the_shipped_nginx_config(gh):
    # From another address (a socket bound to 127.0.0.2, reaching the same listener): refused by nginx.
    conn = http.client.HTTPConnection("127.0.0.1", gh.port, timeout=10, source_address=("127.0.0.2", 0))
    conn.request("GET", "/__/auth/metrics")
    resp = conn.getresponse()
    assert resp.status == 403 and b"gatehouse_" not in resp.read()
    conn.close()
    # The health path stays public from there.
    conn = http.client.HTTPConnection("127.0.0.1", gh.port, timeout=10, source_address=("127.0.0.2", 0))
    conn.request("GET", "/__/auth/health")
    assert conn.getresponse().status == 200
    conn.close()
    assert requests.get(gh.url("/__/auth/metrics"), timeout=10).status_code == 200


def test_dashboard_and_alert_rules_name_only_metrics_that_exist(gh):
    """deploy/monitoring: every metric the Grafana dashboard and the alert rules query is one
    a scrape answers (after a flow has run, so the counters exist)."""
    from conftest import ROOT
    phone_sign_in(gh, "+33612345603")
    names = {n for (n, _) in scrape(gh)}
    text = (ROOT / "deploy/monitoring/grafana-dashboard.json").read_text() + (ROOT / "deploy/monitoring/prometheus-alerts.yml").read_text()
    used = set(re.findall(r"\bgatehouse_[a-z_]+", text))
    assert used, "no metric found in deploy/monitoring"
    # Counters that only move on rare events (holds, refusals, dead messages) are checked by name in the source.
    source = (ROOT / "Sources/AuthEngine/Telemetry/Telemetry.swift").read_text()
    for name in used:
        assert name in names or name.removesuffix("_bucket") in names or f'"{name}"' in source, name
