"""The phone channels' providers through real nginx, against fake Twilios (fake_twilio.py): the
StatusCallback each request names; WhatsApp and calls in the person's language (carried by the
automatic fallback after a failure receipt); a WhatsApp only the second provider carries; the
second provider after a refused connection, 5xx and 429; the breaker opening and its half-open
probe; and, under timeouts and connections dropped after the request, no message sent by both."""
import json
import re
import time

from conftest import free_port
from fake_twilio import FakeTwilio, fake_twilio  # noqa: F401 (the fixture)
from phone_helpers import dev_config, outbox, production_config, sql

SECOND = {"auth_token": "second-auth-token-0123456789", "account_sid": "AC9876543210"}


def twilio(fake, name=None, whatsapp=True, voice=True, **extra):
    """The `sms` section of a Twilio provider at `fake`, given Gatehouse's base URL."""
    def section(base):
        s = {"provider": "twilio", "account_sid": fake.account_sid, "auth_token": fake.auth_token, "from": "+15005550006",
             "base_url": fake.base_url, "status_callback_url": base + "/__/auth/delivery/twilio", "timeout_seconds": 2}
        if whatsapp:
            s.update(whatsapp_from="+15005550007", whatsapp_content_sid="HXdefault", whatsapp_content_sids={"fr": "HXfr"})
        if voice:
            s["voice_from"] = "+15005550008"
        if name:
            s["name"] = name
        s.update(extra)
        return s
    return section


def with_secondary(first, second):
    return lambda base: dict(first(base), secondary=second(base))


def start(make_gatehouse, sms, project=None, **phone):
    """A dev-mode Gatehouse whose `sms` section is `sms(its base URL)`."""
    g = make_gatehouse(config={}, start=False)
    config = dev_config(**phone)
    config["sms"] = sms(g.base)
    config["projects"][0].update(project or {})
    g.config_path.write_text(json.dumps(config, indent=2))
    return g.start()


def send(g, number):
    r = g.api("sendVerificationCode", {"phoneNumber": number})
    assert r.status_code == 200, r.text
    return r.json()["sessionInfo"]


def sms_rows(g):
    return [r for r in outbox(g) if r["channel"] == "sms"]


def wait_rows(g, predicate, timeout=15.0):
    deadline = time.time() + timeout
    rows = []
    while time.time() < deadline:
        rows = outbox(g)
        if predicate(rows):
            return rows
        time.sleep(0.05)
    raise AssertionError([dict(r) for r in rows])


