"""Silent-push app verification end to end (firebase-wire.md §2.15): `verifyIosClient` through
nginx to the real responder, the push delivered over HTTP/2 and TLS to a fake APNs gateway that
checks the provider token with the key's public half, the headers and the payload; the pair from
the push signing in a real number; the gateway's answers; a gateway that is down and a responder
killed with a push pending; dev mode's push list; configuration checks and the probe command."""
import json
import subprocess
import time

from apns_gateway import KEY_ID, TEAM_ID, fake_apns, make_apns_key, make_wrong_curve_key  # noqa: F401 (fixture)
from conftest import DEFAULT_API_KEY, assert_envelope, binary
from phone_helpers import (PROD_API_KEY, TEST_NUMBERS, code_in, dev_config, fake_gateway, outbox,  # noqa: F401
                           production_config, sql, wait_outbox)

BUNDLE = "com.example.pushapp"
SMS_SECRET = "webhook-secret-0123456789abcdef"
ITK = "/identitytoolkit.googleapis.com/v1/accounts:"
LEGACY = "/www.googleapis.com/identitytoolkit/v3/relyingparty/"


def device(n: int) -> str:
    return f"{n:064X}"


def ios_app(gw, sandbox_gw=None, ca_file=None, **apns):
    settings = {"key_id": KEY_ID, "key_file": gw.key_path, "gateway": gw.url, "sandbox_gateway": (sandbox_gw or gw).url,
                "ca_file": ca_file or gw.ca_file, "allow_custom_gateway": True}
    settings.update(apns)
    return {"bundle_id": BUNDLE, "team_id": TEAM_ID, "app_id": "1:1234567890:ios:abcdef", "apns": settings}


def production(tmp_path, sms_gw, *apps, **project):
    project.setdefault("push", {"verifications_per_ip_per_hour": 1000})
    return production_config(tmp_path, {"provider": "webhook", "url": sms_gw.url + "/sms", "secret": SMS_SECRET},
                             ios_apps=list(apps), **project)


def verify(g, token, sandbox=False, bundle=BUNDLE, key=PROD_API_KEY, path=ITK + "verifyIosClient"):
    body = {"appToken": token}
    if sandbox:
        body["isSandbox"] = True
    headers = {"X-Ios-Bundle-Identifier": bundle} if bundle else {}
    return g.post(path, params={"key": key}, json=body, headers=headers)


def pair_from(push):
    auth = push["payload"]["com.google.firebase.auth"]
    return auth["receipt"], auth["secret"]


def send(g, number, receipt, secret, bundle=BUNDLE, key=PROD_API_KEY):
    return g.api("sendVerificationCode", {"phoneNumber": number, "iosReceipt": receipt, "iosSecret": secret,
                                          "clientType": "CLIENT_TYPE_IOS"}, key=key, headers={"X-Ios-Bundle-Identifier": bundle})


def push_rows(g):
    return [r for r in outbox(g) if r["channel"] == "push"]


