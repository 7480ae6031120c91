"""The console's Activity, Delivery and abuse, Audit log and Keys pages in headless Chromium, at a
phone's width (420 CSS px) and a desktop's (1280), after real sign-ins, a wrong code and a budget's
refusal, with seeded outbox messages, a hold and sends per country. Whole-page screenshots go to
test-output/; the checks are what a person would see: the charts drawn (SVG with bars), the page
never scrolling sideways (wide tables scroll inside their panel), the actions reachable."""
import time
import uuid

import pytest
from selenium.webdriver.common.by import By

import console_support as cs
from conftest import Gatehouse, store_db
from mfa_support import PROJECT, code_entry, email_link_sign_in, number, wrong
from test_console_users_pages import browser, no_page_scroll, shot, signed_in, wait_for


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    config = cs.config()
    config["projects"].append({"id": "ops-limited", "api_keys": ["ops-limited-key"], "email_link": {"sends_per_ip_per_hour": 1}})
    g = Gatehouse(tmp_path_factory.mktemp("gh-console-ops-pages"), config=config).start()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def op(gh):
    """An operator, after a day's worth of things to show."""
    operator = cs.operator(gh, "op")
    for i in range(3):
        r = gh.api("sendVerificationCode", {"phoneNumber": number()})
        session = r.json()["sessionInfo"]
        code = code_entry(gh, session)["code"]
        if i == 0:
            gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": wrong(code)})
        assert gh.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code}).status_code == 200
    for _ in range(2):
        assert email_link_sign_in(gh, f"p-{uuid.uuid4().hex[:8]}@example.com").status_code == 200
    email = {"requestType": "EMAIL_SIGNIN", "email": "limited@example.com", "continueUrl": gh.url("/__/auth/health")}
    for _ in range(3):
        gh.api("sendOobCode", email, key="ops-limited-key")
    now = int(time.time() * 1000)
    hour, day = 3_600_000, 86_400_000
    with store_db(gh) as db:
        # Earlier hours and days (rolled up from the audit log would need a day of waiting): counters as the flows write them.
        for h in range(1, 24 * 30, 5):
            start = (now // hour - h) * hour
            for series, n in [("signin:phone:ok", 3 + h % 7), ("signin:email_link:ok", 1 + h % 4), ("signin:passkey:ok", h % 3),
                              ("signin:mfa:ok", h % 5 // 2), ("wrong_code:phone", h % 3), ("sent:sms", 3 + h % 7), ("sent:email", 1 + h % 4)]:
                db.execute("INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES (?, ?, ?, ?)",
                           (f"activity:{PROJECT}:{series}", start, n, start + 31 * day))
            db.execute("INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (f"activity:{PROJECT}:rolled", start, 1, start + 31 * day))
        for d in range(30):
            start = (now // day - d) * day
            for region, n in [("FR", 20 + d % 9), ("GB", 8 + d % 5), ("US", 5 + d % 3), ("DE", d % 4), ("BR", d % 2), ("IN", d % 3), ("LV", 1)]:
                db.execute("INSERT INTO limit_counters (bucket, window_start, count, expires_at) VALUES (?, ?, ?, ?)",
                           (f"activity:{PROJECT}:sms_region:{region}", start, n, start + 31 * day))
        for i, (channel, recipient, status, error) in enumerate([
                ("sms", "+33612345678", "pending", "HTTP 503 from the provider: try again later"),
                ("email", "grace.hopper@example.com", "pending", None),
                ("sms", "+4915112345678", "dead", "HTTP 400: the number is not a mobile number"),
                ("email", "al@example.org", "dead", "550 5.1.1 mailbox unavailable")]):
            db.execute("""INSERT INTO outbox (project_id, channel, recipient, body, metadata, status, attempts, next_attempt_at, last_error,
                          created_at) VALUES (?, ?, ?, ?, '{}', ?, ?, ?, ?, ?)""",
                       (PROJECT, channel, recipient, "" if status == "dead" else "body", status, 0 if error is None else 3 + i,
                        now + 600_000, error, now - (4 - i) * 60_000))
        # The last day's messages as providers reported them (the receipts table).
        for i, (channel, provider, region, delivery) in enumerate(
                [("sms", "twilio", "FR", "delivered")] * 7 + [("sms", "twilio", "FR", "undelivered")] * 2
                + [("sms", "twilio", "GB", "delivered")] * 3 + [("sms", "twilio", "GB", "sent")]
                + [("whatsapp", "twilio", "BR", "delivered")] * 2 + [("voice", "backup", "IN", "failed")]):
            db.execute("""INSERT INTO outbox (project_id, channel, recipient, body, metadata, status, attempts, next_attempt_at, created_at,
                          sent_at, provider, provider_message_id, delivery, delivery_error, delivery_at, region)
                          VALUES (?, ?, ?, '', '{}', 'sent', 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                       (PROJECT, channel, "+33600000000", now - 3_600_000, now - 3_600_000 + i, now - 3_590_000, provider, f"SM{i:032x}",
                        delivery, {"undelivered": "30003", "failed": "13224"}.get(delivery), now - 3_500_000, region))
        db.execute("""INSERT INTO sms_holds (project_id, kind, key, held_at, expires_at, released_at, recent_count, baseline_count)
                      VALUES (?, 'prefix', '+3712012', ?, NULL, NULL, 41, 3)""", (PROJECT, now - 900_000))
        db.execute("""INSERT INTO sms_holds (project_id, kind, key, held_at, expires_at, released_at, recent_count, baseline_count)
                      VALUES (?, 'region', 'LV', ?, ?, NULL, 96, 12)""", (PROJECT, now - 600_000, now + 20 * hour))
        db.commit()
    gh.tool("keys", "rotate")
    return operator


PAGES = [
    ("activity", "/", "chart-signins"),
    ("activity-30d", "/?range=30d", "chart-signins"),
    ("delivery", "/delivery", "outbox-table"),
    ("audit", "/audit", "audit-table"),
    ("keys", "/keys", "keys-table"),
]


@pytest.mark.parametrize("width", [420, 1280])
def test_console_ops_pages(gh, op, output_dir, width):
    d = browser(width)
    try:
        signed_in(d, gh, op)
        for name, path, marker in PAGES:
            sep = "&" if "?" in path else "?"
            d.get(gh.url(cs.CONSOLE + path + sep + "project=" + PROJECT))
            wait_for(d, marker)
            no_page_scroll(d)
            shot(d, output_dir, f"{name}-{width}")
            if name.startswith("activity"):
                figures = d.find_elements(By.CSS_SELECTOR, "figure.gh-chart")
                assert len(figures) == 6
                for f in figures:
                    svg = f.find_element(By.TAG_NAME, "svg")
                    assert svg.size["width"] > 200 and svg.size["height"] > 60, svg.size
                    # On a phone a chart keeps a readable size and scrolls inside its figure.
                    assert svg.size["width"] <= max(width, 540)
                assert len(d.find_elements(By.CSS_SELECTOR, "#chart-signins svg rect")) > 20
            if name == "delivery":
                assert d.find_element(By.CSS_SELECTOR, "#holds-table").is_displayed()
                receipts = d.find_element(By.ID, "receipts-table").text
                assert "twilio" in receipts and "77 %" in receipts and "backup" in receipts and "WhatsApp" in receipts, receipts
                assert len(d.find_elements(By.CSS_SELECTOR, "#chart-regions svg rect")) > 20
                assert "grace.hopper" not in d.page_source
                # The sent messages, each with what its provider reported.
                d.get(gh.url(cs.CONSOLE + "/delivery?status=sent&project=" + PROJECT))
                wait_for(d, "outbox-table")
                no_page_scroll(d)
                shot(d, output_dir, f"delivery-sent-{width}")
                cells = [" ".join(c.text.split()) for c in d.find_elements(By.CSS_SELECTOR, "#outbox-table td.outbox-delivery")]
                assert len(cells) >= 16, cells  # the seeded ones and the sign-ins' own
                assert "Undelivered twilio error 30003" in cells and "Failed backup error 13224" in cells and "Delivered twilio" in cells, cells
                assert len(d.find_elements(By.CSS_SELECTOR, '#outbox-table [data-delivery="undelivered"].gh-bad')) == 2
                assert not d.find_elements(By.CSS_SELECTOR, "#outbox-table .outbox-retry, #outbox-table .outbox-discard")
        # French, on the phone's width too.
        d.get(gh.url(cs.CONSOLE + "/?project=" + PROJECT + "&hl=fr"))
        wait_for(d, "chart-signins")
        no_page_scroll(d)
        shot(d, output_dir, f"activity-fr-{width}")
        # An action from the page: rotate the key, and the notice after it.
        d.get(gh.url(cs.CONSOLE + "/keys?project=" + PROJECT))
        d.find_element(By.ID, "rotate-submit").click()
        wait_for(d, "console-notice")
        assert len(d.find_elements(By.CSS_SELECTOR, 'tr[data-state="current"]')) == 1
        shot(d, output_dir, f"keys-rotated-{width}")
    finally:
        d.quit()
