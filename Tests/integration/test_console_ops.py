"""The operator console's Activity, Delivery and abuse, Audit log and Keys pages through the real
nginx (docs/console.md): the charts count real sign-ins, wrong codes, refusals by budget and sends
made through the API; every action (retry, discard, release, rotate) works and is audited with the
operator as actor; a post without CSRF, a replayed form and a non-operator are refused, and change
nothing; the audit log's filters and pages."""
import re
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

import console_support as cs
from conftest import Gatehouse, store_db
from mfa_support import PROJECT, code_entry, email_link_sign_in, number, wrong

LIMITED = "ops-limited"
LIMITED_KEY = "ops-limited-key"


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    config = cs.config()
    # A project whose email-link budget refuses the second send of a client in an hour.
    config["projects"].append({"id": LIMITED, "api_keys": [LIMITED_KEY], "email_link": {"sends_per_ip_per_hour": 1}})
    g = Gatehouse(tmp_path_factory.mktemp("gh-console-ops"), config=config).start()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def op(gh):
    return cs.operator(gh)


def page(op, path):
    r = op.client.get(path)
    assert r.status_code == 200, (r.status_code, r.text[:2000])
    return r.text


def totals(html):
    """Each chart's total (data-total of its figure), by chart id."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r'<figure class="gh-chart[^"]*" id="chart-([a-z-]+)" data-total="(\d+)"', html)}


def legend(html, chart):
    """The legend texts of one chart's SVG."""
    svg = html.split(f'id="chart-{chart}"', 1)[1].split("</figure>", 1)[0]
    return re.findall(r"<text[^>]*>([^<]*) <tspan", svg.split('class="bar-chart-legend"', 1)[-1])


def notice(html):
    m = re.search(r'id="console-notice">([^<]*)<', html)
    return m.group(1) if m else None


def error(html):
    m = re.search(r'id="console-error">([^<]*)<', html)
    return m.group(1) if m else None


def last_audit_id(gh):
    with store_db(gh) as db:
        return db.execute("SELECT COALESCE(MAX(id), 0) AS m FROM audit_log").fetchone()["m"]


def audit_since(gh, since):
    with store_db(gh) as db:
        return [dict(r) for r in db.execute(
            "SELECT project_id, event, local_id, actor, outcome, detail, remote_address FROM audit_log WHERE id > ? ORDER BY id", (since,))]


def execute(gh, query, *args):
    with store_db(gh) as db:
        db.execute(query, args)
        db.commit()


def rows(gh, query, *args):
    with store_db(gh) as db:
        return [dict(r) for r in db.execute(query, args)]


def now_ms():
    return int(time.time() * 1000)


def wait(predicate, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError("never happened")


# --- Activity ----------------------------------------------------------------------------------

def phone_sign_in(gh, number, wrong_first=False):
    r = gh.api("sendVerificationCode", {"phoneNumber": number})
    assert r.status_code == 200, r.text
    session = r.json()["sessionInfo"]
    code = code_entry(gh, session)["code"]
    if wrong_first:
        bad = gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": wrong(code)})
        assert bad.status_code == 400 and "INVALID_CODE" in bad.text, bad.text
    ok = gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code})
    assert ok.status_code == 200, ok.text


def test_the_console_root_redirects_to_the_activity_page(gh, op):
    # (nginx answers this one itself, as for every location that ends with a slash.)
    r = op.client.get(cs.CONSOLE + "?project=" + PROJECT)
    assert r.status_code == 301 and r.headers["Location"].split("?")[0].endswith("/__/auth/console/"), r.headers
    html = page(op, cs.CONSOLE + "/")
    assert 'aria-current="page">Activity' in html.replace("\n", "")
    for chart in ["signins", "refused-signins", "wrong-codes", "refusals", "sms", "emails"]:
        assert f'id="chart-{chart}"' in html
    assert "<script" not in html and "style=" not in html