def test_push_sent_once_and_the_pair_signs_in_a_real_number(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw, sandbox = fake_apns(), fake_apns()
    bundle = tmp_path / "cas.pem"
    bundle.write_text(open(gw.ca_file).read() + open(sandbox.ca_file).read())
    sms = fake_gateway(statuses=(200,))
    g = make_gatehouse(config=production(tmp_path, sms, ios_app(gw, sandbox_gw=sandbox, ca_file=str(bundle))))
    started = time.monotonic()
    r = verify(g, device(1).lower())
    assert r.status_code == 200, r.text
    assert time.monotonic() - started < 2  # answered at once, the push is the outbox's
    body = r.json()
    assert set(body) == {"receipt", "suggestedTimeout"} and body["suggestedTimeout"] == "5"
    push = gw.wait_for(1)[0]
    assert push["problems"] == [], push["problems"]
    assert push["path"] == "/3/device/" + device(1)
    assert push["headers"]["apns-topic"] == BUNDLE and push["headers"]["apns-push-type"] == "background"
    assert push["headers"]["apns-priority"] == "5"
    assert int(push["headers"]["apns-expiration"]) > time.time() + 3000  # the pair's hour
    assert push["jwt_header"] == {"alg": "ES256", "kid": KEY_ID, "typ": "JWT"} or push["jwt_header"] == {"alg": "ES256", "kid": KEY_ID}
    assert push["jwt_claims"]["iss"] == TEAM_ID
    receipt, secret = pair_from(push)
    assert receipt == body["receipt"]
    # A sandbox build's push goes to the development gateway only.
    assert verify(g, device(2), sandbox=True).status_code == 200
    assert sandbox.wait_for(1)[0]["path"] == "/3/device/" + device(2)
    assert len(gw.requests) == 1
    # The app sends the pair; the SMS goes out; the code signs in.
    r = send(g, "+33612345678", receipt, secret)
    assert r.status_code == 200, r.text
    text = json.loads(sms.wait_for(1)[0]["body"])["body"]
    signed = g.api("signInWithPhoneNumber", {"sessionInfo": r.json()["sessionInfo"], "code": code_in(text)}, key=PROD_API_KEY)
    assert signed.status_code == 200 and signed.json()["phoneNumber"] == "+33612345678", signed.text
    # Sent pushes are scrubbed at rest: the secret is gone from the outbox.
    rows = wait_outbox(g, lambda rows: [r["status"] for r in rows if r["channel"] == "push"] == ["sent", "sent"])
    assert all(r["body"] == "" for r in rows if r["channel"] == "push")
    stored = sql(g, "SELECT receipt_hash, secret_hash FROM ios_receipts")
    assert len(stored) == 2 and all(secret.encode() not in bytes(r["secret_hash"]) for r in stored)


def test_the_pair_is_refused_when_wrong_expired_used_up_or_another_apps(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns()
    other = dict(ios_app(gw), bundle_id="com.example.otherapp")
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw), other))
    invalid = "INVALID_APP_CREDENTIAL"
    assert verify(g, device(1)).status_code == 200
    receipt, secret = pair_from(gw.wait_for(1)[0])
    assert_envelope(send(g, "+33612345670", receipt, secret + "x"), 400, invalid)
    assert_envelope(send(g, "+33612345670", receipt, secret, bundle="com.example.otherapp"), 400, invalid)
    assert_envelope(send(g, "+33612345670", receipt, ""), 400, invalid)
    # Given where none is needed (a test number), a wrong pair is still refused.
    test_number = next(iter(TEST_NUMBERS))
    assert_envelope(send(g, test_number, receipt, "wrong"), 400, invalid)
    # Five sends, then refused.
    for i in range(5):
        r = send(g, f"+3361234567{i}" if i < 3 else list(TEST_NUMBERS)[i], receipt, secret)
        assert r.status_code == 200, (i, r.text)
    assert_envelope(send(g, "+33612345679", receipt, secret), 400, invalid)
    # Expired after its hour.
    assert verify(g, device(2)).status_code == 200
    receipt2, secret2 = pair_from(gw.wait_for(2)[1])
    sql(g, "UPDATE ios_receipts SET expires_at = 1 WHERE uses = 0")
    assert_envelope(send(g, "+33612345678", receipt2, secret2), 400, invalid)
    # Without any app credential a real number is refused.
    assert_envelope(g.api("sendVerificationCode", {"phoneNumber": "+33612345678"}, key=PROD_API_KEY), 400, "MISSING_CLIENT_IDENTIFIER")


