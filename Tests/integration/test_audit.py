"""The audit log through the real responder and `gatehouse audit`: a row for each kind of event
(sign-in, sign-out, factor change, revocation, admin action, key rotation)
with its actor, subject, client address and outcome; filters by user and time; no secret."""
import json
import time

from conftest import Gatehouse
from phone_helpers import dev_config
from session_support import PROJECT, get_with_cookie, refresh, session_cookie, sign_out


def phone_sign_in(g, number):
    session = g.api("sendVerificationCode", {"phoneNumber": number}).json()["sessionInfo"]
    codes = g.get(f"/emulator/v1/projects/{PROJECT}/verificationCodes").json()["verificationCodes"]
    code = next(c["code"] for c in codes if c["sessionInfo"] == session)
    body = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code}).json()
    return body, code


def audit(g, *args):
    out = g.tool("audit", "--json", "--limit", "1000", *args)
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_every_kind_of_event_is_audited_with_actor_subject_client_and_outcome(make_gatehouse, tmp_path):
    g = make_gatehouse(config=dev_config())
    started = time.time()
    body, code = phone_sign_in(g, "+33612345671")
    uid = body["localId"]
    cookie = session_cookie(g, body["idToken"])
    assert get_with_cookie(g, "/demo/", cookie).status_code == 200
    assert sign_out(g, cookie).status_code in (200, 302, 303)
    # A second factor is enrolled and withdrawn by an admin; then the admin revokes and deletes.
    assert g.admin("/accounts:update", {"localId": uid, "email": "aud@example.com", "emailVerified": True}).status_code == 200
    assert g.admin("/accounts:update", {"localId": uid, "mfa": {"enrollments": [{"phoneInfo": "+16505550177"}]}}).status_code == 200
    assert g.admin("/accounts:update", {"localId": uid, "validSince": str(int(time.time()))}).status_code == 200
    # A second user: refreshed, revoked from the command line, deleted by an admin.
    second, _ = phone_sign_in(g, "+33612345672")
    r1 = refresh(g, second["refreshToken"]).json()
    g.tool("users", "revoke", second["localId"])
    g.tool("keys", "rotate")
    assert g.admin("/accounts:delete", {"localId": second["localId"]}).status_code == 200

    rows = audit(g)
    by_event = {}
    for r in rows:
        by_event.setdefault(r["event"], []).append(r)
    signin = by_event["phone.sign_up"][-1]
    assert signin["subject"] == uid and signin["actor"] == "user" and signin["client"] == "127.0.0.1" and signin["outcome"] == "ok"
    assert by_event["session.sign_out"][0]["subject"] == uid
    assert {r["actor"] for r in by_event["admin.update"]} == {"admin"}
    assert any(r["subject"] == uid for r in by_event["tokens.revoke"])
    assert any(r["actor"] == "cli" and r["subject"] == second["localId"] for r in by_event["tokens.revoke"])
    assert by_event["admin.delete"][0]["subject"] == second["localId"] and by_event["admin.delete"][0]["actor"] == "admin"
    key = by_event["key.rotate"][0]
    assert key["actor"] == "cli" and key["project"] == "*" and key["detail"].startswith("kid=")
    # Newest first, filters by user and time.
    times = [r["time"] for r in rows]
    assert times == sorted(times, reverse=True)
    mine = audit(g, "--user", uid)
    assert mine and all(r["subject"] == uid for r in mine)
    assert audit(g, "--since", "2999-01-01T00:00:00Z") == []
    assert len(audit(g, "--since", "1h")) == len(rows)
    # Nothing secret in the log: no code, no token, no cookie.
    text = g.tool("audit", "--limit", "1000").stdout + json.dumps(rows)
    for secret in [code, body["idToken"], body["refreshToken"], cookie, r1["refresh_token"]]:
        assert secret not in text
    assert time.time() - started < 60