@pytest.mark.parametrize("range_", ["24h", "30d"])
def test_the_charts_count_real_sign_ins_wrong_codes_refusals_and_sends(gh, op, range_):
    path = f"{cs.CONSOLE}/?project={PROJECT}&range={range_}"
    # Messages queued by earlier tests are sent first, so that none lands between the two readings.
    wait(lambda: not rows(gh, "SELECT id FROM outbox WHERE status IN ('pending', 'sending') AND next_attempt_at < ?",
                          now_ms() + 60_000), timeout=30.0)
    before = totals(page(op, path))
    sms_sent = len(rows(gh, "SELECT id FROM outbox WHERE channel = 'sms' AND status = 'sent'"))
    emails_sent = len(rows(gh, "SELECT id FROM outbox WHERE channel = 'email' AND status = 'sent' AND project_id = ?", PROJECT))
    # Two phone sign-ins (one after a wrong code), an email-link sign-in; a send the budget refuses.
    phone_sign_in(gh, f"+3361{uuid.uuid4().int % 10_000_000:07d}", wrong_first=True)
    phone_sign_in(gh, number())
    r = email_link_sign_in(gh, f"act-{uuid.uuid4().hex[:8]}@example.com")
    assert r.status_code == 200, r.text
    email = {"requestType": "EMAIL_SIGNIN", "email": f"lim-{uuid.uuid4().hex[:8]}@example.com", "continueUrl": gh.url("/__/auth/health")}
    gh.api("sendOobCode", email, key=LIMITED_KEY)
    refused = gh.api("sendOobCode", email, key=LIMITED_KEY)
    assert refused.status_code == 400 and "TOO_MANY_ATTEMPTS_TRY_LATER" in refused.text, refused.text
    # The dev outbox delivers the two SMS and the emails (a refused one is never queued; the
    # limited project's first send of the hour is the first test's).
    wait(lambda: len(rows(gh, "SELECT id FROM outbox WHERE channel = 'sms' AND status = 'sent'")) >= sms_sent + 2)
    wait(lambda: len(rows(gh, "SELECT id FROM outbox WHERE channel = 'email' AND status = 'sent' AND project_id = ?", PROJECT))
         >= emails_sent + 1)
    html = page(op, path)
    after = totals(html)
    assert after["signins"] - before["signins"] == 3, (before, after)
    assert after["wrong-codes"] - before["wrong-codes"] == 1, (before, after)
    assert after["refusals"] - before["refusals"] >= 1, (before, after)
    assert after["sms"] - before["sms"] == 2, (before, after)
    # The operator's project's emails: the sign-in's link (the limited project's are its own).
    assert after["emails"] - before["emails"] == 1, (before, after)
    assert "emaillink.ip" in " ".join(legend(html, "refusals"))
    labels = " ".join(legend(html, "signins"))
    assert "Phone" in labels and "Email link" in labels
    # The other project's page has its own email.
    limited = totals(page(op, f"{cs.CONSOLE}/?project={LIMITED}&range={range_}"))
    assert limited["emails"] >= 1 and limited["signins"] == 0


def test_the_activity_page_is_localised_and_its_hours_are_utc(gh, op):
    html = page(op, f"{cs.CONSOLE}/?project={PROJECT}&hl=fr")
    assert "Connexions par méthode" in html and "Codes erronés" in html and "(UTC)" in html
    hour = datetime.now(timezone.utc).strftime("%H:00")
    assert f"({hour})" in html or f">{hour}<" in html, hour
    day = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    assert day in page(op, f"{cs.CONSOLE}/?project={PROJECT}&range=30d")


# --- Delivery ----------------------------------------------------------------------------------

def seed_message(gh, status="pending", channel="sms", recipient="+33612345678", attempts=3, error="provider said 503",
                 next_attempt=None, project=PROJECT):
    created = now_ms() - 60_000
    with store_db(gh) as db:
        db.execute("""INSERT INTO outbox (project_id, channel, recipient, subject, body, html_body, metadata, status, attempts,
                      next_attempt_at, last_error, created_at) VALUES (?, ?, ?, NULL, ?, NULL, '{}', ?, ?, ?, ?, ?)""",
                   (project, channel, recipient, "" if status == "dead" else "Your code is 123456", status, attempts,
                    next_attempt if next_attempt is not None else now_ms() + 3_600_000, error, created))
        db.commit()
        return db.execute("SELECT MAX(id) AS m FROM outbox").fetchone()["m"]