def metric(g, line_start):
    for line in g.get("/__/auth/metrics").text.splitlines():
        if line.startswith(line_start + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_sms_names_its_status_callback_and_keeps_the_sid(make_gatehouse, fake_twilio):  # noqa: F811
    fake = fake_twilio()
    g = start(make_gatehouse, twilio(fake, name="tw-eu"))
    send(g, "+33612350001")
    m = fake.wait_for(1)[0]
    row = sms_rows(g)[0]
    assert m["kind"] == "sms" and m["to"] == "+33612350001" and m["from"] == "+15005550006" and m["body"]
    assert m["status_callback"] == f"{g.base}/__/auth/delivery/twilio?p=demo-gatehouse&m={row['id']}&n=tw-eu"
    assert fake.requests[0]["path"] == f"/2010-04-01/Accounts/{fake.account_sid}/Messages.json"
    # Taken: the row names the provider and Twilio's SID; the fake's reports reached the endpoint.
    row = wait_rows(g, lambda rows: rows[0]["delivery"] == "delivered")[0]
    assert row["status"] == "sent" and row["provider"] == "tw-eu" and row["provider_message_id"] == m["sid"]
    assert [c["answer"] for c in fake.wait_callbacks(2)] == [200, 200]
    assert metric(g, 'gatehouse_outbox_deliveries_total{channel="sms",provider="tw-eu",result="sent"}') == 1


def test_whatsapp_then_a_call_in_the_persons_language(make_gatehouse, fake_twilio):  # noqa: F811
    fake = fake_twilio()
    g = start(make_gatehouse, twilio(fake), project={"default_locale": "fr"}, channels=["sms", "whatsapp", "voice"],
              fallback_after_seconds=600)
    number = "+33612350002"
    fake.outcomes[number] = ["sent", ("undelivered", "30003")]
    session = send(g, number)
    whatsapp = fake.wait_for(2)[1]
    assert whatsapp["kind"] == "whatsapp" and whatsapp["form"]["To"] == "whatsapp:" + number
    assert whatsapp["from"] == "whatsapp:+15005550007" and whatsapp["body"] is None
    assert whatsapp["content_sid"] == "HXfr", "the French template"
    variables = json.loads(whatsapp["content_variables"])
    assert list(variables) == ["1"] and re.fullmatch(r"\d{6}", variables["1"])
    row = [r for r in outbox(g) if r["channel"] == "whatsapp"][0]
    assert whatsapp["status_callback"] == f"{g.base}/__/auth/delivery/twilio?p=demo-gatehouse&m={row['id']}&n=twilio"
    # WhatsApp fails too: a call, said in French, twice.
    assert fake.send_callback(whatsapp["sid"], "failed", "63016") == 200
    call = fake.wait_for(3)[2]
    assert call["kind"] == "voice" and call["to"] == number and call["from"] == "+15005550008"
    assert fake.requests[-1]["path"] == f"/2010-04-01/Accounts/{fake.account_sid}/Calls.json"
    twiml = call["twiml"]
    say = re.fullmatch(r'<Response><Say language="fr-FR">(.+?)</Say><Pause length="2"/><Say language="fr-FR">(.+?)</Say></Response>', twiml)
    assert say and say.group(1) == say.group(2), twiml
    digits = re.search(r"(\d), (\d), (\d), (\d), (\d), (\d)", say.group(1))
    assert digits, twiml
    assert call["form"]["StatusCallbackEvent"] == "initiated ringing answered completed"
    call_row = [r for r in outbox(g) if r["channel"] == "voice"][0]
    assert call["status_callback"].endswith(f"m={call_row['id']}&n=twilio") and call["sid"].startswith("CA")
    # The call's own reports move its row (Twilio's call statuses).
    for status in ["initiated", "ringing", "in-progress", "completed"]:
        assert fake.send_callback(call["sid"], status) in (200, 409)
    wait_rows(g, lambda rows: [r for r in rows if r["channel"] == "voice"][0]["delivery"] == "delivered")
    r = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": "".join(digits.groups())})
    assert r.status_code == 200, r.text


def test_whatsapp_only_the_second_provider_carries(make_gatehouse, fake_twilio):  # noqa: F811
    first, second = fake_twilio(), fake_twilio(**SECOND)
    g = start(make_gatehouse, with_secondary(twilio(first, whatsapp=False, voice=False), twilio(second, name="backup")),
              channels=["sms", "whatsapp"], fallback_after_seconds=600)
    number = "+33612350003"
    first.outcomes[number] = ["sent", ("undelivered", "30005")]
    send(g, number)
    first.wait_for(1)
    whatsapp = second.wait_for(1)[0]
    assert whatsapp["kind"] == "whatsapp" and whatsapp["content_sid"] == "HXdefault"
    assert whatsapp["status_callback"].endswith("&n=backup")
    assert [m["kind"] for m in first.messages] == ["sms"], "the first was up, but has no WhatsApp sender"
    row = wait_rows(g, lambda rows: any(r["channel"] == "whatsapp" and r["status"] == "sent" for r in rows))
    assert [r for r in row if r["channel"] == "whatsapp"][0]["provider"] == "backup"


def test_second_provider_when_the_first_cannot_be_reached(make_gatehouse, fake_twilio):  # noqa: F811
    second = fake_twilio(**SECOND)
    closed = f"http://127.0.0.1:{free_port()}"

    def first(base):
        return {"provider": "twilio", "account_sid": "AC1", "auth_token": "t", "from": "+15005550006", "base_url": closed,
                "status_callback_url": base + "/__/auth/delivery/twilio", "timeout_seconds": 2}
    g = start(make_gatehouse, with_secondary(first, twilio(second, name="backup")))
    send(g, "+33612350004")
    m = second.wait_for(1)[0]
    row = wait_rows(g, lambda rows: rows and rows[0]["status"] == "sent")[0]
    # In the same attempt: not a retry.
    assert row["provider"] == "backup" and row["attempts"] == 0 and row["provider_message_id"] == m["sid"]
    assert m["status_callback"] == f"{g.base}/__/auth/delivery/twilio?p=demo-gatehouse&m={row['id']}&n=backup"


def test_breaker_opens_after_three_failures_and_a_probe_closes_it(make_gatehouse, fake_twilio):  # noqa: F811
    first, second = fake_twilio(), fake_twilio(**SECOND)
    g = start(make_gatehouse, with_secondary(twilio(first), twilio(second, name="backup")))
    first.answers["+33612350010"] = 500
    first.answers["+33612350011"] = 429
    first.answers["+33612350012"] = 503
    for i in range(3):
        send(g, f"+3361235001{i}")
        second.wait_for(i + 1)
    assert [r["answer"] for r in first.requests] == [500, 429, 503]
    assert metric(g, 'gatehouse_sms_breaker_state{provider="twilio"}') == 1
    # Open: the next message does not even try the first.
    send(g, "+33612350013")
    second.wait_for(4)
    assert len(first.requests) == 3
    # 30 s later one message probes the first; it answers, and the breaker closes.
    time.sleep(30.5)
    send(g, "+33612350014")
    first.wait_for(1)
    send(g, "+33612350015")
    first.wait_for(2)
    assert len(second.messages) == 4
    assert metric(g, 'gatehouse_sms_breaker_state{provider="twilio"}') == 0
    rows = wait_rows(g, lambda rows: len(rows) == 6 and all(r["status"] == "sent" for r in rows))
    assert [r["provider"] for r in rows] == ["backup"] * 4 + ["twilio"] * 2
    assert metric(g, 'gatehouse_outbox_deliveries_total{channel="sms",provider="backup",result="sent"}') == 4


def test_timeouts_and_dropped_connections_stay_with_the_first_nothing_sent_twice(make_gatehouse, fake_twilio):  # noqa: F811
    first, second = fake_twilio(), fake_twilio(**SECOND)
    g = start(make_gatehouse, with_secondary(twilio(first, timeout_seconds=1), twilio(second, name="backup")))
    plan = {"+33612350020": "hold", "+33612350021": 500, "+33612350022": "drop", "+33612350023": None,
            "+33612350024": "hold", "+33612350025": 429, "+33612350026": None, "+33612350027": "drop"}
    for number, answer in plan.items():
        if answer is not None:
            first.answers[number] = answer
    for number in plan:
        send(g, number)
    # Every message has had its first attempt (the breaker opens on the way: later ones skip the first).
    wait_rows(g, lambda rows: len(rows) == 8 and all(r["status"] == "sent" or r["attempts"] >= 1 for r in rows), timeout=30)
    doubtful = {FakeTwilio.outbox_id(r) for r in first.requests if r["answer"] in ("hold", "drop")}
    assert doubtful, "some sends reached the first and got no answer"
    for r in outbox(g):
        if str(r["id"]) in doubtful:
            assert r["status"] == "pending" and r["provider"] == "twilio", dict(r)
    # The first answers again; the doubtful messages are retried there only (moved up: no waiting for the backoff).
    first.answers.clear()
    sql(g, "UPDATE outbox SET next_attempt_at = 0 WHERE status = 'pending'")
    rows = wait_rows(g, lambda rows: all(r["status"] == "sent" for r in rows), timeout=30)
    taken_first = [FakeTwilio.outbox_id(m) for m in first.messages]
    taken_second = [FakeTwilio.outbox_id(m) for m in second.messages]
    assert sorted(taken_first + taken_second) == sorted(str(r["id"]) for r in rows), "every message taken exactly once"
    assert not set(taken_first) & set(taken_second)
    tried_second = {FakeTwilio.outbox_id(r) for r in second.requests}
    assert not doubtful & tried_second, "a message the first may have taken never went to the second"
    assert doubtful <= set(taken_first)
    for r in rows:
        assert r["provider"] == ("twilio" if str(r["id"]) in taken_first else "backup"), dict(r)


def test_production_accepts_the_phone_keys_and_a_second_provider(tmp_path):
    base = "https://auth.example.test"
    sms = {"provider": "twilio", "account_sid": "AC1", "auth_token": "t", "from": "+15005550006",
           "status_callback_url": base + "/__/auth/delivery/twilio", "whatsapp_from": "+15005550007",
           "whatsapp_content_sid": "HX1", "whatsapp_content_sids": {"fr": "HX2"}, "voice_from": "+15005550008", "name": "tw-eu",
           "secondary": {"provider": "webhook", "name": "gw", "url": "https://sms.example.test/send", "secret": "0123456789abcdef0123",
                         "status_callback_url": base + "/__/auth/delivery/webhook"}}
    config = production_config(tmp_path, sms, phone={"channels": ["sms", "whatsapp", "voice"], "fallback_after_seconds": 60})
    assert config["sms"]["secondary"]["name"] == "gw"
