"""Shared fixtures: the real responder behind the real nginx on loopback, started per test module.

Each `gatehouse` fixture runs `gatehouse dev --port <free port> --data <tmp dir>` (optionally
with a config file), waits for its `ready` line, and stops it with SIGTERM at the end.
"""
import contextlib
import json
import os
import random
import uuid
import secrets
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = Path(os.environ.get("GATEHOUSE_TEST_OUTPUT", ROOT / "test-output"))
DEFAULT_API_KEY = "test-api-key"
# The store every Gatehouse of the run uses: the SQLite file in its data folder, or, with
# GATEHOUSE_TEST_STORE=postgresql, a fresh database of its own on the cluster named by
# GATEHOUSE_TEST_POSTGRES_URL (scripts/test.sh runs the suite both ways).
TEST_STORE = os.environ.get("GATEHOUSE_TEST_STORE", "sqlite")


def binary() -> Path:
    """The gatehouse binary built by `make build` (debug) unless GATEHOUSE_BIN says otherwise."""
    env = os.environ.get("GATEHOUSE_BIN")
    if env:
        return Path(env)
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return Path(out.stdout.strip()) / "gatehouse"


def new_postgres_database() -> str:
    """A fresh database on the run's cluster; its URL."""
    import psycopg2
    admin = os.environ["GATEHOUSE_TEST_POSTGRES_URL"]
    name = "gh_" + secrets.token_hex(6)
    conn = psycopg2.connect(admin)
    conn.autocommit = True
    with conn.cursor() as c:
        c.execute(f"CREATE DATABASE {name}")
    conn.close()
    return admin.rsplit("/", 1)[0] + "/" + name


class StoreRow(tuple):
    """A row as a tuple that also reads by column name (and `dict(row)`), on either store."""

    def __new__(cls, names, values):
        row = super().__new__(cls, values)
        row._names = list(names)
        return row

    def __getitem__(self, key):
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names.index(key))
        return tuple.__getitem__(self, key)

    def keys(self):
        return list(self._names)


class PostgresStoreConnection:
    """The few sqlite3 connection calls the tests make (`execute` with `?` parameters, rows,
    `rowcount`, commit on leaving `with`), on PostgreSQL."""

    def __init__(self, url):
        import psycopg2
        self.conn = psycopg2.connect(url)

    def execute(self, query, params=()):
        cur = self.conn.cursor()
        cur.execute(query.replace("?", "%s"), tuple(params))
        return PostgresCursor(cur)

    def commit(self):
        self.conn.commit()

    def close(self):
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, kind, *rest):
        if kind is None:
            self.conn.commit()
        else:
            self.conn.rollback()
        self.conn.close()


class PostgresCursor:
    def __init__(self, cur):
        self.cur = cur
        self.rowcount = cur.rowcount

    def _rows(self):
        if self.cur.description is None:
            return []
        names = [d[0] for d in self.cur.description]
        return [StoreRow(names, [bytes(v) if isinstance(v, memoryview) else v for v in row]) for row in self.cur.fetchall()]

    def fetchall(self):
        return self._rows()

    def fetchone(self):
        rows = self._rows()
        return rows[0] if rows else None

    def __iter__(self):
        return iter(self._rows())


def store_db(gh, path=None):
    """A connection to `gh`'s store, as an operator or a second instance sees it: sqlite3 on the
    file (rows as sqlite3.Row), or the same calls on its PostgreSQL database."""
    import sqlite3
    if path is None and getattr(gh, "store_url", None):
        return PostgresStoreConnection(gh.store_url)
    conn = sqlite3.connect(str(path or gh.data / "gatehouse.db"), timeout=10)
    conn.row_factory = lambda cur, row: StoreRow([d[0] for d in cur.description], row)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def sqlite_only(reason):
    """Marks a test of the SQLite file itself (its WAL, its disk, CGI on it)."""
    return pytest.mark.skipif(TEST_STORE != "sqlite", reason="SQLite store only: " + reason)


# Listening ports come from a range of each pass's own, below the kernel's ephemeral ports
# (32768 and up). With port 0 the two passes, which run side by side, could each be handed the same
# port between one's check and its server's bind, and any outgoing connection could hold it too:
# one pass's Gatehouse then found the other's silent test server where its nginx should be.
_PORTS = range(20000, 26000) if TEST_STORE == "sqlite" else range(26000, 32000)


def free_port() -> int:
    for _ in range(200):
        port = random.choice(_PORTS)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {_PORTS.start}–{_PORTS.stop - 1}")


