"""Codes that arrive, through real nginx: Twilio's status callbacks (signed by the `twilio`
library's own validator in a fake Twilio) moving each message's delivery state; forged, replayed,
unknown and cross-project reports refused; the webhook gateway's signed reports; the automatic
fallback to WhatsApp and a call after a failure receipt and after the timeout; and a second
provider after 5xx answers and timeouts, with no message sent by both."""
import hashlib
import hmac
import json
import time
import urllib.parse

import pytest

from conftest import Gatehouse
from fake_twilio import fake_twilio  # noqa: F401 (the fixture)
from phone_helpers import dev_config, outbox, sql, wait_outbox

WEBHOOK_SECRET = "webhook-secret-0123456789abcdef"


@pytest.fixture
def stack(tmp_path_factory):
    """A dev-mode Gatehouse whose SMS provider is `sms(base_url_of_gatehouse)`; stopped at the end."""
    started = []

    def make(sms, projects=None, **phone):
        g = Gatehouse(tmp_path_factory.mktemp("receipts"), config={})
        config = dev_config(**phone)
        config["sms"] = sms(g.base)
        if projects:
            config["projects"] += projects
        g.config_path.write_text(json.dumps(config, indent=2))
        started.append(g)
        return g.start()

    yield make
    for g in started:
        g.stop()


def twilio(fake, name=None, **extra):
    def section(base):
        s = {"provider": "twilio", "account_sid": fake.account_sid, "auth_token": fake.auth_token, "from": "+15005550006",
             "base_url": fake.base_url, "status_callback_url": base + "/__/auth/delivery/twilio", "timeout_seconds": 2,
             "whatsapp_from": "+15005550007", "whatsapp_content_sid": "HX0123456789", "voice_from": "+15005550008"}
        if name:
            s["name"] = name
        s.update(extra)
        return s
    return section


def send(g, number):
    r = g.api("sendVerificationCode", {"phoneNumber": number})
    assert r.status_code == 200, r.text
    return r.json()["sessionInfo"]


def row(g, message_id):
    return sql(g, "SELECT * FROM outbox WHERE id = ?", message_id)[0]


def wait_row(g, message_id, predicate, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = row(g, message_id)
        if predicate(r):
            return r
        time.sleep(0.05)
    raise AssertionError(dict(row(g, message_id)))


def callback_query(m):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(m["status_callback"]).query))


def test_status_callbacks_move_the_message_forward(stack, fake_twilio):
    fake = fake_twilio()
    g = stack(twilio(fake))
    send(g, "+33612340001")
    m = fake.wait_for(1)[0]
    q = callback_query(m)
    assert m["kind"] == "sms" and q["p"] == "demo-gatehouse" and q["n"] == "twilio"
    assert m["status_callback"].startswith(g.base + "/__/auth/delivery/twilio?")
    answers = [c["answer"] for c in fake.wait_callbacks(2)]
    assert answers == [200, 200], answers
    r = wait_row(g, int(q["m"]), lambda r: r["delivery"] == "delivered")
    assert r["provider"] == "twilio" and r["provider_message_id"] == m["sid"] and r["delivery_at"] and r["region"] == "FR"
    # Replayed: the same signed report again changes nothing.
    assert fake.send_callback(m, "delivered") == 409
    assert fake.send_callback(m, "sent") == 409, "a stale report never moves it back"
    # Metrics count the receipts by channel, provider, region and state.
    text = g.get("/__/auth/metrics").text
    assert 'gatehouse_delivery_receipts_total{channel="sms",provider="twilio",region="FR",state="delivered"} 1' in text


