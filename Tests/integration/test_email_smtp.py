"""Real delivery: Gatehouse sends sign-in mail through a local SMTP server (aiosmtpd) or a
sendmail-compatible command; the test parses the MIME message and completes sign-in with its link."""
import email
import email.policy
import html
import json
import subprocess
import re
import sys
import time
from email.utils import parseaddr, parsedate_to_datetime

from conftest import binary, chromium_driver, free_port
from email_support import SMTPSink, config, db, link_from_mail, smtp_section

FAKE_SENDMAIL = """
import sys
data = sys.stdin.buffer.read()
open(sys.argv[1], "ab").write(data)
open(sys.argv[1] + ".args", "w").write(" ".join(sys.argv[2:]))
"""


def request_link(g, address, locale):
    r = g.api("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": address, "continueUrl": f"{g.base}/__/auth/health"},
              headers={"X-Firebase-Locale": locale})
    assert r.status_code == 200, r.text


def check_message(msg, raw: bytes, address: str, subject_prefix: str):
    # Headers: encoded-words for the non-ASCII subject and display name, Date, Message-ID, MIME-Version.
    if not subject_prefix.isascii():
        assert re.search(rb"^Subject: =\?UTF-8\?B\?", raw, re.M), raw[:600]
    else:
        header = re.search(rb"^Subject: .*?\r\n(?! )", raw, re.M | re.S).group(0)
        assert b"=?" not in header and header.replace(b"\r\n ", b" ").startswith(b"Subject: " + subject_prefix.encode())
    assert re.search(rb"^From: =\?UTF-8\?B\?", raw, re.M)
    assert msg["Subject"].startswith(subject_prefix), msg["Subject"]
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", msg["Subject"])
    name, sender = parseaddr(str(msg["From"]))
    assert name == "Gatehouse Anmeldung für Tests" and sender == "signin@gatehouse.test"
    assert parseaddr(str(msg["To"]))[1] == address
    assert abs(time.time() - parsedate_to_datetime(msg["Date"]).timestamp()) < 120
    assert re.fullmatch(r"<gatehouse\.\d+\.\d+@gatehouse\.test>", msg["Message-ID"])
    assert msg["MIME-Version"] == "1.0"
    assert msg.get_content_type() == "multipart/alternative"
    # Every line ends in CRLF and stays within the RFC 5322 limit.
    lines = raw.split(b"\r\n")
    assert all(b"\n" not in line and len(line) <= 78 for line in lines), [l for l in lines if len(l) > 78][:3]
    parts = list(msg.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    for p in parts:
        assert p.get_content_charset() == "utf-8" and p["Content-Transfer-Encoding"] == "quoted-printable"
    text = parts[0].get_content()
    markup = parts[1].get_content()
    link = link_from_mail(msg)
    hrefs = [html.unescape(h) for h in re.findall(r'href="([^"]+)"', markup)]
    assert hrefs and all(h == link for h in hrefs)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text), "the body carries the timestamp"
    return link, text, markup


def test_smtp_round_trip_in_french_and_german(make_gatehouse, output_dir):
    port = free_port()
    with SMTPSink(port) as sink:
        g = make_gatehouse(config(email_section=smtp_section(port)))
        request_link(g, "Zoe.Fr@Example.com", "fr")
        request_link(g, "Juergen@Example.com", "de-DE")
        fr, de = sink.wait(2)
        raws = sink.messages[:2]
        assert sink.envelopes[0] == ("signin@gatehouse.test", ["Zoe.Fr@Example.com"])

        link, text, markup = check_message(fr, raws[0], "Zoe.Fr@Example.com", "Connexion à demo-gatehouse (demandée le ")
        assert "Me connecter" in markup and "expire dans 30 minutes" in text and 'lang="fr"' in markup
        assert "lang=fr" in link
        save_rendering(markup, output_dir / "mail-fr")
        r = g.api("signInWithEmailLink", {"email": "zoe.fr@example.com", "oobCode": re.search(r"oobCode=([\w-]+)", link).group(1)})
        assert r.status_code == 200 and r.json()["isNewUser"] is True

        link_de, text_de, _ = check_message(de, raws[1], "Juergen@Example.com", "Anmeldung bei demo-gatehouse (angefordert am ")
        assert "läuft in 30 Minuten ab" in text_de and "lang=de" in link_de

    # Once sent, the outbox keeps neither body nor link.
    with db(g) as c:
        rows = c.execute("SELECT status, body, html_body, metadata FROM outbox").fetchall()
    assert rows and all(r == ("sent", "", None, "{}") for r in rows)


def save_rendering(markup: str, path):
    """Keeps the HTML part and a screenshot of it as a mail client would show it."""
    path.with_suffix(".html").write_text(markup, encoding="utf-8")
    d = chromium_driver(width=600, height=800)
    try:
        d.get(path.with_suffix(".html").as_uri())
        d.save_screenshot(str(path.with_suffix(".png")))
    finally:
        d.quit()


def test_a_message_waits_for_the_smtp_server_and_is_retried(make_gatehouse):
    port = free_port()
    g = make_gatehouse(config(email_section=smtp_section(port)))
    request_link(g, "late@example.com", "en")
    time.sleep(0.5)
    with db(g) as c:
        status, attempts, error = c.execute("SELECT status, attempts, last_error FROM outbox").fetchone()
    assert status == "pending" and attempts == 1 and error
    with SMTPSink(port) as sink:
        (msg,) = sink.wait(1, timeout=20)
    assert msg["Subject"].startswith("Sign in to demo-gatehouse (requested ")
    assert "/__/auth/action?apiKey=" in link_from_mail(msg)


def test_sendmail_command_gets_the_whole_message(make_gatehouse, tmp_path):
    script = tmp_path / "fake_sendmail.py"
    script.write_text(FAKE_SENDMAIL)
    out = tmp_path / "mail.eml"
    section = {"transport": "sendmail", "from": "signin@gatehouse.test", "from_name": "Gatehouse Anmeldung für Tests",
               "command": [sys.executable, str(script), str(out), "-t", "-i"]}
    g = make_gatehouse(config(email_section=section))
    request_link(g, "mail@example.com", "pt")
    for _ in range(100):
        if out.exists() and out.stat().st_size > 0:
            break
        time.sleep(0.05)
    raw = out.read_bytes()
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    check_message(msg, raw, "mail@example.com", "Entrar em demo-gatehouse (pedido em ")
    assert (tmp_path / "mail.eml.args").read_text() == "-t -i"


def check_config(folder, cfg) -> subprocess.CompletedProcess:
    path = folder / "gatehouse.json"
    path.write_text(json.dumps(cfg))
    return subprocess.run([str(binary()), "config", "check", "--config", str(path)], capture_output=True, text=True)


def test_config_check_reports_email_problems(tmp_path):
    bad = config(email_section={"transport": "smtp", "from": "nope", "url": "http://mail.example.com", "password": "x",
                                "starttls": "yes", "colour": "blue"})
    r = check_config(tmp_path, bad)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    for expected in ["email.colour: unknown key", "email.from: 'nope' is not an email address", "email.url: expected smtp://",
                     "email.username: required when a password is set", "email.starttls: expected true or false"]:
        assert expected in out, out
    (tmp_path / "b").mkdir()
    missing = config(email_section={"transport": "sendmail", "from": "a@example.com", "command": ["/nonexistent/sendmail"]})
    r = check_config(tmp_path / "b", missing)
    assert r.returncode != 0 and "email.command: '/nonexistent/sendmail' is not an executable file" in r.stdout + r.stderr
