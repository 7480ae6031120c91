"""SMS delivery through the configured provider: a Twilio-compatible Messages API and a signed
webhook (both against a local fake gateway), a local command; config problems; and a crash of the
responder with undelivered messages, each delivered exactly once after the restart."""
import base64
import hashlib
import hmac
import json
import os
import stat
import subprocess
import time
from urllib.parse import parse_qs

from conftest import binary
from phone_helpers import FakeGateway, code_in, dev_config, fake_gateway, outbox, wait_outbox

SECRET = "webhook-secret-0123456789abcdef"


def config_with(sms):
    c = dev_config()
    c["sms"] = sms
    return c


def send(g, number):
    r = g.api("sendVerificationCode", {"phoneNumber": number})
    assert r.status_code == 200, r.text
    return r.json()["sessionInfo"]


def sign_in(g, session, code):
    r = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code})
    assert r.status_code == 200, r.text
    return r.json()


def test_twilio_compatible_provider(make_gatehouse, fake_gateway):
    gw = fake_gateway(statuses=(201,))
    g = make_gatehouse(config=config_with({"provider": "twilio", "account_sid": "AC0123", "auth_token": "tok-secret",
                                           "from": "+15005550006", "base_url": gw.url + "/"}))
    session = send(g, "+33612345678")
    req = gw.wait_for(1)[0]
    assert req["path"] == "/2010-04-01/Accounts/AC0123/Messages.json"
    assert req["headers"]["Authorization"] == "Basic " + base64.b64encode(b"AC0123:tok-secret").decode()
    assert req["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    form = parse_qs(req["body"].decode(), strict_parsing=True)
    assert form["To"] == ["+33612345678"] and form["From"] == ["+15005550006"] and "MessagingServiceSid" not in form
    text = form["Body"][0]
    assert "is your verification code" in text and text.splitlines()[-1].startswith("@localhost #")
    # Sent: the body and the dev metadata are scrubbed at rest; the code still signs in.
    rows = wait_outbox(g, lambda rows: rows and rows[-1]["status"] == "sent")
    assert rows[-1]["body"] == "" and rows[-1]["metadata"] == "{}"
    assert sign_in(g, session, code_in(text))["phoneNumber"] == "+33612345678"


def test_twilio_messaging_service_and_failures(make_gatehouse, fake_gateway):
    gw = fake_gateway(statuses=(400, 503, 429))
    g = make_gatehouse(config=config_with({"provider": "twilio", "account_sid": "AC1", "auth_token": "t",
                                           "messaging_service_sid": "MG42", "base_url": gw.url}))
    send(g, "+33612345601")
    form = parse_qs(gw.wait_for(1)[0]["body"].decode())
    assert form["MessagingServiceSid"] == ["MG42"] and "From" not in form
    # 400: the gateway will never take it; the message is dead after one attempt.
    rows = wait_outbox(g, lambda rows: rows and rows[-1]["status"] == "dead")
    assert rows[-1]["attempts"] == 1 and "HTTP 400" in rows[-1]["last_error"] and rows[-1]["body"] == ""
    # 503 and 429: retried later (backoff), the body kept until it is sent.
    send(g, "+33612345602")
    rows = wait_outbox(g, lambda rows: len(rows) == 2 and rows[-1]["attempts"] == 1)
    assert rows[-1]["status"] == "pending" and "HTTP 503" in rows[-1]["last_error"] and rows[-1]["body"] != ""


def test_webhook_provider_signs_its_requests(make_gatehouse, fake_gateway):
    gw = fake_gateway(statuses=(200,))
    g = make_gatehouse(config=config_with({"provider": "webhook", "url": gw.url + "/hooks/sms", "secret": SECRET}))
    session = send(g, "+4915123456789")
    req = gw.wait_for(1)[0]
    assert req["path"] == "/hooks/sms" and req["headers"]["Content-Type"] == "application/json"
    payload = json.loads(req["body"])
    # The message's channel comes along; the language when known (a hosted page's), and the
    # status callback URL when configured (receipts: test_delivery_receipts.py).
    assert {"to", "body", "project", "id", "channel"} <= set(payload) <= {"to", "body", "project", "id", "channel", "language"}
    assert payload["channel"] == "sms"
    assert payload["to"] == "+4915123456789" and payload["project"] == "demo-gatehouse" and payload["id"] == "1"
    ts = req["headers"]["X-Gatehouse-Timestamp"]
    assert abs(int(ts) - time.time()) < 30
    expected = "v1=" + hmac.new(SECRET.encode(), ts.encode() + b"." + req["body"], hashlib.sha256).hexdigest()
    assert hmac.compare_digest(req["headers"]["X-Gatehouse-Signature"], expected)
    wrong = "v1=" + hmac.new(b"another secret", ts.encode() + b"." + req["body"], hashlib.sha256).hexdigest()
    assert req["headers"]["X-Gatehouse-Signature"] != wrong
    assert sign_in(g, session, code_in(payload["body"]))["phoneNumber"] == "+4915123456789"


def write_script(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_command_provider(make_gatehouse, tmp_path):
    log = tmp_path / "sent.log"
    script = write_script(tmp_path / "send-sms", f"""#!/bin/sh
case "$1" in
  +33612345603) echo "no such subscriber" >&2; exit 65 ;;
  +33612345604) echo "gateway busy" >&2; exit 1 ;;
  +33612345605) sleep 30 ;;
esac
{{ echo "to=$1 argc=$#"; echo "env=$(env | sort | tr '\\n' ' ')"; cat; echo; echo "--"; }} >> {log}
""")
    g = make_gatehouse(config=config_with({"provider": "command", "command": str(script), "timeout_seconds": 1}),
                       env={"GATEHOUSE_ADMIN_TOKEN": "must-not-leak-" + "x" * 32})
    session = send(g, "+33612345678")
    rows = wait_outbox(g, lambda rows: rows and rows[-1]["status"] == "sent")
    written = log.read_text()
    assert "to=+33612345678 argc=1" in written
    assert "must-not-leak" not in written and "GATEHOUSE_PROJECT=demo-gatehouse" in written
    text = written.split("\n", 2)[2].split("\n--")[0]
    assert sign_in(g, session, code_in(text))["isNewUser"] is True
    # Exit 65: refused for good. Exit 1: retried. A program that hangs is killed at the timeout.
    send(g, "+33612345603")
    send(g, "+33612345604")
    send(g, "+33612345605")
    rows = wait_outbox(g, lambda rows: len(rows) == 4 and all(r["attempts"] >= 1 for r in rows[1:]), timeout=15)
    assert rows[1]["status"] == "dead" and "exit 65" in rows[1]["last_error"] and "no such subscriber" in rows[1]["last_error"]
    assert rows[2]["status"] == "pending" and "exit 1" in rows[2]["last_error"] and "gateway busy" in rows[2]["last_error"]
    assert rows[3]["status"] == "pending" and "killed after 1 s" in rows[3]["last_error"]


def test_missing_command_is_retried_not_lost(make_gatehouse, tmp_path):
    g = make_gatehouse(config=config_with({"provider": "command", "command": str(tmp_path / "not-installed-yet")}))
    send(g, "+33612345606")
    rows = wait_outbox(g, lambda rows: rows and rows[-1]["attempts"] == 1)
    assert rows[-1]["status"] == "pending" and "cannot start" in rows[-1]["last_error"] and rows[-1]["body"] != ""
    assert "is not an executable file" in g.log_path.read_text()


def check(tmp_path, sms, phone=None):
    path = tmp_path / "check.json"
    config = {"mode": "dev", "sms": sms}
    if phone:
        config["projects"] = [{"id": "demo-gatehouse", "phone": phone}]
    path.write_text(json.dumps(config))
    out = subprocess.run([str(binary()), "config", "check", "-c", str(path)], capture_output=True, text=True)
    return out.returncode, out.stdout


def test_config_check_reports_provider_problems(tmp_path):
    code, out = check(tmp_path, {"provider": "twilio"})
    assert code == 1
    for p in ["sms.account_sid: required", "sms.auth_token: required", "sms.from: required"]:
        assert p in out, out
    code, out = check(tmp_path, {"provider": "twilio", "account_sid": "A", "auth_token": "B", "from": "+1", "messaging_service_sid": "M",
                                 "base_url": "ftp://x", "region": "eu"})
    assert "either from or messaging_service_sid" in out and "sms.base_url" in out and "sms.region: unknown key" in out, out
    code, out = check(tmp_path, {"provider": "webhook", "url": "not a url", "secret": "short"})
    assert "sms.url: expected an http(s) URL" in out and "sms.secret: expected at least 16 characters" in out, out
    code, out = check(tmp_path, {"provider": "command", "command": "relative/path", "timeout_seconds": 0})
    assert "sms.command: expected an absolute path" in out and "sms.timeout_seconds" in out, out
    code, out = check(tmp_path, {"provider": "command", "command": "/usr/local/bin/send-sms"})
    assert code == 0, out  # the program may be installed after the check
    code, out = check(tmp_path, {"provider": "pigeon"})
    assert "unknown provider 'pigeon'" in out, out
    code, out = check(tmp_path, {"provider": "webhook", "url": "https://sms.example.com/hook", "secret": SECRET})
    assert code == 0, out


def test_config_check_reports_channel_and_second_provider_problems(tmp_path):
    twilio = {"provider": "twilio", "account_sid": "A", "auth_token": "B", "from": "+15005550006"}
    code, out = check(tmp_path, twilio, phone={"channels": ["sms", "whatsapp", "voice"], "fallback_after_seconds": 5})
    assert "phone.channels: whatsapp needs sms.whatsapp_from" in out and "phone.channels: voice needs sms.voice_from" in out, out
    assert "fallback_after_seconds: expected 0" in out, out
    code, out = check(tmp_path, twilio, phone={"channels": ["voice", "sms"]})
    assert "starting with sms" in out, out
    code, out = check(tmp_path, dict(twilio, whatsapp_from="+15005550007", status_callback_url="https://a.example/x?y=1", name="Bad Name"))
    assert "whatsapp_content_sid: required with whatsapp_from" in out and "sms.status_callback_url" in out and "sms.name" in out, out
    code, out = check(tmp_path, dict(twilio, secondary={"provider": "webhook", "url": "https://b.example/hook", "secret": "short"}))
    assert "sms.secondary.secret: expected at least 16 characters" in out, out
    code, out = check(tmp_path, dict(twilio, secondary=dict(twilio, secondary={})))
    assert "sms.secondary.name: the two providers need different names" in out and "sms.secondary.secondary: unknown key" in out, out
    full = dict(twilio, whatsapp_from="+15005550007", whatsapp_content_sid="HX1", voice_from="+15005550008",
                status_callback_url="https://auth.example.com/__/auth/delivery/twilio",
                secondary={"provider": "webhook", "name": "backup", "url": "https://b.example/hook", "secret": SECRET})
    code, out = check(tmp_path, full, phone={"channels": ["sms", "whatsapp", "voice"], "fallback_after_seconds": 60})
    assert code == 0, out
    # A channel one of the two carries is enough; a command carries texts only.
    second = dict(twilio, name="backup", whatsapp_from="+15005550007", whatsapp_content_sids={"fr": "HX2"}, voice_from="+15005550008")
    code, out = check(tmp_path, dict(twilio, secondary=second), phone={"channels": ["sms", "whatsapp", "voice"]})
    assert code == 0, out
    command = {"provider": "command", "command": "/usr/local/bin/send-sms"}
    code, out = check(tmp_path, dict(twilio, secondary=command), phone={"channels": ["sms", "voice"]})
    assert "phone.channels: voice needs sms.voice_from" in out, out
    code, out = check(tmp_path, dict(twilio, whatsapp_from="+15005550007", whatsapp_content_sids={"fr": ""}, voice_from=""))
    assert "sms.whatsapp_content_sids: expected an object" in out and "sms.voice_from: expected a non-empty string" in out, out


def test_crash_with_undelivered_messages_delivers_each_exactly_once(make_gatehouse):
    gw = FakeGateway(statuses=(200,))  # down at first: nothing listens on its port yet
    g = make_gatehouse(config=config_with({"provider": "webhook", "url": gw.url + "/sms", "secret": SECRET}))
    numbers = [f"+3361234562{i}" for i in range(6)]
    sessions = {n: send(g, n) for n in numbers}
    rows = wait_outbox(g, lambda rows: len(rows) == 6 and all(r["attempts"] >= 1 and r["status"] == "pending" for r in rows))
    assert all("webhook" in r["last_error"] for r in rows)
    g.kill()  # SIGKILL: no drain, no goodbye
    try:
        gw.start()
        g.start()
        requests = gw.wait_for(6, timeout=30)
        time.sleep(1.0)  # anything more would be a duplicate
        bodies = [json.loads(r["body"]) for r in gw.requests]
        assert len(bodies) == 6, bodies
        assert sorted(b["to"] for b in bodies) == sorted(numbers)
        assert len({b["id"] for b in bodies}) == 6
        rows = wait_outbox(g, lambda rows: all(r["status"] == "sent" for r in rows))
        assert all(r["body"] == "" for r in rows)
        # The codes delivered after the crash still sign in.
        for b in bodies[:2]:
            r = g.api("signInWithPhoneNumber", {"sessionInfo": sessions[b["to"]], "code": code_in(b["body"])})
            assert r.status_code == 200, r.text
    finally:
        gw.stop()