def test_each_report_moves_the_message_one_step(stack, fake_twilio):
    """A text's and a call's reports one by one, each visible in the store: a step back or the same
    step again is refused (409), the provider's first 'sent' is taken once."""
    fake = fake_twilio()
    g = stack(twilio(fake), channels=["sms", "voice"], fallback_after_seconds=600)
    fake.default_outcome = []
    send(g, "+33612340006")
    sms = fake.wait_for(1)[0]
    mid = int(callback_query(sms)["m"])
    r = row(g, mid)
    assert (r["delivery"], r["provider"], r["provider_message_id"], r["delivery_at"]) == ("sent", "twilio", sms["sid"], None)
    assert fake.send_callback(sms, "queued") == 409
    assert fake.send_callback(sms, "sent") == 200
    first = row(g, mid)["delivery_at"]
    assert row(g, mid)["delivery"] == "sent" and first
    assert fake.send_callback(sms, "sending") == 409
    assert fake.send_callback(sms, "undelivered", "30005") == 200
    r = row(g, mid)
    assert (r["delivery"], r["delivery_error"]) == ("undelivered", "30005") and r["delivery_at"] >= first
    assert fake.send_callback(sms, "delivered") == 409, "an end is final"
    assert fake.send_callback(sms, "receiving") == 400, "a status Twilio's messages never end in"
    # The undelivered text falls back to a call; the call's own statuses.
    call = fake.wait_for(1, kind="voice")[0]
    cid = int(callback_query(call)["m"])
    assert cid != mid and row(g, cid)["delivery"] == "sent" and row(g, cid)["channel"] == "voice"
    assert fake.send_callback(call, "initiated") == 409
    assert fake.send_callback(call, "ringing") == 200
    assert fake.send_callback(call, "in-progress") == 409
    assert fake.send_callback(call, "completed") == 200
    assert row(g, cid)["delivery"] == "delivered" and row(g, cid)["delivery_error"] is None
    assert fake.send_callback(call, "busy") == 409
    text = g.get("/__/auth/metrics").text
    for line in ['{channel="sms",provider="twilio",region="FR",state="sent"} 1', '{channel="sms",provider="twilio",region="FR",state="undelivered"} 1',
                 '{channel="voice",provider="twilio",region="FR",state="sent"} 1', '{channel="voice",provider="twilio",region="FR",state="delivered"} 1']:
        assert "gatehouse_delivery_receipts_total" + line in text, line


def test_reports_past_the_client_budget_are_refused(stack, fake_twilio):
    """600 refused reports a minute per client network; then everything from it is refused. A
    provider's accepted reports count nothing (the two above)."""
    import requests
    fake = fake_twilio()
    g = stack(twilio(fake))
    send(g, "+33612340007")
    m = fake.wait_for(1)[0]
    fake.wait_callbacks(2)
    with requests.Session() as s:
        answers = [s.post(m["status_callback"], data={"MessageStatus": "delivered"}, headers={"X-Twilio-Signature": "AAAA"}).status_code
                   for _ in range(600)]
    assert set(answers) == {403}, set(answers)
    r = g.post("/__/auth/delivery/twilio?" + urllib.parse.urlencode(callback_query(m)), data={})
    assert r.status_code == 429 and r.json()["error"]["status"] == "RESOURCE_EXHAUSTED", r.text
    assert fake.send_callback(m, "delivered") == 429, "even a genuine report waits for the next minute"


def test_forged_wrong_url_unknown_and_cross_project_reports_are_refused(stack, fake_twilio):
    fake = fake_twilio()
    other = {"id": "other-project", "test_phone_numbers": {}, "phone": {"verify_attempts_per_ip_per_5min": 10000}}
    g = stack(twilio(fake), projects=[other])
    fake.default_outcome = []
    send(g, "+33612340002")
    m = fake.wait_for(1)[0]
    q = callback_query(m)
    # Unsigned, wrongly signed, signed with another token.
    assert fake.send_callback(m, "delivered", signature="") == 403
    assert fake.send_callback(m, "delivered", signature="AAAA") == 403
    params = fake.callback_params(m, "delivered")
    from twilio.request_validator import RequestValidator
    assert fake.send_callback(m, "delivered", signature=RequestValidator("another-token").compute_signature(m["status_callback"], params)) == 403
    # Signed over another URL than the configured one (a Host the attacker chose): refused.
    moved = m["status_callback"].replace("http://127.0.0.1", "http://localhost")
    assert fake.send_callback(m, "delivered", signature=fake.validator.compute_signature(moved, params)) == 403
    # A body changed after signing.
    forged = dict(params, MessageStatus="failed")
    assert fake.send_callback(m, "failed", params=forged, signature=fake.validator.compute_signature(m["status_callback"], params)) == 403
    base = m["status_callback"].split("?")[0]
    # Validly signed, but for a message that does not exist, or of another project, or another provider.
    for query in [{"p": "demo-gatehouse", "m": "999999", "n": "twilio"}, {"p": "other-project", "m": q["m"], "n": "twilio"}]:
        url = base + "?" + urllib.parse.urlencode(query)
        assert fake.send_callback(m, "delivered", url=url) == 404, query
    assert fake.send_callback(m, "delivered", url=base + "?" + urllib.parse.urlencode(dict(q, n="elsewhere"))) == 403
    # Another message's id under this message's SID: the provider id must match.
    assert fake.send_callback(dict(m, sid="SM" + "f" * 32), "delivered") == 404
    assert row(g, int(q["m"]))["delivery"] == "sent"
    # The genuine report still works.
    assert fake.send_callback(m, "delivered") == 200