def message(gh, mid):
    found = rows(gh, "SELECT status, attempts, body, last_error, next_attempt_at FROM outbox WHERE id = ?", mid)
    return found[0] if found else None


def delivery(op, query=""):
    return page(op, f"{cs.CONSOLE}/delivery?project={PROJECT}{query}")


def find_form(html, path="/delivery", **match):
    """The console form posting to `path` whose fields include `match` (console_support.form
    cannot match a field named "action")."""
    for f in cs.forms(html):
        if f["action"].split("?")[0] == cs.CONSOLE + path and all(f["fields"].get(k) == v for k, v in match.items()):
            return f
    raise AssertionError(f"no form {match} to {path}")


def post(op, html, match, path="/delivery", **values):
    f = find_form(html, path, **match)
    return op.client.post(f["action"].replace("&amp;", "&"), data=dict(f["fields"], **values))


def test_delivery_lists_pending_failed_and_dead_messages_redacted(gh, op):
    failed = seed_message(gh, recipient="+33699887766")
    dead = seed_message(gh, status="dead", channel="email", recipient="margaret.hamilton@example.com", error="550 no such user")
    waiting = seed_message(gh, error=None, attempts=0, recipient="+14155550123")
    html = delivery(op)
    for mid in (failed, dead, waiting):
        assert f'data-id="{mid}"' in html
    assert "+33699887766" not in html and "+33•••••••66" in html
    assert "margaret.hamilton" not in html and "ma…@example.com" in html
    assert "provider said 503" in html and "550 no such user" in html and "Your code is" not in html
    # Filters: failed only (a pending message with a failed attempt), dead only.
    only_failed = delivery(op, "&status=failed")
    assert f'data-id="{failed}"' in only_failed and f'data-id="{waiting}"' not in only_failed and f'data-id="{dead}"' not in only_failed
    only_dead = delivery(op, "&status=dead")
    assert f'data-id="{dead}"' in only_dead and f'data-id="{failed}"' not in only_dead
    # A dead message has no retry, only a discard.
    find_form(html, action="discard", id=str(dead))
    with pytest.raises(AssertionError):
        find_form(html, action="retry", id=str(dead))


def test_delivery_pages_of_fifty_newest_first(gh, op):
    ids = [seed_message(gh, project=LIMITED, recipient=f"+336100{i:05d}") for i in range(55)]
    first = page(op, f"{cs.CONSOLE}/delivery?project={LIMITED}&status=failed")
    shown = [int(x) for x in re.findall(r'<tr data-id="(\d+)"', first)]
    assert shown == sorted(ids, reverse=True)[:50]
    older = re.search(r'id="outbox-older" rel="next"', first) and re.search(r'href="([^"]+)" id="outbox-older"', first).group(1)
    second = page(op, older.replace("&amp;", "&"))
    assert [int(x) for x in re.findall(r'<tr data-id="(\d+)"', second)] == sorted(ids, reverse=True)[50:]
    assert 'id="outbox-newest"' in second and 'id="outbox-older"' not in second


def test_retry_sends_again_now_and_is_audited(gh, op):
    mid = seed_message(gh)
    since = last_audit_id(gh)
    r = post(op, delivery(op), {"action": "retry", "id": str(mid)})
    assert r.status_code == 303 and "notice=retry" in r.headers["Location"], (r.status_code, r.text[:500])
    assert notice(page(op, r.headers["Location"])) == "The message will be sent again now."
    # The worker was woken and sent it (the dev outbox).
    wait(lambda: message(gh, mid)["status"] == "sent")
    events = audit_since(gh, since)
    assert [(e["event"], e["actor"], e["project_id"], e["detail"]) for e in events] == [("outbox.retry", op.actor, PROJECT, f"#{mid}")]
    assert events[0]["remote_address"]


