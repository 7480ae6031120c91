"""Helpers for the phone sign-in tests: a fake SMS gateway, direct store access, app tokens,
production-mode configurations."""
import base64
import hashlib
import json
import os
import secrets
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import binary, free_port, store_db

TEST_NUMBERS = {
    "+15555550100": "123456",
    "+15555550101": "111111",
    "+15555550102": "222222",
    "+15555550103": "333333",
    "+15555550104": "444444",
}
ADMIN_TOKEN = "admin-" + "x" * 40
PROD_API_KEY = "prod-api-key-0123456789"


class FakeGateway:
    """A local HTTP server standing in for an SMS gateway: records every request, answers with the
    next status from `statuses` (the last one repeats). Can start later than it is created, to
    play a gateway that is down at first."""

    def __init__(self, statuses=(201,), port=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.statuses = list(statuses)
        self.requests = []
        self.lock = threading.Lock()
        self.server = None

    def start(self):
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with gateway.lock:
                    gateway.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                    status = gateway.statuses.pop(0) if len(gateway.statuses) > 1 else gateway.statuses[0]
                payload = json.dumps({"sid": "SM" + secrets.token_hex(8), "message": f"status {status}"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def wait_for(self, count, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if len(self.requests) >= count:
                    return list(self.requests)
            time.sleep(0.05)
        raise AssertionError(f"expected {count} request(s) at the fake gateway, got {len(self.requests)}")

    def json_bodies(self):
        with self.lock:
            return [json.loads(r["body"]) for r in self.requests]


@pytest.fixture
def fake_gateway():
    started = []

    def make(statuses=(201,), start=True):
        g = FakeGateway(statuses)
        started.append(g)
        return g.start() if start else g

    yield make
    for g in started:
        g.stop()


def code_in(text: str) -> str:
    """The code of an SMS from its origin-bound last line `@domain #123456`."""
    last = text.strip().splitlines()[-1]
    assert last.startswith("@") and " #" in last, text
    return last.rsplit("#", 1)[1]


# --- The store, read and written directly (what a second instance or an operator would see) -----

def db(gh):
    return store_db(gh)


def sql(gh, query, *args):
    with db(gh) as conn:
        rows = conn.execute(query, args).fetchall()
    return rows


def session_hash(session_info: str) -> bytes:
    return hashlib.sha256(session_info.encode()).digest()


def expire_session(gh, session_info: str):
    """Moves a code's expiry into the past (real-time expiry would take minutes)."""
    sql(gh, "UPDATE phone_verifications SET expires_at = 1 WHERE session_hash = ?", session_hash(session_info))


def age_session(gh, session_info: str, seconds: int):
    """Pretends a code was issued `seconds` earlier (for the 60 s resend rule)."""
    sql(gh, "UPDATE phone_verifications SET created_at = created_at - ? WHERE session_hash = ?",
        seconds * 1000, session_hash(session_info))


def mint_app_token(gh, project: str, api_key: str = "", app: str = "web") -> str:
    """An app token as the app verification flow stores it: random, only its SHA-256 kept."""
    token = "ghat1." + base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    now = int(time.time() * 1000)
    sql(gh, "INSERT INTO app_tokens (token_hash, project_id, api_key, app_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        hashlib.sha256(token.encode()).digest(), project, api_key, app, now, now + 120_000)
    return token


def outbox(gh):
    return sql(gh, "SELECT * FROM outbox ORDER BY id")


def wait_outbox(gh, predicate, timeout=10.0):
    deadline = time.time() + timeout
    rows = []
    while time.time() < deadline:
        rows = outbox(gh)
        if predicate(rows):
            return rows
        time.sleep(0.05)
    raise AssertionError(f"outbox never matched; last: {[dict(r) for r in rows]}")


def decode_jwt(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


# --- Configurations --------------------------------------------------------------------------

def dev_config(**phone):
    """Dev mode with test numbers and a verification limit high enough for a whole module."""
    settings = {"verify_attempts_per_ip_per_5min": 10000}
    settings.update(phone)
    return {"mode": "dev", "projects": [{"id": "demo-gatehouse", "test_phone_numbers": TEST_NUMBERS, "phone": settings}]}


# Email transports a production configuration may use; the first that `config check` accepts wins.
EMAIL_CANDIDATES = [
    {"transport": "sendmail", "command": "/bin/true"},
    {"transport": "command", "command": "/bin/true"},
    {"transport": "smtp", "url": "smtp://127.0.0.1:2525", "from": "noreply@example.test"},
    {"transport": "smtp", "host": "127.0.0.1", "port": 2525, "from": "noreply@example.test"},
]


def production_config(tmp_path: Path, sms: dict, **project):
    """A production configuration (app verification and send limits on); skips the test when this
    build cannot run production mode (it needs a non-dev email transport)."""
    p = {"id": "prod-project", "api_keys": [PROD_API_KEY], "authorized_domains": ["127.0.0.1", "localhost"],
         "test_phone_numbers": TEST_NUMBERS, "sms_origin_domain": "auth.example.test",
         "sms_regions": ["FR", "DE", "US"]}
    p.update(project)
    base = {"mode": "production", "public_origin": "https://auth.example.test", "admin_token": ADMIN_TOKEN,
            "sms": sms, "projects": [p]}
    problems = ""
    for email in EMAIL_CANDIDATES:
        config = dict(base, email=email)
        path = tmp_path / f"candidate-{secrets.token_hex(4)}.json"
        path.write_text(json.dumps(config))
        out = subprocess.run([str(binary()), "config", "check", "-c", str(path)], capture_output=True, text=True)
        if out.returncode == 0:
            return config
        problems = out.stdout
        if "email" not in problems:
            raise AssertionError(problems)
    pytest.skip("production mode needs a non-dev email transport, which this build does not have yet:\n" + problems)