def test_undelivered_falls_back_to_whatsapp_then_a_call(stack, fake_twilio):
    fake = fake_twilio()
    g = stack(twilio(fake), channels=["sms", "whatsapp", "voice"], fallback_after_seconds=600)
    number = "+33612340003"
    fake.outcomes[number] = ["sent", ("undelivered", "30003")]
    session = send(g, number)
    sms, whatsapp = fake.wait_for(2)[:2]
    assert sms["kind"] == "sms" and whatsapp["kind"] == "whatsapp"
    assert whatsapp["from"] == "whatsapp:+15005550007" and whatsapp["content_sid"] == "HX0123456789"
    code = json.loads(whatsapp["content_variables"])["1"]
    first = row(g, int(callback_query(sms)["m"]))
    assert first["delivery"] == "undelivered" and first["delivery_error"] == "30003"
    # WhatsApp fails too: a call says the new code.
    fake.send_callback(whatsapp, "failed", "63016")
    call = fake.wait_for(3)[2]
    assert call["kind"] == "voice" and call["from"] == "+15005550008" and call["form"]["StatusCallbackEvent"]
    said = call["twiml"]
    assert said.startswith("<Response><Say language=\"en-US\">") and said.count("<Say") == 2 and "<Pause" in said
    import re
    spoken = re.search(r"(\d), (\d), (\d), (\d), (\d), (\d)", said)
    assert spoken, said
    new_code = spoken.groups()
    assert "".join(new_code) != code
    # The same session takes the newest code only.
    r = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code})
    assert r.status_code == 400 and "INVALID_CODE" in r.text
    r = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": "".join(new_code)})
    assert r.status_code == 200, r.text
    text = g.get("/__/auth/metrics").text
    assert 'gatehouse_phone_fallbacks_total{channel="voice",outcome="sent"} 1' in text


def test_no_receipt_in_time_falls_back(stack, fake_twilio):
    fake = fake_twilio()
    g = stack(twilio(fake), channels=["sms", "whatsapp"], fallback_after_seconds=20)
    fake.default_outcome = ["sent"]          # accepted, never reported delivered
    session = send(g, "+33612340004")
    fake.wait_for(1)
    time.sleep(15)
    assert len(fake.messages) == 1, "not before its time"
    whatsapp = fake.wait_for(2, timeout=15)[1]
    assert whatsapp["kind"] == "whatsapp"
    # A new code for the same session.
    code = json.loads(whatsapp["content_variables"])["1"]
    r = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code})
    assert r.status_code == 200, r.text