def test_discard_makes_a_pending_message_dead_and_deletes_a_dead_one(gh, op):
    pending = seed_message(gh)
    since = last_audit_id(gh)
    r = post(op, delivery(op), {"action": "discard", "id": str(pending)})
    assert r.status_code == 303, r.text[:500]
    m = message(gh, pending)
    assert m["status"] == "dead" and m["body"] == "" and m["last_error"] == "discarded by " + op.actor
    r = post(op, delivery(op, "&status=dead"), {"action": "discard", "id": str(pending)})
    assert r.status_code == 303 and "status=dead" in r.headers["Location"]
    assert message(gh, pending) is None
    assert [(e["event"], e["actor"]) for e in audit_since(gh, since)] == [("outbox.discard", op.actor)] * 2


def test_a_message_being_sent_is_not_discarded(gh, op):
    mid = seed_message(gh)
    html = delivery(op)
    # The worker leases it between the page and the post.
    execute(gh, "UPDATE outbox SET status = 'sending', lease_until = ?, lease_token = lease_token + 1 WHERE id = ?", now_ms() + 60_000, mid)
    since = last_audit_id(gh)
    r = post(op, html, {"action": "discard", "id": str(mid)})
    assert r.status_code == 409 and error(r.text), r.status_code
    assert message(gh, mid)["status"] == "sending" and message(gh, mid)["body"]
    assert audit_since(gh, since) == []
    execute(gh, "UPDATE outbox SET status = 'dead', body = '' WHERE id = ?", mid)


def test_holds_in_force_are_listed_and_released(gh, op):
    at = now_ms()
    execute(gh, """INSERT INTO sms_holds (project_id, kind, key, held_at, expires_at, released_at, recent_count, baseline_count)
                   VALUES (?, 'prefix', '+3712012', ?, NULL, NULL, 40, 2)""", PROJECT, at - 600_000)
    execute(gh, """INSERT INTO sms_holds (project_id, kind, key, held_at, expires_at, released_at, recent_count, baseline_count)
                   VALUES (?, 'region', 'LV', ?, ?, NULL, 90, 9)""", PROJECT, at - 600_000, at + 3_600_000)
    execute(gh, """INSERT INTO sms_holds (project_id, kind, key, held_at, expires_at, released_at, recent_count, baseline_count)
                   VALUES (?, 'region', 'EE', ?, ?, NULL, 90, 9)""", PROJECT, at - 7_200_000, at - 3_600_000)
    html = delivery(op)
    assert 'data-key="+3712012"' in html and 'data-key="LV"' in html and 'data-key="EE"' not in html
    assert "40 / 2" in html and "until released" in html
    since = last_audit_id(gh)
    r = post(op, html, {"action": "release", "key": "LV"})
    assert r.status_code == 303, r.text[:500]
    after = page(op, r.headers["Location"])
    assert notice(after) == "The hold was released." and 'data-key="LV"' not in after and 'data-key="+3712012"' in after
    assert rows(gh, "SELECT released_at FROM sms_holds WHERE key = 'LV'")[0]["released_at"] is not None
    assert [(e["event"], e["actor"], e["detail"]) for e in audit_since(gh, since)] == [("sms_hold.release", op.actor, "LV")]
    # Released already: nothing to release, nothing audited.
    r = post(op, html, {"action": "release", "key": "LV"})
    assert r.status_code in (403, 409)
    r = post(op, delivery(op), {"action": "release", "key": "+3712012"})
    assert r.status_code == 303
    assert len(audit_since(gh, since)) == 2