def test_verify_ios_client_refusals(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns()
    no_key = {"bundle_id": "com.example.nokey", "team_id": TEAM_ID, "app_id": "1:1234567890:ios:nokey"}
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw), no_key))
    for body in [{}, {"appToken": ""}, {"appToken": None}]:
        r = g.post(ITK + "verifyIosClient", params={"key": PROD_API_KEY}, json=body, headers={"X-Ios-Bundle-Identifier": BUNDLE})
        assert_envelope(r, 400, "MISSING_IOS_APP_TOKEN")
    for token in ["XYZ", "AB" * 31, "AB" * 101, "GG" * 32]:
        assert_envelope(verify(g, token), 400, "INVALID_APP_CREDENTIAL : appToken is not an APNs device token")
    assert_envelope(verify(g, device(1), bundle=None), 400, "INVALID_APP_CREDENTIAL")
    assert_envelope(verify(g, device(1), bundle="com.example.unknown"), 400, "INVALID_APP_CREDENTIAL")
    assert_envelope(verify(g, device(1), bundle="com.example.nokey"), 400,
                    "INVALID_APP_CREDENTIAL : Silent pushes are not configured for this app")
    assert_envelope(verify(g, device(1), key="wrong-key"), 400, "API key not valid")
    # The legacy name answers the same.
    r = verify(g, device(1), path=LEGACY + "verifyClient")
    assert r.status_code == 200 and r.json()["suggestedTimeout"] == "5", r.text
    assert len(gw.wait_for(1)) == 1
    assert len(push_rows(g)) == 1


def test_bad_device_token_and_unregistered_are_not_retried(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns(answers=[(400, "BadDeviceToken"), (410, "Unregistered")])
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw)))
    assert verify(g, device(1)).status_code == 200
    assert verify(g, device(2)).status_code == 200
    rows = wait_outbox(g, lambda rows: [r["status"] for r in rows if r["channel"] == "push"] == ["dead", "dead"])
    rows = [r for r in rows if r["channel"] == "push"]
    assert [r["attempts"] for r in rows] == [1, 1]
    assert "BadDeviceToken" in rows[0]["last_error"] and "Unregistered" in rows[1]["last_error"]
    time.sleep(6)  # past the first backoff: nothing is tried again
    assert len(gw.requests) == 2
    assert "BadDeviceToken" in g.log_path.read_text()


def test_expired_provider_token_is_renewed_and_retried_once(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns(answers=[(403, "ExpiredProviderToken")])
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw)))
    assert verify(g, device(1)).status_code == 200
    first, second = gw.wait_for(2)
    assert first["status"] == 403 and second["status"] == 200
    assert first["problems"] == [] and second["problems"] == []
    assert first["jwt"] != second["jwt"]
    assert first["connection"] == second["connection"]
    rows = wait_outbox(g, lambda rows: [r["status"] for r in rows if r["channel"] == "push"] == ["sent"])
    # One attempt, not a failure: the renewal and its retry are inside it.
    assert [(r["attempts"], r["last_error"]) for r in rows if r["channel"] == "push"] == [(0, None)]
    # The renewed token is the one reused afterwards.
    assert verify(g, device(2)).status_code == 200
    assert gw.wait_for(3)[2]["jwt"] == second["jwt"]


def test_throttled_or_failing_gateway_is_retried_with_backoff(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns(answers=[(429, "TooManyRequests"), (500, "InternalServerError")])
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw)))
    assert verify(g, device(1)).status_code == 200
    assert verify(g, device(2)).status_code == 200
    rows = wait_outbox(g, lambda rows: [r["attempts"] for r in rows if r["channel"] == "push"] == [1, 1])
    assert ["429" in r["last_error"] or "500" in r["last_error"] for r in rows if r["channel"] == "push"] == [True, True]
    got = gw.wait_for(4, timeout=20)
    assert sorted(r["status"] for r in got) == [200, 200, 429, 500]
    for failed in (r for r in got if r["status"] != 200):
        retry = next(r for r in got if r["status"] == 200 and r["path"] == failed["path"])
        assert 4.5 <= retry["received_at"] - failed["received_at"] <= 15, "the outbox's first backoff is 5 s"
        assert retry["payload"] == failed["payload"] and retry["problems"] == []
    # Sent after one failed attempt (the failures are what `attempts` counts), the error cleared.
    rows = wait_outbox(g, lambda rows: [(r["status"], r["attempts"]) for r in rows if r["channel"] == "push"] == [("sent", 1)] * 2)
    assert all(r["last_error"] is None for r in rows if r["channel"] == "push")


