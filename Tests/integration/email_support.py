"""Helpers for the email-link tests: configs, a local SMTP sink, the dev outbox listing, and direct
store access for states the API cannot reach quickly (an expired link, an unverified account)."""
import email
import email.policy
import hashlib
import re
import threading
import time
from urllib.parse import parse_qs, unquote, urlsplit

import jwt
import requests

from conftest import store_db

ANDROID_PRINT = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"


def project(**overrides) -> dict:
    """The dev project used by the email tests (high per-IP limit: every test comes from 127.0.0.1)."""
    p = {
        "id": "demo-gatehouse",
        "api_keys": ["test-api-key"],
        "authorized_domains": ["localhost", "127.0.0.1", "app.example.com", "links.example.com"],
        "ios_apps": [{"bundle_id": "com.example.gatehouse.demo", "team_id": "DEMOTEAM01",
                      "app_id": "1:123456789:ios:abcdef0123456789"}],
        "android_apps": [{"package_name": "com.example.gatehouse", "sha256_cert_fingerprints": [ANDROID_PRINT],
                          "url_schemes": ["gatehouse-demo"]}],
        "email_link": {"sends_per_ip_per_hour": 10000},
    }
    p.update(overrides)
    return p


def config(email_section=None, **project_overrides) -> dict:
    return {"mode": "dev", "projects": [project(**project_overrides)], "email": email_section or {"transport": "dev"}}


def oob_codes(g) -> list:
    r = g.get("/emulator/v1/projects/demo-gatehouse/oobCodes")
    assert r.status_code == 200, r.text
    return r.json()["oobCodes"]


def latest_link(g, address: str, request_type: str = "EMAIL_SIGNIN") -> dict:
    """The newest dev-outbox entry for `address` (waits briefly for the outbox worker)."""
    for _ in range(50):
        found = [c for c in oob_codes(g) if c["email"] == address.lower() and c["requestType"] == request_type]
        if found:
            return found[-1]
        time.sleep(0.05)
    raise AssertionError(f"no {request_type} link for {address}")


def db(g):
    return store_db(g)


def expire_link(g, oob_code: str):
    """Moves a link's expiry into the past (the server checks it against its own clock)."""
    with db(g) as c:
        n = c.execute("UPDATE email_links SET expires_at = 1000 WHERE code_hash = ?",
                      (hashlib.sha256(oob_code.encode()).digest(),)).rowcount
    assert n == 1


def insert_account(g, local_id: str, address: str, verified: bool = False, password_hash: str | None = None):
    """An account as an import would leave it (no API creates unverified accounts here)."""
    with db(g) as c:
        c.execute("INSERT INTO accounts (project_id, local_id, email, email_verified, password_hash, created_at, providers) "
                  "VALUES ('demo-gatehouse', ?, ?, ?, ?, ?, ?)",
                  (local_id, address, 1 if verified else 0, password_hash, int(time.time() * 1000),
                   f'[{{"providerId":"password","rawId":"{address}","email":"{address}"}}]'))


def link_params(link: str) -> dict:
    """Query parameters as an app sees them: the query decoded once, split on & and the first =."""
    query = unquote(urlsplit(link).query)
    out = {}
    for pair in query.split("&"):
        k, _, v = pair.partition("=")
        out[k] = v
    return out


def action_params(link: str) -> dict:
    """The action URL's parameters, unwrapping a /__/auth/links?link= wrapper."""
    parts = urlsplit(link)
    if parts.path == "/__/auth/links":
        return action_params(parse_qs(parts.query)["link"][0])
    return {k: v[0] for k, v in parse_qs(parts.query).items()}


def jwks_verify(g, token: str, audience: str = "demo-gatehouse", issuer: str | None = None) -> dict:
    keys = requests.get(g.url("/.well-known/jwks.json"), timeout=10).json()["keys"]
    kid = jwt.get_unverified_header(token)["kid"]
    key = jwt.PyJWK([k for k in keys if k["kid"] == kid][0]).key
    return jwt.decode(token, key, algorithms=["RS256"], audience=audience,
                      issuer=issuer or f"https://securetoken.google.com/{audience}")


class SMTPSink:
    """A local SMTP server (aiosmtpd) on 127.0.0.1 that keeps every message it receives."""

    def __init__(self, port: int):
        from aiosmtpd.controller import Controller

        self.port = port
        self.messages = []
        self.envelopes = []
        self.cond = threading.Condition()
        sink = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                with sink.cond:
                    sink.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
                    sink.messages.append(envelope.original_content or envelope.content)
                    sink.cond.notify_all()
                return "250 Message accepted for delivery"

        self.controller = Controller(Handler(), hostname="127.0.0.1", port=port)

    def __enter__(self):
        self.controller.start()
        return self

    def __exit__(self, *exc):
        self.controller.stop()

    def wait(self, count: int = 1, timeout: float = 15.0) -> list:
        """Waits until `count` messages arrived; returns them parsed (email.message.EmailMessage)."""
        deadline = time.time() + timeout
        with self.cond:
            while len(self.messages) < count:
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError(f"expected {count} message(s), got {len(self.messages)}")
                self.cond.wait(left)
            return [email.message_from_bytes(m, policy=email.policy.default) for m in self.messages[:count]]


def smtp_section(port: int, **extra) -> dict:
    s = {"transport": "smtp", "url": f"smtp://127.0.0.1:{port}", "from": "signin@gatehouse.test",
         "from_name": "Gatehouse Anmeldung für Tests", "starttls": False}
    s.update(extra)
    return s


def link_from_mail(msg) -> str:
    """The sign-in link of a received message, from its plain-text part."""
    text = msg.get_body(preferencelist=("plain",)).get_content()
    m = re.search(r"https?://\S+/__/auth/(?:action|links)\?\S+", text)
    assert m, text
    return m.group(0)
