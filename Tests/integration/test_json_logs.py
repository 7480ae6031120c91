"""Structured logs (`log.format: json`) through the real nginx and responder in production mode:
every line the responder and its supervisor write is one JSON object with the same members,
nginx's request id reaches it, and no code, token, cookie or secret the run produced is in it."""
import json

from conftest import ROOT
from phone_helpers import ADMIN_TOKEN, PROD_API_KEY, code_in, fake_gateway, mint_app_token, production_config  # noqa: F401

NUMBER = "+33612345690"
PROJECT = "prod-project"
COOKIE = "__Host-gatehouse"


def test_json_lines_hold_no_secret(make_gatehouse, fake_gateway, tmp_path):
    gateway = fake_gateway()
    secret = "w" * 32
    config = production_config(tmp_path, {"provider": "webhook", "url": gateway.url + "/sms", "secret": secret})
    config["log"] = {"format": "json", "level": "debug"}
    g = make_gatehouse(config=config)
    produced = [ADMIN_TOKEN, secret]

    token = mint_app_token(g, PROJECT, PROD_API_KEY)
    produced.append(token)
    r = g.api("sendVerificationCode", {"phoneNumber": NUMBER, "recaptchaToken": token}, key=PROD_API_KEY)
    assert r.status_code == 200, r.text
    session = r.json()["sessionInfo"]
    produced.append(session)
    for _ in range(100):
        if gateway.json_bodies():
            break
        __import__("time").sleep(0.05)
    code = code_in(gateway.json_bodies()[-1]["body"])
    produced.append(code)
    wrong = "000000" if code != "000000" else "111111"
    assert g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": wrong}, key=PROD_API_KEY).status_code == 400
    body = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code}, key=PROD_API_KEY).json()
    produced += [body["idToken"], body["refreshToken"]]
    refreshed = g.post("/securetoken.googleapis.com/v1/token", params={"key": PROD_API_KEY},
                       json={"grantType": "refresh_token", "refreshToken": body["refreshToken"]}).json()
    produced += [refreshed["id_token"], refreshed["refresh_token"]]
    # A forged refresh token and a forged cookie are refused and logged as refusals, not echoed.
    forged = "AMf-forged-" + "z" * 40
    produced.append(forged)
    assert g.post("/securetoken.googleapis.com/v1/token", params={"key": PROD_API_KEY},
                  json={"grantType": "refresh_token", "refreshToken": forged}).status_code == 400
    cookie = g.post(f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}:createSessionCookie",
                    json={"idToken": body["idToken"], "validDuration": 3600},
                    headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).json()["sessionCookie"]
    produced.append(cookie)
    assert g.get("/demo/", headers={"Cookie": f"{COOKIE}={cookie}", "X-Gatehouse-Project": PROJECT}).status_code in (200, 302)
    assert g.get("/demo/", headers={"Cookie": f"{COOKIE}=eyJforged.{'q' * 30}.sig"}).status_code == 302
    g.stop()

    lines = [line for line in g.log_path.read_text().splitlines() if line.strip()]
    assert lines
    records = []
    for line in lines:
        record = json.loads(line)  # every line is one JSON object
        assert set(record) <= {"time", "level", "pid", "request_id", "message"} and {"time", "level", "pid", "message"} <= set(record), record
        assert record["level"] in ("debug", "info", "warning", "error")
        records.append(record)
    text = "\n".join(lines)
    for value in produced:
        assert value not in text, f"a secret of the run is in the log: {value[:12]}…"
    # nginx's $request_id names the request in what the responder logged about it.
    assert any(len(r.get("request_id", "")) == 32 for r in records), records[-5:]