def test_a_provider_token_the_gateway_refuses_is_not_retried(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns()
    # The gateway knows another key than the one Gatehouse signs with (a key revoked or mixed up).
    _, gw.public_key = make_apns_key(tmp_path, "AuthKey_OTHER.p8")
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw)))
    assert verify(g, device(30)).status_code == 200
    request = gw.wait_for(1)[0]
    assert (request["status"], request["reason"]) == (403, "InvalidProviderToken")
    rows = wait_outbox(g, lambda rows: [r["status"] for r in rows if r["channel"] == "push"] == ["dead"])
    row = [r for r in rows if r["channel"] == "push"][0]
    assert row["attempts"] == 1 and "InvalidProviderToken" in row["last_error"]
    assert "InvalidProviderToken" in g.log_path.read_text()


def test_pushes_to_one_device_and_calls_per_network_are_budgeted(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns()
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw), push={"verifications_per_ip_per_hour": 12}))
    for _ in range(10):
        r = verify(g, device(1))
        assert r.status_code == 200, r.text
    # The 11th push to the device in an hour is refused in a way that sends the SDK to the page,
    # so whoever knows a token can neither flood that device nor lock its owner out.
    assert_envelope(verify(g, device(1)), 400, "INVALID_APP_CREDENTIAL")
    assert verify(g, device(2)).status_code == 200
    # The caller's network has had its 12 calls this hour.
    assert_envelope(verify(g, device(3)), 400, "TOO_MANY_ATTEMPTS_TRY_LATER")
    got = gw.wait_for(11)
    time.sleep(0.5)  # a refused call committed no push
    assert len(gw.requests) == 11 and all(r["problems"] == [] for r in got)
    assert sorted(r["path"][-64:] for r in got) == sorted([device(1)] * 10 + [device(2)])


def test_gateway_down_then_responder_killed_delivers_once_after_restart(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns(start=False)  # down: nothing listens on its port yet
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw)))
    started = time.monotonic()
    assert verify(g, device(7)).status_code == 200
    assert time.monotonic() - started < 2
    rows = wait_outbox(g, lambda rows: any(r["channel"] == "push" and r["attempts"] >= 1 and r["status"] == "pending" for r in rows))
    assert "apns" in [r for r in rows if r["channel"] == "push"][0]["last_error"]
    g.kill()  # SIGKILL with the push pending
    gw.start()
    g.start()
    got = gw.wait_for(1, timeout=30)
    time.sleep(1.5)  # anything more would be a duplicate
    assert len(gw.requests) == 1 and got[0]["problems"] == []
    assert got[0]["path"] == "/3/device/" + device(7)
    wait_outbox(g, lambda rows: [r["status"] for r in rows if r["channel"] == "push"] == ["sent"])


def test_one_http2_connection_carries_many_pushes(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns()
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw)))
    for i in range(10):
        assert verify(g, device(100 + i)).status_code == 200
    got = gw.wait_for(10)
    assert all(r["problems"] == [] for r in got)
    assert {r["connection"] for r in got} == {1} and gw.connections == 1
    # One provider token for all of them (renewed every 30 minutes, not per push).
    assert len({r["jwt"] for r in got}) == 1


def test_dev_mode_lists_pushes_and_sends_none(make_gatehouse):
    g = make_gatehouse(config=dev_config())
    bundle = "com.example.gatehouse.demo"
    r = verify(g, device(3).lower(), sandbox=True, bundle=bundle, key="test-api-key")
    assert r.status_code == 200, r.text
    listed = g.get("/emulator/v1/projects/demo-gatehouse/pushNotifications").json()["pushNotifications"]
    assert len(listed) == 1
    push = listed[0]
    assert push["deviceToken"] == device(3) and push["bundleId"] == bundle and push["sandbox"] is True
    assert push["payload"]["aps"] == {"content-available": 1}
    auth = push["payload"]["com.google.firebase.auth"]
    assert auth["receipt"] == r.json()["receipt"]
    test_number = next(iter(TEST_NUMBERS))
    assert_envelope(send(g, test_number, auth["receipt"], "wrong", bundle=bundle, key="test-api-key"), 400, "INVALID_APP_CREDENTIAL")
    ok = send(g, test_number, auth["receipt"], auth["secret"], bundle=bundle, key="test-api-key")
    assert ok.status_code == 200, ok.text
    # The push is never sent anywhere: the dev outbox keeps it listed.
    rows = wait_outbox(g, lambda rows: [r["status"] for r in rows if r["channel"] == "push"] == ["sent"])
    assert [r for r in rows if r["channel"] == "push"][0]["body"] != ""