def test_sends_per_country_per_day(gh, op):
    day = 86_400_000
    today = now_ms() // day * day
    for region, offset, n in [("FR", 0, 7), ("FR", 1, 3), ("GB", 0, 2), ("BR", 5, 11), ("FR", 31, 50)]:
        execute(gh, "INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES (?, ?, ?, ?)",
                f"activity:{PROJECT}:sms_region:{region}", today - offset * day, n, today + 30 * day)
    html = delivery(op)
    table = html.split('id="regions-table"', 1)[1].split("</table>", 1)[0]
    header = re.findall(r'<th scope="col" class="gh-num">([^<]+)</th>', table)
    assert header[:3] == ["BR", "FR", "GB"], header
    today_label = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    row = re.search(rf'<tr data-day="{today_label}">(.*?)</tr>', table).group(1)
    assert re.findall(r'<td class="gh-num">(\d+)</td>', row)[:4] == ["0", "7", "2", "9"]
    foot = table.split("<tfoot>", 1)[1]
    assert re.findall(r'<td class="gh-num">(\d+)</td>', foot)[:4] == ["11", "10", "2", "23"]
    assert "FR" in " ".join(legend(html, "regions"))


# --- Refusals ----------------------------------------------------------------------------------

def test_a_post_without_csrf_a_replayed_form_and_a_non_operator_are_refused(gh, op):
    mid = seed_message(gh)
    html = delivery(op)
    since = last_audit_id(gh)
    # No CSRF token; no CSRF cookie.
    r = post(op, html, {"action": "discard", "id": str(mid)}, csrf="")
    assert r.status_code == 403 and error(r.text), r.status_code
    bare = op.client.without("__Host-gh_csrf")
    f = find_form(html, action="discard", id=str(mid))
    r = bare.post(f["action"], data=f["fields"])
    assert r.status_code == 403
    assert message(gh, mid)["status"] == "pending"
    # A form used once is refused the second time (here: a retry, then its replay).
    f = find_form(html, action="retry", id=str(mid))
    assert op.client.post(f["action"], data=f["fields"]).status_code == 303
    replay = op.client.post(f["action"], data=f["fields"])
    assert replay.status_code == 403 and error(replay.text) == "This form was already sent or has expired. Reload the page and try again."
    # A form token is one action's on one message: a discard's token does not retry another.
    other = seed_message(gh)
    f = find_form(delivery(op), action="discard", id=str(other))
    assert op.client.post(f["action"], data=dict(f["fields"], action="retry")).status_code == 403
    keys_form = find_form(page(op, f"{cs.CONSOLE}/keys?project={PROJECT}"), "/keys")
    assert op.client.post(keys_form["action"], data=dict(keys_form["fields"], csrf="x" + keys_form["fields"]["csrf"])).status_code == 403
    assert [e["event"] for e in audit_since(gh, since)] == ["outbox.retry"]
    consoled = lambda: [e["event"] for e in audit_since(gh, since) if e["event"].split(".")[0] in ("outbox", "sms_hold", "key")]
    # Someone signed in with both factors who is not an operator: 403 on every page and post, nothing said.
    user = cs.signed_in_user(gh, "nobody")
    for path in ["/", "/delivery", "/audit", "/keys"]:
        r = user.client.get(cs.CONSOLE + path + "?project=" + PROJECT)
        assert r.status_code == 403 and "operator" not in r.text.lower(), path
    for path, fields in [("/delivery", {"action": "discard", "id": str(other)}), ("/keys", {})]:
        r = user.client.post(cs.CONSOLE + path + "?project=" + PROJECT, data=dict(fields, **{k: find_form(html, action="discard")["fields"][k] for k in ("csrf", "formToken")}))
        assert r.status_code == 403, path
    assert message(gh, other)["status"] == "pending"
    # Not signed in: to the sign-in page.
    r = cs.Browser(gh).get(cs.CONSOLE + "/audit")
    assert r.status_code in (302, 303) and "/__/auth/" in r.headers["Location"]
    assert consoled() == ["outbox.retry"]


# --- Audit log ---------------------------------------------------------------------------------

def audit_page(op, **query):
    q = "".join(f"&{k}={v}" for k, v in query.items())
    html = page(op, f"{cs.CONSOLE}/audit?project={PROJECT}{q}")
    return html, [(m.group(1), m.group(2)) for m in re.finditer(r'<tr data-id="(\d+)" data-event="([^"]+)">', html)]