class Gatehouse:
    """A running `gatehouse dev` (nginx + responder) on 127.0.0.1:<port>."""

    def __init__(self, data: Path, config: dict | None = None, env: dict | None = None):
        self.data = data
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.config_path = None
        self.env = dict(os.environ, **(env or {}))
        if TEST_STORE == "postgresql" and "GATEHOUSE_STORE_URL" not in (env or {}):
            self.env["GATEHOUSE_STORE_URL"] = new_postgres_database()
        self.store_url = self.env.get("GATEHOUSE_STORE_URL")
        if config is not None:
            self.config_path = data / "gatehouse.json"
            self.config_path.write_text(json.dumps(config, indent=2))
        self.proc = None
        self.log_path = data / "gatehouse.log"

    def command(self):
        cmd = [str(binary()), "dev", "--port", str(self.port), "--data", str(self.data)]
        if self.config_path:
            cmd += ["--config", str(self.config_path)]
        return cmd

    def start(self, timeout: float = 30.0):
        self.data.mkdir(parents=True, exist_ok=True)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.command(), stdout=subprocess.PIPE, stderr=self.log, env=self.env)
        # The deadline holds even while the process is alive and silent: the pipe's descriptor is
        # read only when select says it has bytes, so a start that hangs fails in `timeout`.
        deadline = time.time() + timeout
        fd = self.proc.stdout.fileno()
        seen = b""
        while (left := deadline - time.time()) > 0:
            if not select.select([fd], [], [], left)[0]:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
            if any(line.startswith(b"ready ") for line in seen.split(b"\n")[:-1]):
                return self
        self.stop()
        raise RuntimeError(f"gatehouse did not start (got {seen[-200:]!r}); log:\n{self.log_path.read_text()[-3000:]}")

    def stop(self, sig=signal.SIGTERM, timeout: float = 15.0) -> int:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()
        return self.proc.returncode if self.proc else 0

    def kill(self):
        """SIGKILL the whole dev process group member (responder); nginx is left to the caller."""
        self.proc.kill()
        self.proc.wait()
        pid_file = self.data / "nginx" / "nginx.pid"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text().strip()), signal.SIGQUIT)
            except (ProcessLookupError, ValueError):
                pass
            time.sleep(0.5)

    # --- HTTP helpers -------------------------------------------------------------------
    def url(self, path: str) -> str:
        return self.base + path

    def get(self, path, **kw):
        kw.setdefault("allow_redirects", False)
        return requests.get(self.url(path), timeout=10, **kw)

    def post(self, path, **kw):
        kw.setdefault("allow_redirects", False)
        return requests.post(self.url(path), timeout=10, **kw)

    def api(self, name: str, body: dict, key: str = DEFAULT_API_KEY, version: str = "v1", **kw):
        """POST /identitytoolkit.googleapis.com/v1/accounts:<name>?key=…"""
        return self.post(f"/identitytoolkit.googleapis.com/{version}/accounts:{name}", params={"key": key}, json=body, **kw)

    def admin(self, path: str, body: dict | None = None, method: str = "POST", project: str = "demo-gatehouse", **kw):
        """Admin call with `Authorization: Bearer owner` under /v1/projects/<project>…"""
        headers = kw.pop("headers", {})
        headers.setdefault("Authorization", "Bearer owner")
        url = f"/identitytoolkit.googleapis.com/v1/projects/{project}{path}"
        if method == "GET":
            return self.get(url, headers=headers, params=body, **kw)
        return requests.request(method, self.url(url), json=body, headers=headers, timeout=10, allow_redirects=False, **kw)

    def tool(self, *args, check=True) -> subprocess.CompletedProcess:
        """Runs another gatehouse command on the same data folder and config."""
        cmd = [str(binary()), *args, "--data", str(self.data)]
        if self.config_path:
            cmd += ["--config", str(self.config_path)]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, env=self.env)


@pytest.fixture(scope="module")
def gatehouse(tmp_path_factory):
    """A dev-mode Gatehouse (embedded default config) for the whole test module."""
    g = Gatehouse(tmp_path_factory.mktemp("gh")).start()
    yield g
    g.stop()


@pytest.fixture
def make_gatehouse(tmp_path_factory):
    """Factory for Gatehouse instances with a custom config/env; all stopped at test end."""
    started = []

    def make(config=None, env=None, start=True):
        g = Gatehouse(tmp_path_factory.mktemp("gh"), config=config, env=env)
        started.append(g)
        return g.start() if start else g

    yield make
    for g in started:
        g.stop()


@pytest.fixture
def output_dir(request) -> Path:
    """Per-test folder for screenshots and artefacts: test-output/<module>/<test>/."""
    d = OUTPUT / request.node.module.__name__ / request.node.name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True, exist_ok=True)
    return d


def chromium_driver(width=420, height=900, logging_prefs=None):
    """Headless Chromium through Debian's chromedriver (selenium); `logging_prefs` turns on
    DevTools logs (e.g. {"performance": "ALL"})."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}"]:
        opts.add_argument(a)
    for b in ["/usr/bin/chromium", "/usr/bin/chromium-browser"]:
        if os.path.exists(b):
            opts.binary_location = b
    if logging_prefs:
        opts.set_capability("goog:loggingPrefs", logging_prefs)
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(options=opts, service=service)


@pytest.fixture
def browser():
    d = chromium_driver()
    yield d
    d.quit()


def assert_envelope(resp, status: int, message_prefix: str):
    """Checks a Firebase error envelope (firebase-wire.md §1.5)."""
    assert resp.status_code == status, resp.text
    body = resp.json()
    err = body["error"]
    assert err["code"] == status
    assert err["message"].startswith(message_prefix), err["message"]
    assert err["errors"][0]["message"] == err["message"] or status == 401
    assert err["errors"][0]["domain"] == "global"
    return err


@contextlib.contextmanager
def admin_sdk(g, project="demo-gatehouse"):
    """A firebase-admin app in emulator mode (FIREBASE_AUTH_EMULATOR_HOST) pointed at `g`; the
    variable is restored and the app deleted afterwards."""
    import firebase_admin
    previous = os.environ.get("FIREBASE_AUTH_EMULATOR_HOST")
    os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = f"127.0.0.1:{g.port}"
    app = firebase_admin.initialize_app(options={"projectId": project}, name=f"gh-{uuid.uuid4().hex[:12]}")
    try:
        yield app
    finally:
        firebase_admin.delete_app(app)
        if previous is None:
            os.environ.pop("FIREBASE_AUTH_EMULATOR_HOST", None)
        else:
            os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = previous