def test_dev_mode_sends_no_push_even_to_a_configured_gateway(make_gatehouse, fake_apns):
    gw = fake_apns()
    config = dev_config()
    config["projects"][0]["ios_apps"] = [ios_app(gw)]
    g = make_gatehouse(config=config)
    push_list = "/emulator/v1/projects/demo-gatehouse/pushNotifications"
    assert g.get(push_list).json() == {"pushNotifications": []}
    r = verify(g, device(40), key=DEFAULT_API_KEY)
    assert r.status_code == 200, r.text
    listed = g.get(push_list).json()["pushNotifications"]
    assert [(p["deviceToken"], p["bundleId"], p["sandbox"]) for p in listed] == [(device(40), BUNDLE, False)]
    wait_outbox(g, lambda rows: [r["status"] for r in rows if r["channel"] == "push"] == ["sent"])
    assert gw.requests == [] and gw.connections == 0


def check(config_path):
    return subprocess.run([str(binary()), "config", "check", "-c", str(config_path)], capture_output=True, text=True)


def test_config_check_reports_gateway_key_and_curve_problems(tmp_path, fake_apns, fake_gateway):
    gw = fake_apns(start=False)
    config = production(tmp_path, fake_gateway(statuses=(200,), start=False), ios_app(gw))
    path = tmp_path / "check.json"

    def with_apns(**changes):
        c = json.loads(json.dumps(config))
        c["projects"][0]["ios_apps"][0]["apns"].update(changes)
        path.write_text(json.dumps(c))
        return check(path)

    assert with_apns().returncode == 0
    out = with_apns(allow_custom_gateway=False)
    assert out.returncode == 1 and "apns.gateway: 127.0.0.1 is not an Apple APNs gateway" in out.stdout, out.stdout
    out = with_apns(allow_custom_gateway=False, gateway="https://api.push.apple.com", sandbox_gateway="https://api.sandbox.push.apple.com")
    assert out.returncode == 0, out.stdout
    out = with_apns(key_file=str(make_wrong_curve_key(tmp_path)))
    assert out.returncode == 1 and "secp384r1" in out.stdout and "P-256" in out.stdout, out.stdout
    out = with_apns(key_file=str(tmp_path / "missing.p8"))
    assert out.returncode == 1 and "missing.p8" in out.stdout, out.stdout
    out = with_apns(key_id="short")
    assert out.returncode == 1 and "key_id" in out.stdout, out.stdout


def test_apns_send_probe(tmp_path, make_gatehouse, fake_apns, fake_gateway):
    gw = fake_apns()
    g = make_gatehouse(config=production(tmp_path, fake_gateway(statuses=(200,)), ios_app(gw)))
    out = g.tool("apns", "send", "--project", "prod-project", "--bundle", BUNDLE, "--token", device(9))
    assert "HTTP 200" in out.stdout, out.stdout
    probe = gw.wait_for(1)[0]
    assert probe["problems"] == [] and probe["path"] == "/3/device/" + device(9)
    gw.script((400, "BadDeviceToken"))
    out = g.tool("apns", "send", "--project", "prod-project", "--bundle", BUNDLE, "--token", device(9), "--sandbox", check=False)
    assert out.returncode == 1 and "HTTP 400 BadDeviceToken" in out.stdout, out.stdout
    out = g.tool("apns", "send", "--project", "prod-project", "--bundle", "com.example.unknown", "--token", device(9), check=False)
    assert out.returncode != 0 and "not a registered iOS app" in (out.stdout + out.stderr)