def test_webhook_gateway_reports(stack):
    from phone_helpers import FakeGateway
    gw = FakeGateway(statuses=(200,)).start()
    try:
        def sms(base):
            return {"provider": "webhook", "url": gw.url + "/sms", "secret": WEBHOOK_SECRET,
                    "status_callback_url": base + "/__/auth/delivery/webhook"}
        g = stack(sms)
        send(g, "+33612340005")
        payload = json.loads(gw.wait_for(1)[0]["body"])
        assert payload["status_callback"] == g.base + "/__/auth/delivery/webhook" and payload["channel"] == "sms"

        def report(body, ts=None, secret=WEBHOOK_SECRET):
            data = json.dumps(body).encode()
            ts = str(int(time.time()) if ts is None else ts)
            sig = "v1=" + hmac.new(secret.encode(), ts.encode() + b"." + data, hashlib.sha256).hexdigest()
            return g.post("/__/auth/delivery/webhook", data=data, headers={"Content-Type": "application/json",
                                                                            "X-Gatehouse-Timestamp": ts, "X-Gatehouse-Signature": sig})

        good = {"id": payload["id"], "project": payload["project"], "status": "delivered"}
        assert report(good, ts=int(time.time()) - 600).status_code == 403, "too old"
        assert report(good, ts=int(time.time()) + 600).status_code == 403, "too far ahead"
        assert report(good, ts="soon").status_code == 403
        unsigned = g.post("/__/auth/delivery/webhook", data=json.dumps(good), headers={"Content-Type": "application/json"})
        assert unsigned.status_code == 403 and unsigned.json()["error"]["status"] == "PERMISSION_DENIED"
        assert report(good, secret="another-secret-0123456789").status_code == 403
        assert report(dict(good, project="other-project")).status_code == 404
        assert report(dict(good, status="eaten")).status_code == 400
        assert report({"id": payload["id"]}).status_code == 400
        assert report(dict(good, id="999999")).status_code == 404
        assert report(dict(good, status="sent")).status_code == 200, "the gateway's first 'sent' is taken"
        assert report(good, ts=int(time.time()) - 250).status_code == 200, "within 5 minutes"
        assert report(good).status_code == 409
        assert row(g, int(payload["id"]))["delivery"] == "delivered"
    finally:
        gw.stop()


def test_second_provider_after_5xx_and_timeouts_never_both(stack, fake_twilio):
    first, second = fake_twilio(), fake_twilio(auth_token="second-auth-token-0123456789", account_sid="AC9876543210")
    g = stack(lambda base: dict(twilio(first, timeout_seconds=1)(base), secondary=twilio(second, name="backup")(base)))
    first.mode = 500
    for i in range(3):
        send(g, f"+3361234010{i}")
    second.wait_for(3)
    assert len(first.requests) == 3, "each tried the first, which answered 500"
    # Three failures in a row opened the breaker: the next message goes straight to the second.
    send(g, "+33612340110")
    second.wait_for(4)
    assert len(first.requests) == 3
    # The fake has the request before the worker records who took it: wait for the record.
    rows = [r for r in wait_outbox(g, lambda rs: all(r["status"] == "sent" for r in rs if r["channel"] == "sms"))
            if r["channel"] == "sms"]
    assert len(rows) == 4 and all(r["provider"] == "backup" for r in rows), [dict(r) for r in rows]
    # Every message at exactly one provider.
    taken = [callback_query(m)["m"] for m in first.messages + second.messages]
    assert sorted(taken) == sorted(str(r["id"]) for r in rows) and len(set(taken)) == len(taken)


def test_a_send_that_timed_out_stays_with_its_provider(stack, fake_twilio):
    first, second = fake_twilio(), fake_twilio(auth_token="second-auth-token-0123456789", account_sid="AC9876543210")
    g = stack(lambda base: dict(twilio(first, timeout_seconds=1)(base), secondary=twilio(second, name="backup")(base)))
    first.mode = "hold"
    send(g, "+33612340200")
    deadline = time.time() + 10
    while time.time() < deadline and not sql(g, "SELECT 1 FROM outbox WHERE provider = 'twilio' AND status = 'pending'"):
        time.sleep(0.1)
    r = [r for r in outbox(g) if r["channel"] == "sms"][0]
    assert r["provider"] == "twilio" and r["status"] == "pending" and r["attempts"] == 1, dict(r)
    assert second.messages == [], "the first may have taken it: the second never sends it"
    # The first answers again: the retry goes to it, and only to it.
    first.mode = None
    sql(g, "UPDATE outbox SET next_attempt_at = 0 WHERE id = ?", r["id"])
    first.wait_for(1, timeout=15)
    assert second.messages == []