def test_audit_log_filters_by_user_actor_event_and_time(gh, op):
    uid = "trail-" + uuid.uuid4().hex[:8]
    # Ids grow with time (the log is written in time order): the rows start after every row so
    # far, a second apart.
    base = (now_ms() // 1000 + 1) * 1000
    with store_db(gh) as db:
        for i in range(60):
            db.execute("""INSERT INTO audit_log (project_id, event, local_id, remote_address, detail, actor, outcome, at)
                          VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                       (PROJECT, "phone.sign_in" if i % 2 else "admin.update", uid, f"198.51.100.{i}", f"step {i}",
                        "admin" if i % 2 == 0 else None, "refused" if i == 59 else "ok", base + i * 1000))
        db.commit()
    html, got = audit_page(op, uid=uid)
    assert len(got) == 50 and 'id="audit-older"' in html
    assert "step 59" in html and "198.51.100.59" in html and "gh-badge gh-bad\">refused" in html
    older = re.search(r'href="([^"]+)" id="audit-older"', html).group(1).replace("&amp;", "&")
    second = page(op, older)
    assert len(re.findall(r'<tr data-id=', second)) == 10 and "step 0<" in second
    # An event and an actor.
    _, events = audit_page(op, uid=uid, event="admin.update")
    assert len(events) == 30 and {e for _, e in events} == {"admin.update"}
    _, by_admin = audit_page(op, uid=uid, actor="admin")
    assert len(by_admin) == 30
    # A time range (UTC, to the second; "to" takes its whole second): steps 10 … 19.
    fmt = lambda ms: datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    html, ranged = audit_page(op, uid=uid, **{"from": fmt(base + 10_000), "to": fmt(base + 19_000)})
    assert len(ranged) == 10 and "step 19" in html and "step 10" in html and "step 20" not in html and "step 9<" not in html
    # The operator's own actions, by actor; a bad time.
    _, mine = audit_page(op, actor=op.actor)
    assert all(e in ("outbox.retry", "outbox.discard", "sms_hold.release", "key.rotate") for _, e in mine)
    r = op.client.get(f"{cs.CONSOLE}/audit?project={PROJECT}&from=yesterday")
    assert r.status_code == 400 and error(r.text)
    r = op.client.get(f"{cs.CONSOLE}/audit?project={PROJECT}&uid=%00x")
    assert r.status_code == 400
    # Every project: the key rotations (project "*") are there.
    html = page(op, f"{cs.CONSOLE}/audit?project={PROJECT}&all=1&event=key.rotate")
    assert 'id="audit-table"' in html or 'id="audit-empty"' in html


# --- Keys --------------------------------------------------------------------------------------

def test_keys_are_listed_without_private_halves_and_rotated(gh, op):
    html = page(op, f"{cs.CONSOLE}/keys?project={PROJECT}")
    current = re.findall(r'<tr data-kid="([0-9a-f]+)" data-state="current">', html)
    assert len(current) == 1
    assert "PRIVATE" not in html and "BEGIN" not in html
    since = last_audit_id(gh)
    r = post(op, html, {}, "/keys")
    assert r.status_code == 303, r.text[:500]
    after = page(op, r.headers["Location"])
    assert notice(after) == "A new signing key signs from now on."
    new = re.findall(r'<tr data-kid="([0-9a-f]+)" data-state="current">', after)
    assert len(new) == 1 and new != current
    assert f'data-kid="{current[0]}" data-state="retired"' in after and "published until" in after
    events = audit_since(gh, since)
    assert [(e["event"], e["actor"], e["project_id"], e["detail"]) for e in events] == [("key.rotate", op.actor, "*", f"kid={new[0]}")]
    # Both are published; a token signed now carries the new kid.
    kids = {k["kid"] for k in gh.get("/.well-known/jwks.json").json()["keys"]}
    assert {current[0], new[0]} <= kids
    html = page(op, f"{cs.CONSOLE}/audit?project={PROJECT}&all=1&event=key.rotate")
    assert f"kid={new[0]}" in html
